"""Bounds on the value of a turn's fills (`turns`), so that a fill that cannot keep enough is
not walked.

The fill F_k keeps the first k units of the reusable run R pinned, the required units, and
what the strategy takes of the other candidates within what those leave. Taken in any
fraction, with variant sets ignored, those candidates give at most the bound by density of
the candidates not in R[:k]: a bound no fill beats, whatever the strategy. From k = |R| down,
each step gives one unit of R back, so the candidates by density are kept in a Fenwick tree
of their tokens and values: a step is one update and one descent, in logarithmic time.
"""

from __future__ import annotations

from collections.abc import Iterator

from .units import Units

__all__ = ["fill_bounds"]


def fill_bounds(units: Units, run: list[int], budget: int) -> Iterator[int]:
    """For k from len(run) down to 1, the most value F_k can keep."""
    tokens, values, required = units.tokens, units.values, units.required
    order = units.densities.exact_order()
    size = len(order)
    position = dict(zip(order, range(1, size + 1)))  # 1-based, as the tree counts
    given_back = [unit for unit in run if not required[unit]]
    tree_tokens = [0] * (size + 1)
    tree_values = [0] * (size + 1)
    left_out = set(given_back)
    for index, unit in enumerate(order, 1):
        if unit not in left_out:
            tree_tokens[index], tree_values[index] = tokens[unit], values[unit]
    for index in range(1, size + 1):  # each node adds itself to its parent: built in O(n)
        parent = index + (index & -index)
        if parent <= size:
            tree_tokens[parent] += tree_tokens[index]
            tree_values[parent] += tree_values[index]
    top = 1 << (size.bit_length() - 1) if size else 0
    pinned_tokens = units.required_tokens + sum(map(tokens.__getitem__, given_back))
    pinned_value = units.required_value + sum(map(values.__getitem__, given_back))
    for unit in reversed(run):
        room = budget - pinned_tokens
        # The descent: the longest run by density within room, then a part of the next.
        index = taken_tokens = taken_value = 0
        step = top
        while step:
            node = index + step
            if node <= size and taken_tokens + tree_tokens[node] <= room:
                index = node
                taken_tokens += tree_tokens[node]
                taken_value += tree_values[node]
            step >>= 1
        if index < size:
            # The next item is in the tree (it overflows the room), so has tokens.
            item = order[index]
            taken_value += values[item] * (room - taken_tokens) // tokens[item]
        yield pinned_value + taken_value
        if not required[unit]:
            pinned_tokens -= tokens[unit]
            pinned_value -= values[unit]
            node = position[unit]
            while node <= size:
                tree_tokens[node] += tokens[unit]
                tree_values[node] += values[unit]
                node += node & -node
