"""Reading Python values the way the contract, and the Rust core, read them.

Subclasses of str, int and float are read as the plain value they hold, so that their own
`__eq__`, `__hash__`, `__lt__` or `__float__` cannot make the two backends disagree.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

from . import _messages

# The largest token count, the Rust core's `MAX_TOKEN_COUNT` (an i64's).
MAX_TOKEN_COUNT = 2**63 - 1

_Integral = numbers.Integral
_Real = numbers.Real


def safe_isinstance(value: object, kind: type) -> bool:
    """isinstance() whose own failure (a `__class__` property that raises) counts as False."""
    try:
        return isinstance(value, kind)
    except Exception:
        return False


def as_real(value: object) -> float | None:
    """The value as a float (NaN where it has none, such as an int too large for one); None
    if it is not a real number (a bool is not)."""
    if type(value) is bool or not safe_isinstance(value, _Real):
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (OverflowError, ValueError):
        return math.nan


def plain_real(value: object) -> Any:
    """A real number as the value to compare its range on: the plain int or float an int or
    float (or subclass) holds, any other real number (a `Fraction`, a numpy long double)
    itself, compared exactly by its own type. A bool stays a bool, for the caller to refuse
    as a number."""
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__index__(value)
    return value


def as_int(value: object) -> int | None:
    """The value of an int (bool excluded, numpy integers included); None if it is not one.

    Raises only when `__index__` of an Integral raises; the caller words that error.
    """
    kind = type(value)
    if kind is int:
        return value  # type: ignore[return-value]
    if kind is bool:
        return None
    if issubclass(kind, int):
        return int.__index__(value)  # type: ignore[arg-type]
    if safe_isinstance(value, _Integral):
        # Python 3.9's operator.index may return an int subclass, whose own comparisons
        # could lie; int.__index__ gives the plain int it holds.
        return int.__index__(operator.index(value))  # type: ignore[arg-type]
    return None


def checked_budget(budget: object) -> int:
    """skeleton_budget as a plain int >= 0, or the contract's TypeError / ValueError."""
    try:
        value = as_int(budget)
    except Exception as error:
        raise _messages.budget_type_error(budget) from error
    if value is None:
        raise _messages.budget_type_error(budget)
    if value < 0:
        raise _messages.budget_negative_error(value)
    return value


def plain_str(value: object) -> str | None:
    """The plain str a str (or subclass) holds; None for anything else."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[return-value]
    if issubclass(kind, str):
        return str.__str__(value)
    return None


def fragment_id(value: object, index: int, container: str) -> str:
    text = plain_str(value)
    if text is None:
        raise _messages.fragment_error("id_type", index, None, value, container)
    if not text:
        raise _messages.fragment_error("id_empty", index, None, value, container)
    return text


def token_count(value: object, index: int, fid: str | None, container: str) -> int:
    try:
        count = as_int(value)
    except Exception as error:
        raise _messages.fragment_error("token_type", index, fid, value, container) from error
    if count is None:
        raise _messages.fragment_error("token_type", index, fid, value, container)
    if count < 0:
        raise _messages.fragment_error("token_negative", index, fid, value, container)
    if count > MAX_TOKEN_COUNT:
        raise _messages.fragment_error("token_too_large", index, fid, value, container)
    return count


def relevance(value: object, index: int, fid: str, container: str) -> float:
    kind = type(value)
    if issubclass(kind, float):
        score = float.__float__(value)  # type: ignore[arg-type]
    elif kind is bool:
        raise _messages.fragment_error("relevance_type", index, fid, value, container)
    elif issubclass(kind, int):
        if int.__index__(value) not in (0, 1):  # type: ignore[arg-type]
            raise _messages.fragment_error("relevance_range", index, fid, value, container)
        score = float(int.__index__(value))  # type: ignore[arg-type]
    elif safe_isinstance(value, _Real):
        try:
            score = float(value)  # type: ignore[arg-type]
        except OverflowError as error:
            raise _messages.fragment_error(
                "relevance_range", index, fid, value, container
            ) from error
        except Exception as error:
            raise _messages.fragment_error(
                "relevance_type", index, fid, value, container
            ) from error
    else:
        raise _messages.fragment_error("relevance_type", index, fid, value, container)
    if not 0.0 <= score <= 1.0:
        raise _messages.fragment_error("relevance_range", index, fid, value, container)
    return score


def plain_token_counts(values: list[Any]) -> list[int] | None:
    """`values` itself when every one is a plain int `token_count` accepts (read at C speed);
    None when any needs reading one by one."""
    if set(map(type, values)) == {int} and min(values) >= 0 and max(values) <= MAX_TOKEN_COUNT:
        return values
    return None


def plain_relevances(values: list[Any]) -> list[float] | None:
    """`values` itself when every one is a plain float `relevance` accepts; None when any
    needs reading one by one. A NaN makes the sum NaN, which equals nothing."""
    if set(map(type, values)) != {float}:
        return None
    total = sum(values)
    if total == total and min(values) >= 0.0 and max(values) <= 1.0:
        return values
    return None


def _is_numpy_bool(value: object) -> bool:
    kind = type(value)
    return kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool")


def required(value: object, index: int, fid: str, container: str) -> bool:
    if value is True or value is False:
        return value
    if _is_numpy_bool(value):
        return bool(value)
    raise _messages.fragment_error("required_type", index, fid, value, container)


def group(value: object, index: int, fid: str, container: str) -> str | None:
    if value is None:
        return None
    name = plain_str(value)
    if name is None:
        raise _messages.fragment_error("group_type", index, fid, value, container)
    if not name:
        raise _messages.fragment_error("group_empty", index, fid, value, container)
    return name


def variant_of(value: object, index: int, fid: str, container: str) -> str | None:
    if value is None:
        return None
    name = plain_str(value)
    if name is None:
        raise _messages.fragment_error("variant_type", index, fid, value, container)
    if not name:
        raise _messages.fragment_error("variant_empty", index, fid, value, container)
    return name
