"""Step definitions for features/value_strategies.feature, run on both backends."""

from __future__ import annotations

from typing import Any

from pytest_bdd import parsers, scenarios, then
from support.scenario_outcome import step_result

scenarios("value_strategies.feature")


# --- Then ----------------------------------------------------------------------------------


@then(parsers.parse("the metadata as a dict has value_kept {kept:g} and value_bound {bound:g}"))
def metadata_dict(outcome: dict[str, Any], kept: float, bound: float) -> None:
    as_dict = step_result(outcome).metadata.to_dict()
    assert (as_dict["value_kept"], as_dict["value_bound"]) == (kept, bound)
    assert as_dict["over_budget"] is False
