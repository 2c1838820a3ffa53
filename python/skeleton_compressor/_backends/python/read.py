"""Fragments (or the rows of `compress_arrays`) read into `Columns`, checked field by field
in the contract's order, with a short way for plain values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ... import _messages, _values
from ..._values import MAX_TOKEN_COUNT
from ...types import ContextFragment
from .columns import Columns

if TYPE_CHECKING:
    from typing import TypeGuard

__all__ = ["fragment_columns", "row_columns"]


def _attribute(fragment: object, attribute: str, index: int, fid: str | None) -> Any:
    try:
        return getattr(fragment, attribute)
    except Exception as error:
        raise _messages.unreadable_error(index, fid, attribute, error) from error


_Fields = tuple[str, int, float, bool, "str | None", "str | None"]


def _read_optional(
    fragment: object, attribute: str, default: object, index: int, fid: str
) -> object:
    """A field fragments made before it existed may lack (objects that pass for one,
    subclass instances with unset slots): missing, it has its default."""
    try:
        return getattr(fragment, attribute)
    except AttributeError:
        return default
    except Exception as error:
        raise _messages.unreadable_error(index, fid, attribute, error) from error


def _checked_fragment(fragment: object, index: int) -> _Fields:
    """Reads and checks one fragment field by field, in the contract's order."""
    if not _values.safe_isinstance(fragment, ContextFragment):
        raise _messages.fragment_error("not_fragment", index, None, fragment)
    fid = _values.fragment_id(_attribute(fragment, "fragment_id", index, None), index, "fragments")
    tokens = _values.token_count(
        _attribute(fragment, "token_count", index, fid), index, fid, "fragments"
    )
    score = _values.relevance(
        _attribute(fragment, "relevance_score", index, fid), index, fid, "fragments"
    )
    pinned = _values.required(
        _read_optional(fragment, "required", False, index, fid), index, fid, "fragments"
    )
    group = _values.group(
        _read_optional(fragment, "group", None, index, fid), index, fid, "fragments"
    )
    variant = _values.variant_of(
        _read_optional(fragment, "variant_of", None, index, fid), index, fid, "fragments"
    )
    return fid, tokens, score, pinned, group, variant


def _checked_row(row: tuple[object, object, object], index: int) -> tuple[str, int, float]:
    raw_id, raw_tokens, raw_score = row
    fid = _values.fragment_id(raw_id, index, "rows")
    return (
        fid,
        _values.token_count(raw_tokens, index, fid, "rows"),
        _values.relevance(raw_score, index, fid, "rows"),
    )


def _plain(fid: object, tokens: object, score: object) -> bool:
    return (
        type(fid) is str
        and bool(fid)
        and type(tokens) is int
        and 0 <= tokens <= MAX_TOKEN_COUNT
        and type(score) is float
        and 0.0 <= score <= 1.0
    )


def _plain_row(row: tuple[object, object, object]) -> TypeGuard[tuple[str, int, float]]:
    return _plain(*row)


def fragment_columns(fragments: tuple[ContextFragment, ...]) -> Columns:
    columns = Columns()
    add_id = columns.fragment_ids.append
    add_tokens = columns.token_counts.append
    add_score = columns.negated_scores.append
    pin = columns.required.append
    grouped = columns.grouped
    variants = columns.variants
    for index, fragment in enumerate(fragments):
        # Plain fragments holding plain, valid values take the short way; anything else is
        # read again field by field, so that the first problem is the one reported.
        if type(fragment) is ContextFragment:
            try:
                fid = fragment.fragment_id
                tokens = fragment.token_count
                score = fragment.relevance_score
                pinned = fragment.required
                group = fragment.group
                variant = fragment.variant_of
            except AttributeError:
                fid, tokens, score, pinned, group, variant = _checked_fragment(fragment, index)
            if not (
                type(fid) is str
                and fid
                and type(tokens) is int
                and 0 <= tokens <= MAX_TOKEN_COUNT
                and type(score) is float
                and 0.0 <= score <= 1.0
                and (pinned is False or pinned is True)
                and (group is None or (type(group) is str and group))
                and (variant is None or (type(variant) is str and variant))
            ):
                fid, tokens, score, pinned, group, variant = _checked_fragment(fragment, index)
        else:
            fid, tokens, score, pinned, group, variant = _checked_fragment(fragment, index)
        add_id(fid)
        add_tokens(tokens)
        add_score(-score)
        if pinned:
            pin(index)
        if group is not None:
            grouped[index] = group
        if variant is not None:
            variants[index] = variant
    return columns.finish("fragments")


def row_columns(
    fragment_ids: Sequence[object],
    token_counts: Sequence[object] | memoryview,
    relevance_scores: Sequence[object] | memoryview,
    required: Sequence[object] | None,
    groups: Sequence[object] | None,
    variants: Sequence[object] | None = None,
) -> Columns:
    # One snapshot of each column, taken before any value is read: user code run while
    # reading (an `__index__`, a `__float__`) cannot change which rows are read.
    ids = _snapshot(fragment_ids)
    tokens = _snapshot(token_counts)
    scores = _snapshot(relevance_scores)
    flags = None if required is None else _snapshot(required)
    names = None if groups is None else _snapshot(groups)
    renders = None if variants is None else _snapshot(variants)
    lengths: list[int | None] = [len(ids), len(tokens), len(scores)]
    lengths += [None if column is None else len(column) for column in (flags, names, renders)]
    if len({length for length in lengths if length is not None}) > 1:
        raise _messages.column_lengths_error(*lengths)
    columns = Columns()
    add_id = columns.fragment_ids.append
    add_tokens = columns.token_counts.append
    add_score = columns.negated_scores.append
    for index, row in enumerate(zip(ids, tokens, scores)):
        if not _plain_row(row):
            row = _checked_row(row, index)
        fid, count, score = row
        add_id(fid)
        add_tokens(count)
        add_score(-score)
        if flags is not None and _values.required(flags[index], index, fid, "rows"):
            columns.required.append(index)
        if names is not None:
            group = _values.group(names[index], index, fid, "rows")
            if group is not None:
                columns.grouped[index] = group
        if renders is not None:
            variant = _values.variant_of(renders[index], index, fid, "rows")
            if variant is not None:
                columns.variants[index] = variant
    return columns.finish("rows")


def _snapshot(column: Sequence[object] | memoryview) -> Sequence[object]:
    if isinstance(column, memoryview):
        return column.tolist()
    return tuple(column) if type(column) is list else column
