"""The pure-Python backend: the contract of the Rust core in plain Python.

Used where the extension is not built, and as the reference the benchmarks measure against.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from . import _messages, _values
from .types import ContextFragment

__all__ = ["compress", "compress_arrays", "compress_many", "validate"]

# (-relevance, fragment_id, token_count, payload): sorting these ranks by relevance
# descending, then id ascending; ids are unique by then, so the payload is never compared.
_Entry = tuple[float, str, int, Any]
_MAX_TOKEN_COUNT = _messages.MAX_TOKEN_COUNT


def _read(fragment: object, attribute: str, index: int, fid: str | None) -> Any:
    try:
        return getattr(fragment, attribute)
    except Exception as error:
        raise _messages.unreadable_error(index, fid, attribute, error) from error


def _checked(fragment: object, index: int) -> tuple[str, int, float]:
    """Reads and checks one fragment field by field, in the contract's order."""
    if not _values.safe_isinstance(fragment, ContextFragment):
        raise _messages.fragment_error("not_fragment", index, None, fragment)
    fid = _values.fragment_id(_read(fragment, "fragment_id", index, None), index, "fragments")
    tokens = _values.token_count(_read(fragment, "token_count", index, fid), index, fid, "fragments")
    score = _values.relevance(_read(fragment, "relevance_score", index, fid), index, fid, "fragments")
    return fid, tokens, score


def _entries(fragments: tuple[ContextFragment, ...]) -> tuple[list[_Entry], int]:
    entries: list[_Entry] = []
    first_index: dict[str, int] = {}
    duplicate: tuple[str, int, int] | None = None
    original_tokens = 0
    for index, fragment in enumerate(fragments):
        # Plain fragments with plain, valid values take the short way; anything else is
        # read again field by field so that the first problem is the one reported.
        if type(fragment) is not ContextFragment:
            fid, tokens, score = _checked(fragment, index)
        else:
            try:
                fid = fragment.fragment_id
                tokens = fragment.token_count
                score = fragment.relevance_score
            except AttributeError:
                fid, tokens, score = _checked(fragment, index)
            if not (
                type(fid) is str
                and fid
                and type(tokens) is int
                and 0 <= tokens <= _MAX_TOKEN_COUNT
                and type(score) is float
                and 0.0 <= score <= 1.0
            ):
                fid, tokens, score = _checked(fragment, index)
        first = first_index.setdefault(fid, index)
        if first != index and duplicate is None:
            duplicate = (fid, first, index)
        original_tokens += tokens
        entries.append((-score, fid, tokens, fragment))
    if duplicate is not None:
        raise _messages.duplicate_error(*duplicate)
    return entries, original_tokens


def _select(ranked: list[_Entry], budget: int, prefix: bool) -> tuple[list[Any], int]:
    if budget == 0:
        return [], 0
    kept = []
    remaining = budget
    for _, _, tokens, payload in ranked:
        if tokens <= remaining:
            remaining -= tokens
            kept.append(payload)
        elif prefix:
            break
    if not kept and ranked:
        _, _, tokens, payload = ranked[0]
        return [payload], tokens
    return kept, budget - remaining


def validate(fragments: tuple[ContextFragment, ...]) -> None:
    _entries(fragments)


def compress(
    fragments: tuple[ContextFragment, ...], skeleton_budget: int, prefix: bool
) -> tuple[tuple[ContextFragment, ...], int, int]:
    entries, original_tokens = _entries(fragments)
    entries.sort()
    kept, compressed_tokens = _select(entries, skeleton_budget, prefix)
    return tuple(kept), original_tokens, compressed_tokens


def compress_many(
    fragments: tuple[ContextFragment, ...], skeleton_budgets: list[int], prefix: bool
) -> tuple[int, list[tuple[tuple[ContextFragment, ...], int]]]:
    entries, original_tokens = _entries(fragments)
    entries.sort()
    results = []
    for budget in skeleton_budgets:
        kept, compressed_tokens = _select(entries, budget, prefix)
        results.append((tuple(kept), compressed_tokens))
    return original_tokens, results


def _values_of(column: Sequence[object] | memoryview) -> Sequence[object]:
    return column.tolist() if isinstance(column, memoryview) else column


def compress_arrays(
    fragment_ids: Sequence[object],
    token_counts: Sequence[object] | memoryview,
    relevance_scores: Sequence[object] | memoryview,
    skeleton_budget: int,
    prefix: bool,
) -> tuple[array[int], int, int]:
    entries: list[_Entry] = []
    first_index: dict[str, int] = {}
    duplicate: tuple[str, int, int] | None = None
    original_tokens = 0
    rows = zip(fragment_ids, _values_of(token_counts), _values_of(relevance_scores))
    for index, (raw_id, raw_tokens, raw_score) in enumerate(rows):
        fid = _values.fragment_id(raw_id, index, "rows")
        tokens = _values.token_count(raw_tokens, index, fid, "rows")
        score = _values.relevance(raw_score, index, fid, "rows")
        first = first_index.setdefault(fid, index)
        if first != index and duplicate is None:
            duplicate = (fid, first, index)
        original_tokens += tokens
        entries.append((-score, fid, tokens, index))
    if duplicate is not None:
        raise _messages.duplicate_error(*duplicate, container="rows")
    entries.sort()
    kept, compressed_tokens = _select(entries, skeleton_budget, prefix)
    return array("q", kept), original_tokens, compressed_tokens
