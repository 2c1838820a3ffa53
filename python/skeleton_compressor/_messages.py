"""Error messages for bad input, shared by both backends so their errors match word for word.

The backends decide which check failed; this module words it, and builds the error: a
`FragmentTypeError` or `FragmentValueError` carrying the kind, place and detail as fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import islice
from typing import TypeVar

from .errors import BudgetExceededError, FragmentError, FragmentTypeError, FragmentValueError

_SHOWN_CHARS = 80

_FRAGMENT_PROBLEMS: dict[str, tuple[type[FragmentError], str]] = {
    "not_fragment": (FragmentTypeError, "must be a ContextFragment, got {got}"),
    "id_type": (FragmentTypeError, "fragment_id must be a str, got {got}"),
    "id_empty": (FragmentValueError, "fragment_id must be non-empty"),
    "token_type": (FragmentTypeError, "token_count must be an int, got {got}"),
    "token_negative": (FragmentValueError, "token_count must be >= 0, got {value}"),
    "token_too_large": (FragmentValueError, "token_count must be <= 2**63 - 1, got {value}"),
    "relevance_type": (FragmentTypeError, "relevance_score must be a real number, got {got}"),
    "relevance_range": (FragmentValueError, "relevance_score must be in [0, 1], got {value}"),
    "required_type": (FragmentTypeError, "required must be a bool, got {got}"),
    "group_type": (FragmentTypeError, "group must be None or a str, got {got}"),
    "group_empty": (FragmentValueError, "group must be non-empty"),
    "variant_type": (FragmentTypeError, "variant_of must be None or a str, got {got}"),
    "variant_empty": (FragmentValueError, "variant_of must be non-empty"),
}


# Iterables with no order of their own: refused wherever the order of items is the order
# of rows, results or requests (a set of str iterates in an order that changes with the hash
# seed).
UNORDERED: tuple[type, ...] = (set, frozenset)


def form_name(value: object) -> str:
    """`value`'s type's name, saying why where it is a set (iterable, but with no order)."""
    name = type(value).__name__
    return f"{name} (a set has no order)" if isinstance(value, UNORDERED) else name


# Every `FragmentError.kind`, in this order; the Rust core's enum of problems has the same names.
KINDS: tuple[str, ...] = (
    *_FRAGMENT_PROBLEMS,
    "unreadable",
    "duplicate",
    "variant_group_mismatch",
    "variant_required_twice",
)

_Error = TypeVar("_Error", bound=FragmentError)


def describe(value: object) -> str:
    """repr() that never raises and never floods a log line, and whose work is bounded by
    what it shows: a ten-million-item list as a token count costs no more than a short one."""
    try:
        text = _short_repr(value, 0)
    except Exception:
        text = f"<{type(value).__name__} object>"
    if len(text) > _SHOWN_CHARS:
        text = text[: _SHOWN_CHARS - 3] + "..."
    return text


_SHOWN_ITEMS = 24  # enough to fill the shown characters with one-character items
_SHOWN_DEPTH = 3
_SHOWN_INT_BITS = 4096  # beyond, an int's decimal digits cost more than they tell
_CONTAINERS: dict[type, tuple[str, str]] = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    set: ("{", "}"),
    frozenset: ("frozenset({", "})"),
    dict: ("{", "}"),
}


def _short_repr(value: object, depth: int) -> str:
    """repr() of the first items of built-in containers, strings and ints; any other value's
    own repr()."""
    kind = type(value)
    if kind is int:
        bits = value.bit_length()  # type: ignore[attr-defined]
        return f"<int of {bits} bits>" if bits > _SHOWN_INT_BITS else repr(value)
    if kind is str or kind is bytes or kind is bytearray:
        return repr(value[: _SHOWN_CHARS + 1])  # type: ignore[index]
    brackets = _CONTAINERS.get(kind)
    if brackets is None:
        return repr(value)
    left, right = brackets
    items: (
        dict[object, object] | list[object] | tuple[object, ...] | set[object] | frozenset[object]
    ) = value  # type: ignore[assignment]
    if not items:
        return "set()" if kind is set else repr(value)
    if depth >= _SHOWN_DEPTH:
        return f"{left}...{right}"
    if isinstance(items, dict):
        parts = [
            f"{_short_repr(key, depth + 1)}: {_short_repr(item, depth + 1)}"
            for key, item in islice(items.items(), _SHOWN_ITEMS)
        ]
    else:
        parts = [_short_repr(item, depth + 1) for item in islice(items, _SHOWN_ITEMS)]
    if len(items) > _SHOWN_ITEMS:
        parts.append("...")
    trail = "," if kind is tuple and len(items) == 1 else ""
    return f"{left}{', '.join(parts)}{trail}{right}"


def _typed(value: object) -> str:
    return f"{describe(value)} ({type(value).__name__})"


def _text(
    kind: str,
    index: int,
    fragment_id: str | None,
    detail: str,
    first_index: int | None,
    name: Callable[[int], str],
) -> str:
    if kind == "duplicate" and first_index is not None:
        return f"{detail} at {name(first_index)} and {name(index)}"
    where = name(index)
    if fragment_id is not None:
        where = f"{where} (id {describe(fragment_id)})"
    separator = " " if kind == "not_fragment" else ": "
    return f"{where}{separator}{detail}"


def _error(
    error_type: type[_Error],
    kind: str,
    index: int,
    fragment_id: str | None,
    container: str,
    detail: str,
    first_index: int | None = None,
) -> _Error:
    message = _text(kind, index, fragment_id, detail, first_index, lambda at: f"{container}[{at}]")
    return error_type(
        message,
        kind=kind,
        index=index,
        fragment_id=fragment_id,
        container=container,
        detail=detail,
        first_index=first_index,
    )


def fragments_type_error(fragments: object) -> TypeError:
    return TypeError(
        f"fragments must be a tuple of ContextFragment, got {type(fragments).__name__}"
    )


_COLUMN_NAMES = (
    "fragment_ids",
    "token_counts",
    "relevance_scores",
    "required",
    "groups",
    "variants",
)


def column_lengths_error(*lengths: int | None) -> ValueError:
    """Columns of different lengths, given in `_COLUMN_NAMES` order (None: not given)."""
    given = [(name, length) for name, length in zip(_COLUMN_NAMES, lengths) if length is not None]
    return lengths_error([name for name, _ in given], [length for _, length in given])


def budget_type_error(budget: object) -> TypeError:
    return TypeError(f"skeleton_budget must be an int, got {_typed(budget)}")


def budget_negative_error(budget: int) -> ValueError:
    return ValueError(f"skeleton_budget must be >= 0, got {budget}")


def fragment_error(
    kind: str, index: int, fragment_id: str | None, value: object, container: str = "fragments"
) -> FragmentError:
    error_type, template = _FRAGMENT_PROBLEMS[kind]
    shown = _typed(value) if "{got}" in template else describe(value)
    detail = template.format(got=shown, value=shown)
    return _error(error_type, kind, index, fragment_id, container, detail)


def rescored_error(error: FragmentError, position: int) -> FragmentError:
    """`error`, on a score that `children[position].relevance` gave the fragment."""
    detail = f"{error.detail}, as children[{position}].relevance scores it"
    return _error(type(error), error.kind, error.index, error.fragment_id, error.container, detail)


def unreadable_error(
    index: int,
    fragment_id: str | None,
    attribute: str,
    error: BaseException,
    container: str = "fragments",
) -> FragmentTypeError:
    try:
        reason = str(error)
    except Exception:
        reason = "<unprintable error>"
    detail = f"cannot read {attribute}: {type(error).__name__}: {reason}"
    return _error(FragmentTypeError, "unreadable", index, fragment_id, container, detail)


def duplicate_error(
    fragment_id: str, first: int, second: int, container: str = "fragments"
) -> FragmentValueError:
    detail = f"duplicate fragment_id {describe(fragment_id)}"
    return _error(FragmentValueError, "duplicate", second, fragment_id, container, detail, first)


def variant_group_mismatch_error(
    fragment_id: str,
    index: int,
    variant_of: str | None,
    group: str,
    first_index: int,
    first_variant_of: str | None,
    container: str = "fragments",
) -> FragmentValueError:
    """A member of a group renders another thing than the group's first member."""
    detail = (
        f"variant_of {describe(variant_of)} differs from {describe(first_variant_of)}, the "
        f"variant_of of {container}[{first_index}] in group {describe(group)}: a group's "
        "members share one variant_of"
    )
    return _error(
        FragmentValueError,
        "variant_group_mismatch",
        index,
        fragment_id,
        container,
        detail,
        first_index,
    )


