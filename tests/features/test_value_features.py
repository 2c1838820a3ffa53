"""Step definitions for features/value_strategies.feature, run on both backends."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_bdd import given, parsers, scenarios, then, when
from skeleton_compressor import BudgetExceededError, ContextFragment, SkeletonCompressorService

scenarios("value_strategies.feature")


@pytest.fixture(autouse=True)
def _every_backend(backend: str) -> None:
    """Puts the backend parameter on every scenario, so each runs once per backend."""


@pytest.fixture
def outcome() -> dict[str, Any]:
    return {}


def _options(text: str) -> dict[str, Any]:
    """`strategy=optimal, min_relevance=0.1` as keyword arguments."""
    options: dict[str, Any] = {}
    for item in text.split(","):
        if item.strip():
            name, value = (part.strip() for part in item.split("=", 1))
            options[name] = float(value) if name == "min_relevance" else value
    return options


def _run(outcome: dict[str, Any], action: Any) -> None:
    try:
        outcome["result"] = action()
    except Exception as error:  # the Then steps inspect it
        outcome["error"] = error


def _result(outcome: dict[str, Any]) -> Any:
    assert "error" not in outcome, outcome["error"]
    return outcome["result"]


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
    _run(outcome, lambda: service.compress(fragments, int(budget)))


@when(parsers.re(r"I explain with skeleton_budget (?P<budget>\d+) and (?P<options>.+)$"))
def explain(
    outcome: dict[str, Any],
    backend: str,
    fragments: tuple[ContextFragment, ...],
    budget: str,
    options: str,
) -> None:
    service = SkeletonCompressorService(backend=backend, **_options(options))
    _run(outcome, lambda: service.explain(fragments, int(budget)))


# --- Then ----------------------------------------------------------------------------------


@then(parsers.re(r'the kept fragments are "(?P<kept>[^"]*)"(?P<over> over budget)?$'))
def kept_fragments(outcome: dict[str, Any], kept: str, over: str | None) -> None:
    result = _result(outcome)
    expected = [] if kept == "nothing" else [name.strip() for name in kept.split(",")]
    assert [f.fragment_id for f in result.fragments] == expected
    assert result.metadata.over_budget is bool(over)


@then(parsers.parse("compressed tokens are {tokens:d}"))
def compressed_tokens(outcome: dict[str, Any], tokens: int) -> None:
    assert _result(outcome).metadata.compressed_tokens == tokens


@then(parsers.parse("the value kept is {kept:g} of at most {bound:g}"))
def value_kept(outcome: dict[str, Any], kept: float, bound: float) -> None:
    metadata = _result(outcome).metadata
    assert (metadata.value_kept, metadata.value_bound) == (kept, bound)


@then(parsers.parse("the metadata as a dict has value_kept {kept:g} and value_bound {bound:g}"))
def metadata_dict(outcome: dict[str, Any], kept: float, bound: float) -> None:
    as_dict = _result(outcome).metadata.to_dict()
    assert (as_dict["value_kept"], as_dict["value_bound"]) == (kept, bound)
    assert as_dict["over_budget"] is False


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
        for d in _result(outcome).decisions
    ]
    assert got == expected
