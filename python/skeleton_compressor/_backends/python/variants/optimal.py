"""The `optimal` strategy's set with variants, exactly: the multiple-choice knapsack, each
variant set a class keeping at most one of its units (a unit of no set, a class of one), under
the tie rule of `optimal` (most value, then fewest tokens, then the set that keeps the
better-ranked unit at the first rank where two differ).

First a set within the capacity: each class climbs its convex hull a step at a time, the
steps of all classes by efficiency, while a step fits; the first step that does not fit gives
a price per token (the relaxation's, as in Sinha and Zoltners). At that price each class adds
at most its best margin (value less the price of its tokens, or 0): choices that would lose
more than that bound exceeds the set's value are dropped, and classes left with one choice
are decided (Dembo and Hammer's reduction, for classes). The rest is a dynamic program over
Pareto states (tokens, value), a class at a time: each state carries its set as a bit mask
ordered by rank, so that of two states alike in tokens and value the better set survives,
and a state the bound says cannot reach the set's value is cut. Every cut is strict, so no set
of most value is ever lost.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Sequence
from itertools import islice

from ..by_value import pareto_states
from ..work import Work, state_cost
from .bound import upper_hull, variant_classes

_INF = float("inf")

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


def _lead(gains: list[int]) -> int:
    """How far the best of a class's margins stands above the next, keeping none of the class
    being a margin of 0."""
    best, following = heapq.nlargest(2, [0, *gains])
    return best - following


def multiple_choice_set(
    values: Sequence[int],
    tokens: Sequence[int],
    candidates: list[int],
    set_of: Sequence[int],
    capacity: int,
    rank: Sequence[int],
    work: Work | None = None,
) -> list[int]:
    """The canonical optimal set of `candidates` within `capacity`; `rank[unit]` is the
    unit's rank among `len(rank)` units. Once `work` is spent, the best set found so far
    (the classes not reached keep none; `work.stopped` says so)."""
    work = work or Work(None)
    fitting = [unit for unit in candidates if tokens[unit] <= capacity]
    classes = [
        useful
        for members in variant_classes(fitting, set_of)
        if (useful := _useful_members(members, values, tokens, rank))
    ]
    hulls = [upper_hull(members, values, tokens) for members in classes]
    filled, (per, price) = _filled_by_steps(hulls, values, tokens, capacity)
    reached = sum(map(values.__getitem__, filled))
    # At any price per token, a class adds at most its best margin (value beyond the price
    # of its tokens, or 0 for none of it): a bound on every set (Lagrange), in ints scaled
    # by `per`. A choice whose margin falls short of its class's best by more than the
    # bound exceeds what was reached is in no set of most value (strictly: none is lost);
    # a class left with one choice is decided.
    margins = [
        [values[unit] * per - price * tokens[unit] for unit in members] for members in classes
    ]
    best = [max(0, *margin) for margin in margins]
    slack = sum(best) + price * capacity - reached * per
    fixed: set[int] = set()
    fixed_tokens = fixed_value = 0
    # (lead, worst best rank, best margin, members) of each class left open.
    opened: list[tuple[int, int, int, list[int]]] = []
    for members, margin, most in zip(classes, margins, best):
        kept_gains = [(unit, gain) for unit, gain in zip(members, margin) if most - gain <= slack]
        kept = [unit for unit, _ in kept_gains]
        if len(kept) == 1 and most > slack:  # keeping none of the class is ruled out too
            unit = kept[0]
            fixed.add(unit)
            fixed_tokens += tokens[unit]
            fixed_value += values[unit]
        elif kept:
            lead = _lead([gain for _, gain in kept_gains])
            opened.append((lead, min(map(rank.__getitem__, kept)), most, kept))
    # The classes whose best choice leads their next by most first, as the Rust core orders
    # them (the states multiply late).
    opened.sort(key=lambda c: (-c[0], -c[1]))
    open_classes = [members for _, _, _, members in opened]
    open_best = [most for _, _, most, _ in opened]
    after = [0] * (len(open_classes) + 1)  # what the classes after each could add, at most
    for position in range(len(open_classes) - 1, -1, -1):
        after[position] = after[position + 1] + open_best[position]
    floor = reached * per
    # Masks of the open classes' units alone, the best-ranked the highest bit: every state
    # keeps the fixed units, so they would decide no tie, and a mask as wide as the core
    # costs far less than one over every unit.
    by_rank = sorted((unit for members in open_classes for unit in members), key=rank.__getitem__)
    place = {unit: place for place, unit in enumerate(reversed(by_rank))}
    states = [(fixed_tokens, -fixed_value, 0)]  # sorted: the better state first
    per_state = state_cost(len(by_rank))
    for position, members in enumerate(open_classes, 1):
        # A step per state and choice, each a state grown (and held).
        growing = len(states) * (len(members) + 1) * per_state
        if not work.take(growing, growing):
            break
        grown = list(states)
        for unit in members:
            size, value, bit = tokens[unit], values[unit], 1 << place[unit]
            room = bisect_right(states, (capacity - size + 1,))
            grown += [(t + size, v - value, m - bit) for t, v, m in islice(states, room)]
        # A state that cannot reach a value already reached is cut, strictly.
        rest = after[position] + price * capacity - floor
        states = [
            state for state in pareto_states(grown) if price * state[0] + per * state[1] <= rest
        ]
    if work.stopped and reached > -states[-1][1]:
        return filled  # stopped short, and the climb's set is worth more than the states'
    digits = format(-states[-1][2], f"0{len(by_rank)}b")  # the best-ranked first
    chosen = fixed.union(unit for unit, digit in zip(by_rank, digits) if digit == "1")
    return [unit for members in classes for unit in members if unit in chosen]


def _filled_by_steps(
    hulls: list[list[int]], values: Sequence[int], tokens: Sequence[int], capacity: int
) -> tuple[list[int], tuple[int, int]]:
    """A set within `capacity` (each class climbs its hull a step at a time, the steps of all
    classes by efficiency, while a step fits), and the price per token of the relaxation's
    first step that does not fit, as (tokens, value): (1, 0) if all fit."""
    steps = []  # (-efficiency, class, level, tokens, value)
    for number, hull in enumerate(hulls):
        last_tokens, last_value = 0, 0
        for level, unit in enumerate(hull, 1):
            size, value = tokens[unit] - last_tokens, values[unit] - last_value
            steps.append((-value / size if size else -_INF, number, level, size, value))
            last_tokens, last_value = tokens[unit], values[unit]
    steps.sort()
    levels = [0] * len(hulls)
    left = capacity
    price: tuple[int, int] | None = None
    for _, number, level, size, value in steps:
        if size > left:
            if price is None:
                price = (size, value)
        elif levels[number] == level - 1:
            levels[number] = level
            left -= size
    return [hull[level - 1] for hull, level in zip(hulls, levels) if level], price or (1, 0)
