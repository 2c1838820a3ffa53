"""Fragments made from text, their `token_count` counted from their `content`: what
`ContextFragment.from_text`, `ContextFragment.variants` and `fragments_from_texts` share.

Like `ContextFragment(...)`, they check nothing but what they use: the texts (a `str` each)
and the counts, which, when a callable gives them, are checked as `compress` checks a
`token_count`, with the same error. The fragment class is passed in, so that `types` makes
fragments here without this module importing it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from . import _messages, _values
from .tokens import Counter, counting

if TYPE_CHECKING:
    from .types import ContextFragment

__all__ = ["fragment_from_text", "fragments_of_texts"]

_Fragment = TypeVar("_Fragment", bound="ContextFragment")


def _checked_counts(counts: list[Any], fragment_ids: list[str]) -> list[int]:
    """The counts, checked as `compress` checks the `token_count` of `fragments[i]`."""
    checked = []
    for index, (count, fragment_id) in enumerate(zip(counts, fragment_ids)):
        # Named by its id when the id is one `compress` would accept, as there.
        name = fragment_id if isinstance(fragment_id, str) and fragment_id else None
        checked.append(_values.token_count(count, index, name, "fragments"))
    return checked


def fragment_from_text(
    cls: type[_Fragment],
    fragment_id: str,
    content: str,
    relevance_score: float,
    counter: Counter | None,
) -> _Fragment:
    count_many, from_user_code = counting(counter)
    if not isinstance(content, str):
        raise _messages.text_type_error("content", content)
    counts = count_many([content])
    if from_user_code:
        counts = _checked_counts(counts, [fragment_id])
    return cls(fragment_id, counts[0], relevance_score, content)


def fragments_of_texts(
    cls: type[_Fragment],
    fragment_ids: Iterable[str],
    contents: Iterable[str],
    relevance_scores: Iterable[float],
    *,
    counter: Counter | None = None,
    variant_of: Iterable[str | None] | None = None,
) -> tuple[_Fragment, ...]:
    """`fragments_from_texts`, making fragments of `cls`."""
    columns = {
        "fragment_ids": fragment_ids,
        "contents": contents,
        "relevance_scores": relevance_scores,
    }
    for name, column in columns.items():
        # A str iterates as characters: one text is no column of them. A set's order is not
        # its rows' (a set of str iterates in an order that changes with the hash seed).
        if isinstance(column, (str, bytes, bytearray, *_messages.UNORDERED)):
            raise TypeError(
                f"{name} must be a column, one item per fragment, got {_messages.form_name(column)}"
            )
    count_many, from_user_code = counting(counter)
    ids, texts, scores = list(fragment_ids), list(contents), list(relevance_scores)
    names = ["fragment_ids", "contents", "relevance_scores"]
    lengths = [len(ids), len(texts), len(scores)]
    renders: list[str | None] | None = None
    if variant_of is not None:
        if isinstance(variant_of, (str, bytes, bytearray, *_messages.UNORDERED)):
            raise TypeError(
                "variant_of must be a column of None or str, one per fragment, got a "
                + _messages.form_name(variant_of)
            )
        renders = list(variant_of)
        names.append("variant_of")
        lengths.append(len(renders))
    if len(set(lengths)) > 1:
        raise _messages.lengths_error(names, lengths)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise _messages.text_type_error(f"contents[{index}]", text)
    counts = count_many(texts)
    if from_user_code:
        counts = _checked_counts(counts, ids)
    if renders is None:
        return tuple(map(cls, ids, counts, scores, texts))
    return tuple(
        cls(fid, count, score, text, variant_of=render)
        for fid, count, score, text, render in zip(ids, counts, scores, texts, renders)
    )
