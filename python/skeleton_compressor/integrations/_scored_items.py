"""What the LlamaIndex and Haystack adapters share: the `missing_score` option, and the
error for an item of the right type that the packer cannot use."""

from __future__ import annotations

import numbers

from .. import _messages
from .._values import plain_str, safe_isinstance
from ..errors import FragmentTypeError

__all__ = ["MISSING_SCORE_REMEDY", "RAISE", "checked_missing_score", "unusable_item_error"]

RAISE = "raise"
MISSING_SCORE_REMEDY = "give missing_score= a number in [0, 1] to score such items"
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


def unusable_item_error(
    container: str, index: int, item_id: str | None, detail: str
) -> FragmentTypeError:
    """`<container>[i] (id ...) <detail>` for an item of the right type the packer cannot
    use (kind `not_fragment`)."""
    return _messages._error(FragmentTypeError, "not_fragment", index, item_id, container, detail)
