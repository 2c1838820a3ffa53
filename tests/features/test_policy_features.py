"""Step definitions for features/selection_policy.feature, run on both backends."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, scenarios, then, when
from skeleton_compressor import (
    BudgetExceededError,
    ContextFragment,
    SkeletonCompressorService,
)
from support.scenario_outcome import run_step, step_result

scenarios("selection_policy.feature")

# Step arguments are strings; these cells mean Python values.
_CELLS: dict[str, Any] = {"yes": True, "no": False, "": None, '""': "", "true": True}


def _value(cell: str) -> Any:
    if cell in _CELLS:
        return _CELLS[cell]
    for kind in (int, float):
        try:
            return kind(cell)
        except ValueError:
            pass
    return cell


def _options(text: str) -> dict[str, Any]:
    """`min_relevance=0.5, on_overflow=raise` as keyword arguments."""
    pairs = (item.strip().split("=", 1) for item in text.split(",") if item.strip())
    return {name: _value(value) for name, value in pairs}


# --- Given ---------------------------------------------------------------------------------


@given("the fragments", target_fixture="fragments")
def the_fragments(datatable: list[list[str]]) -> tuple[ContextFragment, ...]:
    header, *rows = datatable
    fragments = []
    for row in rows:
        cells = dict(zip(header, row))
        fragment = ContextFragment(cells["id"], int(cells["tokens"]), float(cells["relevance"]))
        if cells.get("required"):
            object.__setattr__(fragment, "required", _value(cells["required"]))
        if cells.get("group"):
            object.__setattr__(fragment, "group", _value(cells["group"]))
        fragments.append(fragment)
    return tuple(fragments)


@given(parsers.parse("{count:d} fragments of falling relevance"), target_fixture="fragments")
def falling(count: int) -> tuple[ContextFragment, ...]:
    return tuple(ContextFragment(f"u{i}", 10, 1.0 - i / 10) for i in range(count))


# --- When ----------------------------------------------------------------------------------


def _service(backend: str, options: dict[str, Any]) -> SkeletonCompressorService:
    return SkeletonCompressorService(backend=backend, **options)


@when(parsers.parse("I make a compressor with {options}"))
def make(outcome: dict[str, Any], backend: str, options: str) -> None:
    run_step(outcome, lambda: _service(backend, _options(options)))


@when(parsers.re(r"I compress with skeleton_budget (?P<budget>\d+)(?: and (?P<options>.+))?$"))
def compress(
    outcome: dict[str, Any],
    backend: str,
    fragments: tuple[ContextFragment, ...],
    budget: str,
    options: str | None,
) -> None:
    run_step(
        outcome, lambda: _service(backend, _options(options or "")).compress(fragments, int(budget))
    )


@when(parsers.re(r"I explain with skeleton_budget (?P<budget>\d+)(?: and (?P<options>.+))?$"))
def explain(
    outcome: dict[str, Any],
    backend: str,
    fragments: tuple[ContextFragment, ...],
    budget: str,
    options: str | None,
) -> None:
    run_step(
        outcome, lambda: _service(backend, _options(options or "")).explain(fragments, int(budget))
    )


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
        outcome, lambda: _service(backend, _options(options)).compress_many(fragments, numbers)
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


@then(parsers.re(r'the kept fragments are "(?P<kept>[^"]*)"(?P<over> over budget)?$'))
def kept_fragments(outcome: dict[str, Any], kept: str, over: str | None) -> None:
    result = step_result(outcome)
    expected = [] if kept == "nothing" else [name.strip() for name in kept.split(",")]
    assert [f.fragment_id for f in result.fragments] == expected
    assert result.metadata.over_budget is bool(over)


@then(parsers.parse("compressed tokens are {tokens:d}"))
def compressed_tokens(outcome: dict[str, Any], tokens: int) -> None:
    assert step_result(outcome).metadata.compressed_tokens == tokens


@then(parsers.parse("the kept rows are {rows}"))
def kept_rows(outcome: dict[str, Any], rows: str) -> None:
    assert list(step_result(outcome).indices) == [int(row) for row in rows.split(",")]


@then(parsers.parse('a {error} says "{message}"'))
def error_says(outcome: dict[str, Any], error: str, message: str) -> None:
    kinds = {"TypeError": TypeError, "ValueError": ValueError}
    kinds["BudgetExceededError"] = BudgetExceededError
    raised = outcome.get("error")
    assert isinstance(raised, kinds[error]), (raised, outcome.get("result"))
    assert str(raised) == message


@then(
    parsers.parse(
        'the explanation as a dict says "{fid}" was not kept for "{reason}" with {left:d} left'
    )
)
def as_dict(outcome: dict[str, Any], fid: str, reason: str, left: int) -> None:
    record = step_result(outcome).to_dict()["decisions"][fid]
    assert record == {"kept": False, "reason": reason, "rank": record["rank"], "budget_left": left}