def variant_required_twice_error(
    fragment_id: str,
    index: int,
    variant_of: str,
    first_index: int,
    container: str = "fragments",
) -> FragmentValueError:
    """A second required unit in one variant set; `first_index` is the first one's."""
    detail = (
        f"required, and so is {container}[{first_index}] of another unit with variant_of "
        f"{describe(variant_of)}: at most one unit of a variant set can be required"
    )
    return _error(
        FragmentValueError,
        "variant_required_twice",
        index,
        fragment_id,
        container,
        detail,
        first_index,
    )


def budget_exceeded_error(budget: int, needed: int, required: bool) -> BudgetExceededError:
    if required:
        message = f"required fragments need {needed} tokens, skeleton_budget is {budget}"
    else:
        message = (
            f"nothing fits: keeping anything needs {needed} tokens, skeleton_budget is {budget}"
        )
    return BudgetExceededError(message, skeleton_budget=budget, needed_tokens=needed)


def text_type_error(place: str, value: object) -> TypeError:
    """A text to count is not a str; `place` names it: `text`, `texts[3]`, `contents[3]`."""
    return TypeError(f"{place} must be a str, got {_typed(value)}")


def texts_type_error(texts: object) -> TypeError:
    return TypeError(f"texts must be an iterable of str (not a str), got {_typed(texts)}")


def unknown_encoding_error(encoding: object, known: Sequence[str]) -> ValueError:
    return ValueError(f"unknown encoding {describe(encoding)}; known encodings: {', '.join(known)}")


def counter_type_error(counter: object) -> TypeError:
    return TypeError(
        f"counter must be a TokenCounter, an encoding name or a callable str -> int, got "
        f"{_typed(counter)}"
    )


def lengths_error(names: Sequence[str], lengths: Sequence[int]) -> ValueError:
    return ValueError(
        f"{', '.join(names[:-1])} and {names[-1]} must have one length, got "
        f"{', '.join(map(str, lengths[:-1]))} and {lengths[-1]}"
    )
