"""The `optimal` strategy's set with variants, exactly: the multiple-choice knapsack, each
variant set a class keeping at most one of its units (a unit of no set, a class of one), under
the tie rule of `optimal` (most value, then fewest tokens, then the set that keeps the
better-ranked unit at the first rank where two differ).

A dynamic program over Pareto states (tokens, value), a class at a time as in Pisinger's
algorithm for the multiple-choice problem: each state carries its set as a bit mask ordered by
rank, so that of two states alike in tokens and value the better set survives. A state whose
value and the most the classes still to come could add stays below a value already reached is
cut (strictly, so no set of most value is ever lost).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import islice

from .optimal import pareto_states
from .variants import variant_classes

__all__ = ["multiple_choice_set"]


def _useful_members(
    members: list[int], values: Sequence[int], tokens: Sequence[int], rank: Sequence[int]
) -> list[int]:
    """The members some set of most value may keep: each worth more than every member of no
    more tokens (ties by rank), and each worth something or free. The others are beaten by
    a member of the class or by keeping none of it, in every set."""
    useful = []
    best = -1
    for unit in sorted(members, key=lambda unit: (tokens[unit], -values[unit], rank[unit])):
        value = values[unit]
        if value > best and (value or not tokens[unit]):
            useful.append(unit)
            best = value
    return useful


def multiple_choice_set(
    values: Sequence[int],
    tokens: Sequence[int],
    candidates: list[int],
    set_of: Sequence[int],
    capacity: int,
    rank: Sequence[int],
    reached: int,
) -> list[int]:
    """The canonical optimal set of `candidates` within `capacity`, knowing a set of value
    `reached` fits; `rank[unit]` is the unit's rank among `len(rank)` units."""
    fitting = [unit for unit in candidates if tokens[unit] <= capacity]
    classes = [
        useful
        for members in variant_classes(fitting, set_of)
        if (useful := _useful_members(members, values, tokens, rank))
    ]
    # The densest classes first: what is left to add is then the least dense, and bounds cut
    # more. Any order is exact.
    density = [
        max(values[unit] / tokens[unit] if tokens[unit] else float("inf") for unit in members)
        for members in classes
    ]
    order = sorted(range(len(classes)), key=density.__getitem__, reverse=True)
    classes = [classes[position] for position in order]
    # For each class, what the classes after it could add at most: the sum of their best
    # values, and their best density as (tokens, value), None where a free unit has value.
    rest_values = [0] * (len(classes) + 1)
    rest_density: list[tuple[int, int] | None] = [(1, 0)] * (len(classes) + 1)
    for position in range(len(classes) - 1, -1, -1):
        members = classes[position]
        rest_values[position] = rest_values[position + 1] + max(map(values.__getitem__, members))
        best = rest_density[position + 1]
        for unit in members:
            if best is None:
                break
            if not tokens[unit]:
                best = None if values[unit] else best
            elif values[unit] * best[0] > best[1] * tokens[unit]:
                best = (tokens[unit], values[unit])
        rest_density[position] = best
    top = len(rank) - 1
    states = [(0, 0, 0)]  # (tokens, -value, -mask), sorted: the better state first
    for position, members in enumerate(classes, 1):
        grown = list(states)
        for unit in members:
            size, value, bit = tokens[unit], values[unit], 1 << (top - rank[unit])
            room = bisect_right(states, (capacity - size + 1,))
            grown += [(t + size, v - value, m - bit) for t, v, m in islice(states, room)]
        states = pareto_states(grown)
        reached = max(reached, -states[-1][1])
        states = _within_reach(
            states, reached, rest_values[position], rest_density[position], capacity
        )
    mask = -states[-1][2]
    return [unit for members in classes for unit in members if mask >> (top - rank[unit]) & 1]


def _within_reach(
    states: list[tuple[int, int, int]],
    reached: int,
    rest_value: int,
    rest_density: tuple[int, int] | None,
    capacity: int,
) -> list[tuple[int, int, int]]:
    """The states that may still grow into a set of value `reached` or more."""
    least = reached - rest_value  # -value must be at most -least
    kept = [state for state in states if -state[1] >= least]
    if rest_density is None:
        return kept
    per, gain = rest_density
    # value + (capacity - tokens) * gain / per >= reached, in ints.
    return [
        state for state in kept if -state[1] * per + (capacity - state[0]) * gain >= reached * per
    ]
