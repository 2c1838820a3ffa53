"""Step definitions for features/selection_policy.feature, run on both backends."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, scenarios, then, when
from skeleton_compressor import (
    ContextFragment,
    SkeletonCompressorService,
)
from support.scenario_cells import options_of
from support.scenario_outcome import run_step, step_result

scenarios("selection_policy.feature")

# --- Given ---------------------------------------------------------------------------------


@given(parsers.parse("{count:d} fragments of falling relevance"), target_fixture="fragments")
def falling(count: int) -> tuple[ContextFragment, ...]:
    return tuple(ContextFragment(f"u{i}", 10, 1.0 - i / 10) for i in range(count))


# --- When ----------------------------------------------------------------------------------


def _service(backend: str, options: dict[str, Any]) -> SkeletonCompressorService:
    return SkeletonCompressorService(backend=backend, **options)


@when(parsers.parse("I make a compressor with {options}"))
def make(outcome: dict[str, Any], backend: str, options: str) -> None:
    run_step(outcome, lambda: _service(backend, options_of(options)))


@when(parsers.parse("I compress_many with skeleton_budgets {budgets} and {options}"))
def compress_many(
    outcome: dict[str, Any],
    backend: str,
    fragments: tuple[ContextFragment, ...],
    budgets: str,
    options: str,
) -> None:
    numbers = [int(b) for b in budgets.split(",")]
    run_step(
        outcome, lambda: _service(backend, options_of(options)).compress_many(fragments, numbers)
    )


@when(parsers.parse("I compress the fragments as columns with skeleton_budget {budget:d}"))
def compress_columns(
    outcome: dict[str, Any], backend: str, fragments: tuple[ContextFragment, ...], budget: int
) -> None:
    run_step(
        outcome,
        lambda: _service(backend, {}).compress_arrays(
            [f.fragment_id for f in fragments],
            [f.token_count for f in fragments],
            [f.relevance_score for f in fragments],
            budget,
            required=[f.required for f in fragments],
            groups=[f.group for f in fragments],
        ),
    )


# --- Then ----------------------------------------------------------------------------------


@then(
    parsers.parse(
        'the explanation as a dict says "{fid}" was not kept for "{reason}" with {left:d} left'
    )
)
def as_dict(outcome: dict[str, Any], fid: str, reason: str, left: int) -> None:
    record = step_result(outcome).to_dict()["decisions"][fid]
    assert record == {"kept": False, "reason": reason, "rank": record["rank"], "budget_left": left}
