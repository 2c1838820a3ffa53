"""Argument checks done once in Python, before either backend sees the input."""

from __future__ import annotations

import math
import operator
import struct
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, SupportsIndex, Union, cast

from . import _messages
from ._values import as_int, as_real, checked_budget, plain_real
from .types import ContextFragment

__all__ = [
    "DEFAULT_MAX_WORK",
    "checked_budget",
    "checked_budgets",
    "checked_columns",
    "checked_fragments",
    "checked_max_work",
    "checked_previous",
    "checked_previous_rows",
    "checked_share",
]

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


# `optimal`'s work limit by default: about a second and well under 256 MiB on one core, on
# either backend, on any input (docs/performance.md).
DEFAULT_MAX_WORK = 1 << 26
# The most work a backend counts: a limit at or above it is no limit that could be reached.
_MOST_WORK = (1 << 64) - 1


def checked_max_work(max_work: object) -> int | None:
    """`max_work` as a plain int >= 1, or None for no limit."""
    if max_work is None:
        return None
    try:
        value = as_int(max_work)
    except Exception as error:
        raise TypeError(
            f"max_work must be an int or None, got {type(max_work).__name__}"
        ) from error
    if value is None:
        raise TypeError(f"max_work must be an int or None, got {type(max_work).__name__}")
    if value < 1:
        raise ValueError(f"max_work must be >= 1 or None, got {value}")
    return min(value, _MOST_WORK)


def checked_share(value: object, name: str) -> float:
    """A share of something (`max_value_loss`, `headroom`): a real number in [0, 1), as the
    float whose exact value the rules then use."""
    if type(value) is float and 0.0 <= value < 1.0:
        return value
    if as_real(value) is None:
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    # The number's own range, not its float's: a Fraction just below 1 may round to 1.0,
    # one just below 0 to -0.0.
    plain = plain_real(value)
    if 0 <= plain < 1:
        number = min(float(plain) + 0.0, _BELOW_ONE)
        if 0.0 <= number < 1.0:  # as a real number of another type says
            return number
    raise ValueError(f"{name} must be in [0, 1), got {_messages.describe(value)}")


_BELOW_ONE = math.nextafter(1.0, 0.0)


def checked_previous(previous: object) -> tuple[ContextFragment, ...]:
    """What an earlier call returned, as a plain tuple of fragments. The items' types are
    read once, as a set: a loop in Python per item would cost as much as a small call."""
    if type(previous) is tuple:
        items: tuple[object, ...] = previous
    elif isinstance(previous, (list, tuple)):
        items = tuple(_stored_items(previous))
    else:
        raise TypeError(
            "previous must be None or a tuple or list of ContextFragment, got "
            f"{type(previous).__name__}"
        )
    if not all(issubclass(kind, ContextFragment) for kind in set(map(type, items))):
        for index, item in enumerate(items):
            if not isinstance(item, ContextFragment):
                raise TypeError(
                    f"previous[{index}] must be a ContextFragment, got {type(item).__name__}"
                )
    return items  # type: ignore[return-value]


def checked_previous_rows(previous: object, columns: Columns) -> list[int]:
    """Row numbers an earlier call of `compress_arrays` kept, as ints, each a row of this
    call's `columns`. A set or a mapping is refused: its order is not the order sent.

    The rows' own code (an `__index__`) runs first; the rows are then checked against the
    columns as they are, as the backends read them, and a row outside them is named after
    the backends' error for columns of different lengths. The first bad row is named."""
    if isinstance(previous, (str, bytes, AbstractSet, Mapping)) or not isinstance(
        previous, Iterable
    ):
        raise _previous_rows_form_error(previous)
    if isinstance(previous, (list, tuple)):
        items = iter(_stored_items(previous))
    else:
        try:
            items = iter(previous)
        except TypeError:  # a numpy array of no dimensions
            raise _previous_rows_form_error(previous) from None
    kept: list[int] = []
    not_a_row = None
    for index, row in enumerate(items):
        number = _row_number(row)
        if number is None:
            not_a_row = TypeError(
                f"previous[{index}] must be a row number (an int), got {_messages.describe(row)}"
            )
            break
        kept.append(number)
    rows = len(columns[0])
    for index, number in enumerate(kept):
        if not 0 <= number < rows:
            # Where the columns differ in length, "a row of this call" has no meaning.
            _check_one_length(columns)
            among = f"0 to {rows - 1}" if rows else "it has none"
            raise ValueError(
                f"previous[{index}] must be a row of this call ({among}), got {number}"
            )
    if not_a_row is not None:
        raise not_a_row
    return kept


