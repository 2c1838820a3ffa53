"""What a When step did, for the Then steps of the scenarios to inspect."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["run_step", "step_result"]


def run_step(outcome: dict[str, Any], action: Callable[[], Any]) -> None:
    """Runs `action`, keeping its result or the exception it raised in `outcome`."""
    try:
        outcome["result"] = action()
    except Exception as error:  # the Then steps inspect it
        outcome["error"] = error


def step_result(outcome: dict[str, Any]) -> Any:
    assert "error" not in outcome, outcome["error"]
    return outcome["result"]
