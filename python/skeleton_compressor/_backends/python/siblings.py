"""The Python backend's siblings at `max_value_loss=0` in one call: the parent read once,
each child's scores put in place of the parent's, and only the kept fragments rescored.
`siblings.py` takes the same steps over `compress`, making a context per child and reading
each twice; any input this call does not take (as the compiled core's: a mapping that is
not a dict of exact `str` ids, a score that is not an exact float or int, a fragment or
score `compress` refuses, a `content` that is not a `str`, a subclass) gives
None, and those steps decide it and word its errors."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from math import fsum

from ... import _values
from ...pricing import CachePricing, keyed_cost_fields
from ...siblings import arranged_rows, prefix_text, remade
from ...types import ContextFragment, SkeletonMetadata, SkeletonResult
from ..protocol import PackedSiblings
from .columns import Columns
from .compress import Selection
from .read import fragment_columns
from .units import grouped_units

__all__ = ["packed_siblings"]


def packed_siblings(
    select: Callable[[Columns, int], Selection],
    order: str,
    fragments: tuple[ContextFragment, ...],
    relevances: tuple[Mapping[str, float] | None, ...],
    budgets: tuple[int, ...],
    pricing: CachePricing,
) -> PackedSiblings | None:
    """Each child's solo selection (by `select`, the compressor's own), the units every
    child keeps first in input order, the rest by `order`; None where `siblings.py`'s
    steps must decide."""
    try:
        parent = fragment_columns(fragments)
    except Exception:
        return None
    contents = _contents(fragments)
    if contents is None:
        return None
    row_of = {fragment_id: row for row, fragment_id in enumerate(parent.fragment_ids)}
    children = []
    for mapping, budget in zip(relevances, budgets):
        scores = _scores(parent, row_of, mapping)
        if scores is None:
            return None
        columns, given = scores
        try:
            kept, compressed, value, bound, exact = select(columns, budget)
        except Exception:
            return None
        children.append((columns, given, budget, kept, compressed, value, bound, exact))
    members, unit_of = grouped_units(len(parent.fragment_ids), parent.grouped)
    kept_units = [{unit_of[row] for row in child[3]} for child in children]
    shared = frozenset.intersection(*map(frozenset, kept_units)) if kept_units else frozenset()
    keys = [
        (fragment_id, tokens, content)
        for fragment_id, tokens, content in zip(parent.fragment_ids, parent.token_counts, contents)
    ]
    # What a child shares the others decide too: exact only if every child's call is.
    all_exact = all(exact for *_, exact in children)
    results, outputs = [], []
    for (columns, given, budget, kept, compressed, value, bound, _), units in zip(
        children, kept_units
    ):
        negated = columns.negated_scores
        rows = arranged_rows(units, shared, members, _rank_key(columns, members), order)
        outputs.append(rows)
        relevance = 0.0 - fsum(negated[row] for row in kept)
        kept_fragments = tuple(
            remade(fragments[row], row, given[row]) if row in given else fragments[row]
            for row in rows
        )
        metadata = SkeletonMetadata.of(
            parent.original_tokens,
            compressed,
            budget,
            len(fragments),
            len(kept),
            value,
            bound,
            0,
            relevance,
            exact=all_exact,
        )
        results.append(SkeletonResult(kept_fragments, metadata))
    shared_rows = sorted(row for unit in shared for row in members[unit])
    return (
        tuple(fragments[row] for row in shared_rows),
        tuple(results),
        keyed_cost_fields([[keys[row] for row in rows] for rows in outputs], pricing),
        keyed_cost_fields([[keys[row] for row in child[3]] for child in children], pricing),
        prefix_text([keys[row] for row in shared_rows]),
    )


def _contents(fragments: tuple[ContextFragment, ...]) -> list[str] | None:
    """Every fragment's content, when each is an exact `ContextFragment` whose content is a
    `str` (read as the plain str it holds, as `estimate_cost` reads it)."""
    contents = []
    for fragment in fragments:
        if type(fragment) is not ContextFragment:
            return None
        content = _values.plain_str(fragment.content)
        if content is None:
            return None
        contents.append(content)
    return contents


def _scores(
    parent: Columns, row_of: dict[str, int], relevance: Mapping[str, float] | None
) -> tuple[Columns, dict[int, object]] | None:
    """The parent's columns with the child's scores, and the score objects it gave by row;
    None for a mapping this call does not read."""
    if relevance is None:
        return parent, {}
    if type(relevance) is not dict:
        return None
    negated = list(parent.negated_scores)
    scored: dict[int, object] = {}
    for key, value in relevance.items():
        row = row_of.get(key) if type(key) is str else None
        if row is None:
            return None
        # The scores `compress` reads as they are; any other is left to the steps that
        # word its error (or read it through its own code).
        if type(value) is float and 0.0 <= value <= 1.0:
            negated[row] = -value
        elif type(value) is int and (value == 0 or value == 1):
            negated[row] = -float(value)
        else:
            return None
        scored[row] = value
    return parent.rescored(negated), scored


def _rank_key(columns: Columns, members: list[list[int]]) -> Callable[[int], tuple[float, str]]:
    """A unit's place in the child's ranking: its best member's relevance descending, then
    that member's id."""
    negated, ids = columns.negated_scores, columns.fragment_ids
    return lambda unit: min((negated[row], ids[row]) for row in members[unit])
