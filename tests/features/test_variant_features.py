"""Step definitions for features/variants.feature, run on both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_bdd import given, parsers, scenarios, then, when
from skeleton_compressor import ContextFragment, Plan, SkeletonCompressorService
from support.cli_runner import run_cli
from support.scenario_cells import fragments_of
from support.scenario_outcome import run_step, step_result

scenarios("variants.feature")

# --- Given ---------------------------------------------------------------------------------


@given(parsers.parse('the renderings of "{base_id}" counted in words'), target_fixture="fragments")
def renderings(base_id: str, datatable: list[list[str]]) -> tuple[ContextFragment, ...]:
    _, *rows = datatable
    triples = [(suffix, content, float(relevance)) for suffix, content, relevance in rows]
    return ContextFragment.variants(base_id, triples, counter=lambda text: len(text.split()))


# --- When ----------------------------------------------------------------------------------


@when(
    parsers.parse(
        "I compress the fragments as columns with variants and skeleton_budget {budget:d}"
    )
)
def compress_columns(
    outcome: dict[str, Any], backend: str, fragments: tuple[ContextFragment, ...], budget: int
) -> None:
    run_step(
        outcome,
        lambda: SkeletonCompressorService(backend=backend).compress_arrays(
            [f.fragment_id for f in fragments],
            [f.token_count for f in fragments],
            [f.relevance_score for f in fragments],
            budget,
            variants=[f.variant_of for f in fragments],
        ),
    )


def _record(fragment: ContextFragment) -> str:
    fields: dict[str, Any] = {
        "fragment_id": fragment.fragment_id,
        "token_count": fragment.token_count,
        "relevance_score": fragment.relevance_score,
    }
    if fragment.variant_of is not None:
        # Written first, with odd spacing: the kept records must come back as written.
        return f'{{ "variant_of" :{json.dumps(fragment.variant_of)}, {json.dumps(fields)[1:]}'
    return json.dumps(fields)


@when(
    parsers.parse("I run the command line on the fragments as JSON Lines with --budget {budget:d}")
)
def run_command_line(
    outcome: dict[str, Any],
    backend: str,
    fragments: tuple[ContextFragment, ...],
    budget: int,
    tmp_path: Path,
) -> None:
    records = {fragment.fragment_id: _record(fragment) for fragment in fragments}
    path = tmp_path / "context.jsonl"
    path.write_text("\n".join(records.values()) + "\n")
    outcome["records"] = records
    outcome["result"] = run_cli(
        "compress", str(path), "--budget", str(budget), "--backend", backend
    )


@when(
    parsers.parse("a plan with these fragments spawns a subplan with skeleton_budget {budget:d}"),
    target_fixture="subplan",
)
def spawn(backend: str, fragments: tuple[ContextFragment, ...], budget: int) -> Plan:
    parent = Plan("parent", "fix the billing bug", context=fragments)
    return parent.spawn_subplan(
        "child", "read the webhook", budget, compressor=SkeletonCompressorService(backend=backend)
    )


# --- Then ----------------------------------------------------------------------------------


@then(parsers.parse('the command line prints the records of "{kept}" as they were written'))
def printed_records(outcome: dict[str, Any], kept: str) -> None:
    completed = step_result(outcome)
    assert completed.returncode == 0, completed
    records = outcome["records"]
    written = ", ".join(records[name.strip()] for name in kept.split(","))
    assert completed.stdout.decode().startswith('{"fragments": [' + written + "], ")


@then(parsers.parse('the subplan\'s context is "{kept}"'))
def subplan_context(subplan: Plan, kept: str) -> None:
    assert [f.fragment_id for f in subplan.context] == [name.strip() for name in kept.split(",")]
    assert subplan.parent_id == "parent"
    assert subplan.skeleton_metadata is not None
    assert subplan.skeleton_metadata.compressed_tokens == sum(
        f.token_count for f in subplan.context
    )


@then(
    parsers.parse(
        'the subplan\'s context as a dict has variant_of "{variant_of}" for "{fragment_id}" only'
    )
)
def subplan_dict(subplan: Plan, variant_of: str, fragment_id: str) -> None:
    context = subplan.to_cli_dict()["context"]
    assert {item["fragment_id"]: item.get("variant_of") for item in context} == {
        f.fragment_id: variant_of if f.fragment_id == fragment_id else None for f in subplan.context
    }


@then("the fragments made are")
def fragments_made(fragments: tuple[ContextFragment, ...], datatable: list[list[str]]) -> None:
    def fields(fragment: ContextFragment) -> tuple[object, ...]:
        return (
            fragment.fragment_id,
            fragment.token_count,
            fragment.relevance_score,
            fragment.required,
            fragment.group,
            fragment.variant_of,
        )

    assert list(map(fields, fragments)) == list(map(fields, fragments_of(datatable)))
