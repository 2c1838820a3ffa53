"""Argument checks done once in Python, before either backend sees the input."""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

from . import _messages
from ._values import checked_budget
from .types import ContextFragment

__all__ = ["checked_budget", "checked_budgets", "checked_columns", "checked_fragments"]

_BUFFER_FORMATS = frozenset("bBhHiIlLqQnNfd")
_BYTE_ORDERS = "@=<>!"
_SWAPPED_ORDERS = ">!" if sys.byteorder == "little" else "<"
# The native type code of each kind and size, for viewing a buffer with standard sizes
# ("<i", ">q") as native values.
_NATIVE_CODES = {
    **{("signed", array(code).itemsize): code for code in "bhiq"},
    **{("unsigned", array(code).itemsize): code for code in "BHIQ"},
    **{("float", array(code).itemsize): code for code in "fd"},
}


def checked_fragments(fragments: object) -> tuple[ContextFragment, ...]:
    """The fragments as a plain tuple; a tuple subclass is read as the items it stores."""
    if type(fragments) is tuple:
        return fragments
    if isinstance(fragments, tuple):
        return tuple(tuple.__iter__(fragments))
    raise _messages.fragments_type_error(fragments)


def checked_budgets(skeleton_budgets: Iterable[object]) -> list[int]:
    if isinstance(skeleton_budgets, (str, bytes)) or not isinstance(skeleton_budgets, Iterable):
        raise TypeError(
            f"skeleton_budgets must be an iterable of int, got {type(skeleton_budgets).__name__}"
        )
    return [checked_budget(budget) for budget in skeleton_budgets]


def _numeric_column(column: object, name: str) -> list[object] | tuple[object, ...] | memoryview:
    if isinstance(column, (list, tuple)):
        return column
    try:
        view = memoryview(column)  # type: ignore[arg-type]
    except TypeError:
        if isinstance(column, Iterable) and not isinstance(column, (str, bytes)):
            return list(column)
        raise TypeError(
            f"{name} must be a sequence of numbers or a numeric buffer, got {type(column).__name__}"
        ) from None
    order, code = (
        (view.format[0], view.format[1:]) if view.format[:1] in _BYTE_ORDERS else ("@", view.format)
    )
    if view.ndim != 1 or code not in _BUFFER_FORMATS:
        raise TypeError(
            f"{name} must be a one-dimensional buffer of integers or floats, "
            f"got format {view.format!r} with {view.ndim} dimension(s)"
        )
    # Both backends read a contiguous view whose format is one native type code.
    kind = "float" if code in "fd" else "unsigned" if code.isupper() else "signed"
    native = code if order == "@" else _NATIVE_CODES[(kind, view.itemsize)]
    flat = view.cast("B") if view.c_contiguous else memoryview(view.tobytes())
    if order in _SWAPPED_ORDERS:
        swapped = array(native, flat.tobytes())
        swapped.byteswap()
        return memoryview(swapped)
    return flat.cast(native)  # type: ignore[call-overload,no-any-return]


def checked_columns(
    fragment_ids: Sequence[str], token_counts: Any, relevance_scores: Any
) -> tuple[list[object] | tuple[object, ...], Any, Any]:
    """The three columns in forms both backends read, after checking they are one length."""
    if isinstance(fragment_ids, (list, tuple)):
        ids: list[object] | tuple[object, ...] = fragment_ids
    elif isinstance(fragment_ids, Iterable) and not isinstance(fragment_ids, (str, bytes)):
        ids = list(fragment_ids)
    else:
        raise TypeError(
            f"fragment_ids must be a sequence of str, got {type(fragment_ids).__name__}"
        )
    tokens = _numeric_column(token_counts, "token_counts")
    scores = _numeric_column(relevance_scores, "relevance_scores")
    lengths = (len(ids), len(tokens), len(scores))
    if len(set(lengths)) != 1:
        raise ValueError(
            "fragment_ids, token_counts and relevance_scores must have one length, got "
            f"{lengths[0]}, {lengths[1]} and {lengths[2]}"
        )
    return ids, tokens, scores
