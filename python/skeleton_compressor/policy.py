"""The selection policy beyond the strategy, checked once when a compressor is made."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, cast

from ._messages import describe
from ._values import as_real, plain_str

if TYPE_CHECKING:
    from .types import OnOverflowName, OrderName

__all__ = ["ON_OVERFLOW", "ORDERS", "Policy", "checked_policy"]

ON_OVERFLOW = ("keep_top", "strict", "raise")
ORDERS = ("ranking", "input", "edges")


class Policy(NamedTuple):
    """`min_relevance`: units below it are kept only when required. `on_overflow`: what to
    do when the budget cannot be met. `order`: the order of the kept fragments."""

    min_relevance: float = 0.0
    on_overflow: OnOverflowName = "keep_top"
    order: OrderName = "ranking"


def _floor(value: object) -> float:
    floor = as_real(value)
    if floor is None:
        raise TypeError(f"min_relevance must be a real number, got {type(value).__name__}")
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"min_relevance must be in [0, 1], got {describe(value)}")
    return floor + 0.0  # -0.0 is the floor 0.0


def _one_of(name: str, value: object, choices: tuple[str, ...]) -> str:
    # The plain str a subclass holds, so that its own `__eq__` cannot pass for a choice.
    text = plain_str(value)
    if text not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {describe(value)}")
    return text


def checked_policy(min_relevance: object, on_overflow: object, order: object) -> Policy:
    return Policy(
        _floor(min_relevance),
        cast("OnOverflowName", _one_of("on_overflow", on_overflow, ON_OVERFLOW)),
        cast("OrderName", _one_of("order", order, ORDERS)),
    )
