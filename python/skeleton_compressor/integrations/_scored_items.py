"""What the LlamaIndex and Haystack adapters share: the `missing_score` option, and the
errors for an item that is not the framework's object or has no score."""

from __future__ import annotations

import numbers

from .. import _messages
from .._values import plain_str, safe_isinstance
from ..errors import FragmentTypeError

__all__ = [
    "RAISE",
    "checked_missing_score",
    "not_item_error",
    "unscored_error",
    "unusable_item_error",
]

RAISE = "raise"
_EXPECTED = "missing_score must be 'raise' or a real number in [0, 1]"


def checked_missing_score(value: object) -> float | None:
    """The relevance given to items without a score: None for `"raise"` (such an item is an
    error), else a real number in [0, 1] as a float."""
    text = plain_str(value)
    if text == RAISE:
        return None
    if text is not None:
        raise ValueError(f"{_EXPECTED}, got {_messages.describe(value)}")
    if type(value) is bool or not safe_isinstance(value, numbers.Real):
        raise TypeError(f"{_EXPECTED}, got {_messages.describe(value)} ({type(value).__name__})")
    try:
        score = float(value)  # type: ignore[arg-type]
    except (OverflowError, ValueError):
        score = float("nan")
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"{_EXPECTED}, got {_messages.describe(value)}")
    return score + 0.0  # -0.0 scores as 0.0


def not_item_error(container: str, index: int, item: object, expected: str) -> FragmentTypeError:
    """`<container>[i] must be <expected>, got ...` (kind `not_fragment`)."""
    detail = f"must be {expected}, got {_messages.describe(item)} ({type(item).__name__})"
    return _messages._error(FragmentTypeError, "not_fragment", index, None, container, detail)


def unusable_item_error(
    container: str, index: int, item_id: str | None, detail: str
) -> FragmentTypeError:
    """`<container>[i] (id ...) <detail>` for an item of the right type the packer cannot
    use (kind `not_fragment`)."""
    return _messages._error(FragmentTypeError, "not_fragment", index, item_id, container, detail)


def unscored_error(
    container: str, index: int, item_id: str | None, field: str
) -> FragmentTypeError:
    """An item whose score is None while `missing_score="raise"` (kind `relevance_type`)."""
    detail = (
        f"no relevance score: {field} is None (give missing_score= a number in [0, 1] to "
        f"score such items)"
    )
    return _messages._error(FragmentTypeError, "relevance_type", index, item_id, container, detail)
