"""The strategies that choose by total value.

`density`: the walk by density, or the single item of most value.

`optimal`, exactly: of all sets of items within a capacity, the ones of most value; of those,
the ones of fewest tokens; of those, the one that keeps the better-ranked item at the first
rank where two of them differ.

Items are fixed in or out around the break item by the Dembo-Hammer bound, with a strict
inequality so that no set of most value is ever cut. The core left is solved by a dynamic
program over Pareto states (tokens, value) as in Pisinger's minknap, each state carrying its
set as a bit mask ordered by rank, so that of two states alike in tokens and value the one
with the better set is kept. All arithmetic is on ints; floats only order the work.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate, chain, compress, count, islice, takewhile
from operator import itemgetter, lt

from .value import Densities
from .work import Work, state_cost

__all__ = ["density_set", "optimal_set", "pareto_states"]

_second = itemgetter(1)


def density_set(
    densities: Densities,
    ranked: list[int],
    capacity: int,
    set_of: Sequence[int] | None = None,
) -> list[int]:
    """Walks the items by density keeping each that fits in what is left (and, with variant
    sets `set_of[item]`, -1 for none, passing over an item whose set already has one kept);
    then the item of most value that fits `capacity` (the first of `ranked`, the items in
    rank order, of that value) replaces them if it alone is worth more."""
    values, tokens = densities.values, densities.tokens
    kept = []
    kept_value = 0
    left = capacity
    if set_of is None:
        for item in densities.exact_order():
            size = tokens[item]
            if size <= left:
                left -= size
                kept.append(item)
                kept_value += values[item]
            elif not left:
                break  # zero-token items come first: none of the rest fits
    else:
        taken: set[int] = set()
        for item in densities.exact_order():
            size = tokens[item]
            if size <= left:
                variant = set_of[item]
                if variant >= 0:
                    if variant in taken:
                        continue
                    taken.add(variant)
                left -= size
                kept.append(item)
                kept_value += values[item]
            elif not left:
                break
    fitting = [item for item in ranked if tokens[item] <= capacity]
    if fitting:
        best = max(fitting, key=values.__getitem__)
        if values[best] > kept_value:
            return [best]
    return kept


def optimal_set(
    densities: Densities, capacity: int, rank: Sequence[int], work: Work | None = None
) -> list[int]:
    """The canonical optimal set of `densities`' items within `capacity`; `rank[item]` is
    the item's rank (lower is better). Once `work` is spent, the best set found so far
    (`work.stopped` says so)."""
    values, tokens = densities.values, densities.tokens
    order = densities.exact_order()
    # Zero-token items (first in the order) add value, or at worst better-ranked members, at
    # no cost; items of no value (last) add tokens only; items larger than the capacity never
    # fit. The rest, the pool, keeps the order.
    free = list(takewhile(lambda item: not tokens[item], order))
    valued = list(takewhile(values.__getitem__, islice(order, len(free), None)))
    pool = list(compress(valued, map(capacity.__ge__, map(tokens.__getitem__, valued))))
    pool_tokens = list(map(tokens.__getitem__, pool))
    pool_values = list(map(values.__getitem__, pool))
    through = accumulate(pool_tokens)
    brk = next(compress(count(), map(capacity.__lt__, through)), len(pool))
    if brk == len(pool):
        return free + pool
    lower = _walk_value(pool_tokens, pool_values, brk, capacity)

    # d = v * t_b - v_b * t: t_b times the value an item has beyond the break's density. Any
    # set within the capacity has t_b * value <= v_b * capacity + (the sum of the positive d)
    # less |d| of each item it takes against its sign: where that is below t_b * lower, the
    # item is fixed to its sign in every set of most value.
    break_value, break_tokens = pool_values[brk], pool_tokens[brk]
    gain = break_tokens * sum(pool_values[:brk]) - break_value * sum(pool_tokens[:brk])
    slack = break_value * capacity + gain - break_tokens * lower
    reduced = [
        value * break_tokens - break_value * size for value, size in zip(pool_values, pool_tokens)
    ]
    fixed = list(compress(pool, map(slack.__lt__, reduced)))
    in_core = [-slack <= d <= slack for d in reduced]
    core = list(compress(pool, in_core))
    above = list(compress(map(brk.__gt__, range(len(pool))), in_core))
    room = capacity - sum(map(tokens.__getitem__, fixed))
    floor = lower - sum(map(values.__getitem__, fixed))
    chosen = _core_optimum(
        core, above, densities, room, floor, rank, break_value / break_tokens, work or Work(None)
    )
    return free + fixed + chosen


def _walk_value(pool_tokens: list[int], pool_values: list[int], brk: int, capacity: int) -> int:
    """The value of the walk by density that keeps each item that fits, or of the pool's
    single item of most value if more: the value of a set within the capacity."""
    left = capacity - sum(pool_tokens[:brk])
    value = sum(pool_values[:brk])
    # After the break little room is left: only the items that fit it are walked.
    rest = range(brk + 1, len(pool_tokens))
    for position in compress(rest, map(left.__ge__, islice(pool_tokens, brk + 1, None))):
        size = pool_tokens[position]
        if size <= left:
            left -= size
            value += pool_values[position]
    return max(value, max(pool_values))


def _core_optimum(
    core: list[int],
    above: list[bool],
    densities: Densities,
    room: int,
    floor: int,
    rank: Sequence[int],
    break_density: float,
    work: Work,
) -> list[int]:
    """The canonical optimal subset of `core` within `room`, knowing that one reaches `floor`;
    `above[i]`: whether `core[i]` comes before the break, in the break's solution.

    Items alike in tokens and value form a class, of which a set of most value keeps the
    best-ranked ones (swapping in a better-ranked twin makes a better set), and no more than
    fit `room`: a class is decided at once, by how many of it are kept.

    As in Pisinger's minknap, states start from the break's solution and the classes are
    decided outward from the break, so that a state is bounded by filling what it lacks (or
    emptying what it exceeds) at the best density still to be added (or the least still to
    be removed). A state is (tokens, -value, -mask): sorted, the better of two states of
    equal tokens comes first. Once `work` is spent, the best state found that fits (every
    class not decided yet as in the break's solution), or none."""
    values, tokens = densities.values, densities.tokens
    classes: dict[tuple[int, int], list[int]] = {}
    defaults: dict[tuple[int, int], int] = {}  # how many of the class the break's solution has
    for item, is_above in zip(core, above):
        key = (tokens[item], values[item])
        classes.setdefault(key, []).append(item)
        defaults[key] = defaults.get(key, 0) + is_above
    for (size, _), members in classes.items():
        members.sort(key=rank.__getitem__)
        del members[room // size :]  # the break's solution fits, so keeps its own
    by_rank = sorted(chain.from_iterable(classes.values()), key=rank.__getitem__)
    # An item's bit: the better-ranked, the higher. A mask per item, or per count kept of a
    # class, would hold the whole core's bits for each: quadratic in the core.
    shift = {item: position for position, item in enumerate(reversed(by_rank))}
    # Any order is exact; the classes nearest the break's density first keep bounds tight.
    sequence = sorted(classes, key=lambda key: abs(key[1] / key[0] - break_density))
    adding, removing = _bounding_densities(sequence, classes, defaults)
    in_start = set(chain.from_iterable(classes[key][: defaults[key]] for key in sequence))
    start = (
        sum([size * defaults[size, value] for size, value in sequence]),
        -sum([value * defaults[size, value] for size, value in sequence]),
        -_mask_of(by_rank, in_start),
    )
    states = [start]
    per_state = state_cost(len(by_rank))
    for step, key in enumerate(sequence, 1):
        size, value = key
        default = defaults[key]
        members = classes[key]
        add_tokens, add_value = adding[step]
        remove = removing[step]
        # A step per state and count kept of the class, each a state grown (and held).
        growing = len(states) * (len(members) + 1) * per_state
        if not work.take(growing, growing):
            break
        branches: list[tuple[int, int, int]] = []
        # What keeping the first `kept` members adds to the break's set's mask.
        flips = -sum([1 << shift[item] for item in members[:default]])
        for kept in range(len(members) + 1):
            if kept:
                flips += 1 << shift[members[kept - 1]]
            spend, gained = (kept - default) * size, (kept - default) * value
            fitting = bisect_right(states, (room - spend + 1,))
            # Within room: value + (room - tokens) * density to add must reach floor.
            limit = add_tokens * (gained - floor) + add_value * (room - spend)
            branches += [
                (t + spend, v - gained, m - flips)
                for t, v, m in islice(states, fitting)
                if v * add_tokens + t * add_value <= limit
            ]
            if remove is None:
                if not fitting:
                    break  # over room with nothing left to remove, and more to add
                continue
            # Over room: value - (tokens - room) * density to remove must reach floor.
            remove_tokens, remove_value = remove
            limit = remove_tokens * (gained - floor) + remove_value * (room - spend)
            branches += [
                (t + spend, v - gained, m - flips)
                for t, v, m in islice(states, fitting, None)
                if v * remove_tokens + t * remove_value <= limit
            ]
            if len(branches) > 4 * len(states) + 1024:
                branches = pareto_states(branches)
        states = pareto_states(branches)
        fitting = bisect_right(states, (room + 1,))
        if fitting:
            floor = max(floor, -states[fitting - 1][1])
    fitting = bisect_right(states, (room + 1,))
    if not fitting:  # stopped short with no set that fits
        return []
    bits = format(-states[fitting - 1][2], f"0{len(by_rank)}b")
    return list(compress(by_rank, map("1".__eq__, bits)))


def _mask_of(by_rank: list[int], kept: set[int]) -> int:
    """The mask of the items `kept`, `by_rank` the core's items from the best-ranked, the
    highest bit (read from a string of digits, linear in the core)."""
    return int("".join(["1" if item in kept else "0" for item in by_rank]) or "0", 2)


def _bounding_densities(
    sequence: list[tuple[int, int]],
    classes: dict[tuple[int, int], list[int]],
    defaults: dict[tuple[int, int], int],
) -> tuple[list[tuple[int, int]], list[tuple[int, int] | None]]:
    """For each step of `sequence`, the classes from there on: the best density (tokens,
    value) that can still be added, (1, 0) if none; and the least that can be removed."""
    adding: list[tuple[int, int]] = [(1, 0)]
    removing: list[tuple[int, int] | None] = [None]
    for key in reversed(sequence):
        best, least = adding[-1], removing[-1]
        size, value = key
        if defaults[key] < len(classes[key]) and value * best[0] > best[1] * size:
            best = key
        if defaults[key] and (least is None or value * least[0] < least[1] * size):
            least = key
        adding.append(best)
        removing.append(least)
    return adding[::-1], removing[::-1]


def pareto_states(states: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The states no other beats: by tokens, each of more value than all before it."""
    states.sort()
    negated_values = list(map(_second, states))
    better = map(lt, islice(negated_values, 1, None), accumulate(negated_values, min))
    return list(compress(states, chain((True,), better)))
