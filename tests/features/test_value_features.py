"""Step definitions for features/value_strategies.feature, run on both backends."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, scenarios, then, when
from skeleton_compressor import ContextFragment, SkeletonCompressorService
from support.scenario_outcome import run_step, step_result

scenarios("value_strategies.feature")


def _options(text: str) -> dict[str, Any]:
    """`strategy=optimal, min_relevance=0.1` as keyword arguments."""
    options: dict[str, Any] = {}
    for item in text.split(","):
        if item.strip():
            name, value = (part.strip() for part in item.split("=", 1))
            options[name] = float(value) if name == "min_relevance" else value
    return options


# --- Given ---------------------------------------------------------------------------------


@given("the fragments", target_fixture="fragments")
def the_fragments(datatable: list[list[str]]) -> tuple[ContextFragment, ...]:
    header, *rows = datatable
    fragments = []
    for row in rows:
        cells = dict(zip(header, row))
        fragments.append(
            ContextFragment(
                cells["id"],
                int(cells["tokens"]),
                float(cells["relevance"]),
                required=cells.get("required") == "yes",
            )
        )
    return tuple(fragments)


# --- When ----------------------------------------------------------------------------------


@when(parsers.re(r"I compress with skeleton_budget (?P<budget>\d+) and (?P<options>.+)$"))
def compress(
    outcome: dict[str, Any],
    backend: str,
    fragments: tuple[ContextFragment, ...],
    budget: str,
    options: str,
) -> None:
    service = SkeletonCompressorService(backend=backend, **_options(options))
    run_step(outcome, lambda: service.compress(fragments, int(budget)))


@when(parsers.re(r"I explain with skeleton_budget (?P<budget>\d+) and (?P<options>.+)$"))
def explain(
    outcome: dict[str, Any],
    backend: str,
    fragments: tuple[ContextFragment, ...],
    budget: str,
    options: str,
) -> None:
    service = SkeletonCompressorService(backend=backend, **_options(options))
    run_step(outcome, lambda: service.explain(fragments, int(budget)))


# --- Then ----------------------------------------------------------------------------------


@then(parsers.re(r'the kept fragments are "(?P<kept>[^"]*)"(?P<over> over budget)?$'))
def kept_fragments(outcome: dict[str, Any], kept: str, over: str | None) -> None:
    result = step_result(outcome)
    expected = [] if kept == "nothing" else [name.strip() for name in kept.split(",")]
    assert [f.fragment_id for f in result.fragments] == expected
    assert result.metadata.over_budget is bool(over)


@then(parsers.parse("compressed tokens are {tokens:d}"))
def compressed_tokens(outcome: dict[str, Any], tokens: int) -> None:
    assert step_result(outcome).metadata.compressed_tokens == tokens


@then(parsers.parse("the value kept is {kept:g} of at most {bound:g}"))
def value_kept(outcome: dict[str, Any], kept: float, bound: float) -> None:
    metadata = step_result(outcome).metadata
    assert (metadata.value_kept, metadata.value_bound) == (kept, bound)


@then(parsers.parse("the metadata as a dict has value_kept {kept:g} and value_bound {bound:g}"))
def metadata_dict(outcome: dict[str, Any], kept: float, bound: float) -> None:
    as_dict = step_result(outcome).metadata.to_dict()
    assert (as_dict["value_kept"], as_dict["value_bound"]) == (kept, bound)
    assert as_dict["over_budget"] is False