def _previous_rows_form_error(previous: object) -> TypeError:
    return TypeError(
        f"previous must be None or a sequence of row numbers, got {_messages.form_name(previous)}"
    )


def _row_number(row: object) -> int | None:
    if type(row) is int:
        return row
    if isinstance(row, bool) or not hasattr(type(row), "__index__"):
        return None
    try:
        # Python 3.9's operator.index may return an int subclass, whose own comparisons
        # could lie; int.__index__ gives the plain int it holds.
        return int.__index__(operator.index(cast(SupportsIndex, row)))
    except TypeError:  # a numpy array of more than one value
        return None


def _check_one_length(columns: Columns) -> None:
    lengths = [None if column is None else len(column) for column in columns]
    if len({length for length in lengths if length is not None}) > 1:
        raise _messages.column_lengths_error(*lengths)


_TEXT_OR_UNORDERED = (str, bytes, *_messages.UNORDERED)


def _iterated(value: object) -> Iterator[object] | None:
    """An iterator over `value`, a non-text iterable with an order of its own; None for
    anything else (a set: a set of str iterates in an order that changes with the hash seed),
    and for what is iterable by its type but not as it is (a numpy array of 0 dimensions)."""
    if not isinstance(value, Iterable) or isinstance(value, _TEXT_OR_UNORDERED):
        return None
    try:
        return iter(value)
    except TypeError:
        return None


def checked_budgets(skeleton_budgets: Iterable[object]) -> list[int]:
    budgets = _iterated(skeleton_budgets)
    if budgets is None:
        got = _messages.form_name(skeleton_budgets)
        raise TypeError(f"skeleton_budgets must be an iterable of int, got {got}")
    return [checked_budget(budget) for budget in budgets]


# Formats a buffer may hold that are not read as numbers, and why, for the error message.
_REFUSED_FORMATS = {
    "?": "booleans, which are not token counts or scores",
    "c": "bytes",
    "s": "bytes",
    "p": "bytes",
    "w": "text",
    "u": "text",
    "g": "long doubles: convert them to float64",
    "Zf": "complex numbers",
    "Zd": "complex numbers",
    "Zg": "complex numbers",
}


def _stored_items(column: list[object] | tuple[object, ...]) -> list[object] | tuple[object, ...]:
    """A list or tuple as is; a subclass as the items it stores, in storage order (its own
    `__iter__`, `__len__` or `__getitem__` are not consulted, as for `fragments`)."""
    kind = type(column)
    if kind is list or kind is tuple:
        return column
    if isinstance(column, list):
        return tuple(list.__iter__(column))
    return tuple(tuple.__iter__(column))


def _float16_values(view: memoryview, order: str) -> memoryview:
    # memoryview cannot cast to half floats; struct reads them, exactly, as doubles.
    prefix = "=" if order == "@" else order
    data = view.tobytes()
    return memoryview(array("d", struct.unpack(f"{prefix}{len(data) // 2}e", data)))


def _refuse_masked(column: Any, name: str) -> None:
    # A masked array's buffer and items hold the values beneath its mask: one with nothing
    # masked is read as the values it holds. numpy is never imported: the class is known by
    # its name.
    masked_array = any(
        kind.__name__ == "MaskedArray" and kind.__module__.startswith("numpy.ma")
        for kind in type(column).__mro__
    )
    if masked_array and column.count() < column.size:
        raise TypeError(
            f"{name} has masked rows, which would be read as the values beneath the mask: "
            "fill them or leave those rows out"
        )


