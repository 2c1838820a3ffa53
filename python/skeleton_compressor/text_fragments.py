"""`fragments_from_texts`: fragments made from text, each `token_count` counted from its
`content` (what they share with `ContextFragment.from_text` is in `_counted_texts`)."""

from __future__ import annotations

from collections.abc import Iterable

from ._counted_texts import fragments_of_texts
from .tokens import Counter
from .types import ContextFragment

__all__ = ["fragments_from_texts"]


def fragments_from_texts(
    fragment_ids: Iterable[str],
    contents: Iterable[str],
    relevance_scores: Iterable[float],
    *,
    counter: Counter | None = None,
    variant_of: Iterable[str | None] | None = None,
) -> tuple[ContextFragment, ...]:
    """One fragment per row of the three columns, its `token_count` counted from its
    content: `ContextFragment(fragment_ids[i], count(contents[i]), relevance_scores[i],
    contents[i])`, with `variant_of=variant_of[i]` when that column is given, as a tuple
    ready for `compress`.

    `counter` is a `TokenCounter`, an encoding's name, or a callable `str -> int`; by default
    the `o200k_base` encoding. A `TokenCounter` counts all the texts in one call, on several
    threads when there are many.

    Args:
        fragment_ids, contents, relevance_scores: three iterables of one length; only the
            contents (a str each) are checked here, the rest by `compress`.
        counter: a `TokenCounter`, an encoding's name, a callable `str -> int`, or None.
        variant_of: None, or a fourth column of that length: each row's `variant_of`
            (None or a str, checked by `compress`).

    Raises:
        TypeError: a content that is not a str (named `contents[i]`), a `counter` of
            another type, or a column that is a str or a set (whose order is not its
            rows') rather than a column of rows.
        ValueError: columns of different lengths, or an unknown encoding.
        ImportError: a built-in encoding where the compiled extension is not built (or
            `SKELETON_COMPRESSOR_BACKEND=python`).
        FragmentTypeError, FragmentValueError: a callable's count is not a valid
            `token_count` (named `fragments[i]`, as `compress` names it). What the callable
            raises passes through.
    """
    return fragments_of_texts(
        ContextFragment,
        fragment_ids,
        contents,
        relevance_scores,
        counter=counter,
        variant_of=variant_of,
    )
