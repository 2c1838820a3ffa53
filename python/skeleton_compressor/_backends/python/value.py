"""Values in exact units, the order by density, and the bound on the value a budget can keep.

A value is an int: a relevance times 2**32. Densities (value per token) compare exactly, as
`value_a * tokens_b` against `value_b * tokens_a`; zero-token items come before every other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from itertools import accumulate, compress, count, islice, takewhile
from operator import eq, neg, truediv

__all__ = ["Densities", "fragment_values"]

# Minus 2**32: the columns hold relevance negated. Scaling by a power of two is exact, so
# `round` (half to even) gives the contract's value.
_NEGATED_UNIT = -4294967296.0


def fragment_values(negated_scores: list[float]) -> list[int]:
    """Each fragment's value, from the columns' negated relevance."""
    return list(map(round, map(_NEGATED_UNIT.__mul__, negated_scores)))


class Densities:
    """Items by density, descending, ties in the order given (rank order).

    Sorted on float quotients, which are correctly rounded and so never invert two densities:
    only a run of equal keys can hide unequal densities, and such a run is put in exact order
    where it is read (`exact_order`, and the run holding the break in `bound`).
    """

    __slots__ = ("_exact_order", "_keys", "_order", "_runs", "tokens", "values")

    def __init__(self, values: Sequence[int], tokens: Sequence[int], items: Iterable[int]) -> None:
        self.values = values
        self.tokens = tokens
        if 0 in tokens:
            inf = float("inf")
            keys = [-value / size if size else -inf for value, size in zip(values, tokens)]
        else:
            keys = list(map(truediv, map(neg, values), tokens))
        self._keys = keys
        self._order = sorted(items, key=keys.__getitem__)
        self._runs: dict[int, list[int]] = {}
        self._exact_order: list[int] | None = None

    def _run(self, start: int, stop: int) -> list[int]:
        """The items at [start:stop] of the float order, all of one key, in exact order (ties
        kept in place)."""
        run = self._runs.get(start)
        if run is None:
            run = self._order[start:stop]
            values, tokens = self.values, self.tokens
            first_value, first_tokens = values[run[0]], tokens[run[0]]
            if first_tokens and any(
                values[item] * first_tokens != first_value * tokens[item] for item in run
            ):
                run.sort(key=lambda item: Fraction(values[item], tokens[item]), reverse=True)
            self._runs[start] = run
        return run

    def exact_order(self) -> list[int]:
        """The items in exact density order (shared: not to be changed)."""
        if self._exact_order is not None:
            return self._exact_order
        order = self._order[:]
        keys = list(map(self._keys.__getitem__, order))
        ties = compress(count(), map(eq, keys, islice(keys, 1, None)))
        start = stop = 0
        for position in ties:
            if position != stop - 1:  # a new run of equal keys
                if stop:
                    order[start:stop] = self._run(start, stop)
                start = position
            stop = position + 2
        if stop:
            order[start:stop] = self._run(start, stop)
        self._exact_order = order
        return order

    def bound(self, capacity: int) -> int:
        """`floor` of the most value the items can give within `capacity` when each may be
        taken in any fraction: whole items by density while they fit, then a part of the
        first that does not."""
        order, keys, values, tokens = self._order, self._keys, self.values, self.tokens
        through = list(takewhile(capacity.__ge__, accumulate(map(tokens.__getitem__, order))))
        if len(through) == len(order):
            return sum(map(values.__getitem__, order))
        # The items of the break's key are read in exact order; those before them all fit.
        key = keys[order[len(through)]]
        start = stop = len(through)
        while start and keys[order[start - 1]] == key:
            start -= 1
        while stop < len(order) and keys[order[stop]] == key:
            stop += 1
        value = sum(map(values.__getitem__, islice(order, start)))
        left = capacity - (through[start - 1] if start else 0)
        for item in self._run(start, stop):
            size = tokens[item]
            if size > left:
                return value + values[item] * left // size
            value += values[item]
            left -= size
        raise AssertionError("the first item that does not fit is in its run")
