"""What the scenarios' step modules share: every scenario on both backends, the outcome of
its When step, and the Then steps the policy and value scenarios both use."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_bdd import parsers, then
from skeleton_compressor import BudgetExceededError
from support.scenario_outcome import step_result


@pytest.fixture(autouse=True)
def _every_backend(backend: str) -> None:
    """Puts the backend parameter on every scenario, so each runs once per backend."""


@pytest.fixture
def outcome() -> dict[str, Any]:
    return {}


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
