"""What the scenarios' step modules share: every scenario on both backends, the outcome of
its When step, and the steps the policy and value scenarios both use."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when
from skeleton_compressor import (
    BudgetExceededError,
    ContextFragment,
    SkeletonCompressorService,
    SkeletonExplanation,
    SkeletonResult,
)
from support.scenario_cells import fragments_of, options_of
from support.scenario_outcome import run_step, step_result


@pytest.fixture(autouse=True)
def _every_backend(backend: str) -> None:
    """Puts the backend parameter on every scenario, so each runs once per backend."""


@pytest.fixture
def outcome() -> dict[str, Any]:
    return {}


@given("the fragments", target_fixture="fragments")
def the_fragments(datatable: list[list[str]]) -> tuple[ContextFragment, ...]:
    return fragments_of(datatable)


@when(
    parsers.re(
        r"I (?P<verb>compress|explain) with skeleton_budget (?P<budget>\d+)"
        r"(?: and (?P<options>.+))?$"
    )
)
def compress_or_explain(
    outcome: dict[str, Any],
    backend: str,
    fragments: tuple[ContextFragment, ...],
    verb: str,
    budget: str,
    options: str | None,
) -> None:
    service = SkeletonCompressorService(backend=backend, **options_of(options or ""))
    method = service.compress if verb == "compress" else service.explain
    run_step(outcome, lambda: method(fragments, int(budget)))


def _compressed(outcome: dict[str, Any]) -> SkeletonResult:
    """The result of the When step's compression, or of its explanation."""
    result = step_result(outcome)
    return result.result if isinstance(result, SkeletonExplanation) else result


@then(parsers.re(r'the kept fragments are "(?P<kept>[^"]*)"(?P<over> over budget)?$'))
def kept_fragments(outcome: dict[str, Any], kept: str, over: str | None) -> None:
    result = _compressed(outcome)
    expected = [] if kept == "nothing" else [name.strip() for name in kept.split(",")]
    assert [f.fragment_id for f in result.fragments] == expected
    assert result.metadata.over_budget is bool(over)


@then(parsers.parse("compressed tokens are {tokens:d}"))
def compressed_tokens(outcome: dict[str, Any], tokens: int) -> None:
    assert _compressed(outcome).metadata.compressed_tokens == tokens


@then(parsers.parse("a BudgetExceededError needs {needed:d} tokens of {budget:d}"))
def budget_exceeded(outcome: dict[str, Any], needed: int, budget: int) -> None:
    raised = outcome.get("error")
    assert isinstance(raised, BudgetExceededError), (raised, outcome.get("result"))
    assert (raised.needed_tokens, raised.skeleton_budget) == (needed, budget)
    assert str(raised).endswith(f"needs {needed} tokens, skeleton_budget is {budget}")


@then("the decisions are")
def decisions(outcome: dict[str, Any], datatable: list[list[str]]) -> None:
    header, *rows = datatable
    expected = [dict(zip(header, row)) for row in rows]
    got = [
        {
            "id": d.fragment.fragment_id,
            "kept": "yes" if d.kept else "no",
            "reason": d.reason,
            "rank": str(d.rank),
            "budget_left": "" if d.budget_left is None else str(d.budget_left),
        }
        for d in step_result(outcome).decisions
    ]
    assert got == expected


@then(parsers.parse('a {error} says "{message}"'))
def error_says(outcome: dict[str, Any], error: str, message: str) -> None:
    kinds = {"TypeError": TypeError, "ValueError": ValueError}
    kinds["BudgetExceededError"] = BudgetExceededError
    raised = outcome.get("error")
    assert isinstance(raised, kinds[error]), (raised, outcome.get("result"))
    assert str(raised) == message


@then(parsers.parse("the kept rows are {rows}"))
def kept_rows(outcome: dict[str, Any], rows: str) -> None:
    assert list(step_result(outcome).indices) == [int(row) for row in rows.split(",")]


@then(parsers.parse("the value kept is {kept:g} of at most {bound:g}"))
def value_kept(outcome: dict[str, Any], kept: float, bound: float) -> None:
    metadata = _compressed(outcome).metadata
    assert (metadata.value_kept, metadata.value_bound) == (kept, bound)