def _numeric_column(column: object, name: str) -> list[object] | tuple[object, ...] | memoryview:
    if isinstance(column, (list, tuple)):
        return _stored_items(column)
    _refuse_masked(column, name)
    if isinstance(column, (bytes, bytearray)):
        # A buffer of unsigned bytes, but text or data far more likely than counts or scores.
        raise TypeError(f"{name} must hold integers or floats, got {type(column).__name__}")
    try:
        view = memoryview(column)  # type: ignore[arg-type]
    except (TypeError, ValueError, BufferError):
        # Not a buffer, or one that cannot export its values (numpy datetimes): its items.
        items = _iterated(column)
        if items is not None:
            return tuple(items)
        got = _messages.form_name(column)
        raise TypeError(
            f"{name} must be a sequence of numbers or a numeric buffer, got {got}"
        ) from None
    order, code = (
        (view.format[0], view.format[1:]) if view.format[:1] in _BYTE_ORDERS else ("@", view.format)
    )
    if view.ndim != 1:
        raise TypeError(f"{name} must be one-dimensional, got a buffer with {view.ndim} dimensions")
    if code == "O" and isinstance(column, Iterable):
        return tuple(column)  # numpy arrays of Python objects: the objects they hold
    if code == "e":
        return _float16_values(view, order)
    if code not in _BUFFER_FORMATS:
        what = _REFUSED_FORMATS.get(code, "values that are not integers or floats")
        raise TypeError(
            f"{name} must hold integers or floats, got a buffer of format {view.format!r} ({what})"
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


def _object_column(column: object, name: str, what: str) -> list[object] | tuple[object, ...]:
    if isinstance(column, (list, tuple)):
        return _stored_items(column)
    _refuse_masked(column, name)
    items = _iterated(column)
    if items is not None:
        return tuple(items)
    raise TypeError(f"{name} must be a sequence of {what}, got {_messages.form_name(column)}")


def _flag_column(column: object) -> list[object] | tuple[object, ...]:
    if not isinstance(column, (list, tuple)):
        _refuse_masked(column, "required")
        try:
            view = memoryview(column)  # type: ignore[arg-type]
        except (TypeError, ValueError, BufferError):
            pass
        else:
            if view.ndim == 1 and view.format.lstrip("@=<>!") == "?":
                if view.format == "?":
                    return tuple(view.tolist())  # numpy bool arrays
                # A byte order given (ctypes' "<?"), which `tolist` refuses: one byte each.
                return tuple(byte != 0 for byte in view.tobytes())
    return _object_column(column, "required", "bool")


# Union, not `|`: the alias is evaluated at run time, and Python 3.9 has no `|` for types.
Columns = tuple[Union[list[object], tuple[object, ...]], Any, Any, Any, Any, Any]


def checked_columns(
    fragment_ids: Sequence[str],
    token_counts: Any,
    relevance_scores: Any,
    required: Any = None,
    groups: Any = None,
    variants: Any = None,
) -> Columns:
    """The columns in forms both backends read: lists and tuples (subclasses read as the
    items they store), and numeric buffers as one-dimensional native memoryviews; `required`,
    `groups` and `variants` stay None when not given.

    The backends check that the columns have one length, on the snapshot they read.
    """
    ids = _object_column(fragment_ids, "fragment_ids", "str")
    tokens = _numeric_column(token_counts, "token_counts")
    scores = _numeric_column(relevance_scores, "relevance_scores")
    flags = None if required is None else _flag_column(required)
    names = None if groups is None else _object_column(groups, "groups", "None or str")
    renders = None if variants is None else _object_column(variants, "variants", "None or str")
    return ids, tokens, scores, flags, names, renders
