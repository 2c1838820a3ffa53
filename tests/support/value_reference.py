"""An oracle for every strategy (`greedy`, `prefix`, `density`, `optimal`) under the selection
policy, with the value measures, written straight from docs/contract.md ("Selection policy",
"Explaining a compression", "Value strategies") and docs/selection.md ("Choosing by value"),
by brute force where the rule is a search: `optimal` tries every subset of the candidates, the
bound is the fractional knapsack in exact `Fraction`s.

Values are ints in units of 2**-32. Nothing here is fast; everything here should be obviously
right. `reference(...)` returns an `Outcome` or raises `Refusal` (what `BudgetExceededError`
should say).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from typing import Any

SCALE = 2**32
STRATEGIES = ("greedy", "prefix", "density", "optimal")
# Past this many candidates `optimal` is solved by the table in `canonical_by_table`, not by
# trying every subset.
BRUTE_FORCE_LIMIT = 12


def value_of(relevance: Any) -> int:
    """A fragment's value: round half to even of relevance * 2**32 (an exact product)."""
    return round(float(relevance) * SCALE)


@dataclass(frozen=True)
class Unit:
    """A group, or a fragment on its own. `members` are input positions, in input order."""

    rank: int
    members: tuple[int, ...]
    tokens: int
    value: int
    relevance: float
    required: bool


@dataclass(frozen=True)
class Decision:
    kept: bool
    reason: str
    rank: int
    budget_left: int | None


@dataclass(frozen=True)
class Outcome:
    kept: list[int]  # input positions of the kept fragments, in output order
    compressed_tokens: int
    value_kept: int
    value_bound: int
    decisions: list[Decision]  # one per input fragment, in input order


class Refusal(Exception):
    """What `BudgetExceededError` should carry; `required` tells which of its two causes."""

    def __init__(self, budget: int, needed: int, required: bool) -> None:
        super().__init__(budget, needed, required)
        self.budget, self.needed, self.required = budget, needed, required


def units_of(fragments: Sequence[Any]) -> list[Unit]:
    """The units, in rank order: relevance descending, then lead id ascending."""
    by_key: dict[Any, list[int]] = {}
    for i, fragment in enumerate(fragments):
        key = ("group", fragment.group) if fragment.group is not None else ("alone", i)
        by_key.setdefault(key, []).append(i)

    def fragment_key(i: int) -> tuple[float, str]:
        return (-float(fragments[i].relevance_score), fragments[i].fragment_id)

    groups = sorted(by_key.values(), key=lambda members: min(map(fragment_key, members)))
    return [
        Unit(
            rank=rank,
            members=tuple(members),
            tokens=sum(fragments[i].token_count for i in members),
            value=sum(value_of(fragments[i].relevance_score) for i in members),
            relevance=max(float(fragments[i].relevance_score) for i in members),
            required=any(bool(fragments[i].required) for i in members),
        )
        for rank, members in enumerate(groups)
    ]


def density_key(unit: Unit) -> tuple[Any, ...]:
    """Density order: zero-token units first, then value per token descending (exact), ties
    by rank."""
    if unit.tokens == 0:
        return (0, unit.rank)
    return (1, -Fraction(unit.value, unit.tokens), unit.rank)


def fractional_bound(candidates: Sequence[Unit], room: int) -> int:
    """floor of the best value with every candidate taken in any fraction in [0, 1]."""
    total, left = Fraction(0), Fraction(room)
    for unit in sorted(candidates, key=density_key):
        if unit.tokens <= left:
            total += unit.value
            left -= unit.tokens
        else:
            total += Fraction(unit.value) * left / unit.tokens
            break
    return math.floor(total)


def density_set(candidates: Sequence[Unit], room: int) -> list[Unit]:
    """The density walk, or the single unit of most value that fits when it is worth more."""
    walk, left = [], room
    for unit in sorted(candidates, key=density_key):
        if unit.tokens <= left:
            walk.append(unit)
            left -= unit.tokens
    fitting = [unit for unit in candidates if unit.tokens <= room]
    if fitting:
        best = max(fitting, key=lambda unit: (unit.value, -unit.rank))
        if best.value > sum(unit.value for unit in walk):
            return [best]
    return walk


def canonical_by_brute_force(candidates: Sequence[Unit], room: int) -> list[Unit]:
    """Of every subset that fits: most value, then fewest tokens, then the one that keeps the
    better-ranked unit at the first rank where two differ (`candidates` in rank order, so
    that is the greatest tuple of kept flags)."""
    assert len(candidates) <= 16, "too many candidates to try every subset"
    best: tuple[Any, ...] | None = None
    for flags in product((False, True), repeat=len(candidates)):
        chosen = [unit for unit, kept in zip(candidates, flags) if kept]
        tokens = sum(unit.tokens for unit in chosen)
        if tokens <= room:
            key = (sum(unit.value for unit in chosen), -tokens, flags)
            if best is None or key > best:
                best = key
    assert best is not None  # the empty set always fits
    return [unit for unit, kept in zip(candidates, best[2]) if kept]


def canonical_by_table(candidates: Sequence[Unit], room: int) -> list[Unit]:
    """The same set by dynamic programming, for more candidates and a small room:
    `best[i][c]` is the greatest (value, -tokens) of a subset of candidates[i:] within c
    tokens; then, in rank order, each unit is kept whenever an optimal set keeping it exists."""
    count = len(candidates)
    room = min(room, sum(unit.tokens for unit in candidates))  # no subset needs more
    assert room <= 100_000, "the table is for small token counts"
    best = [[(0, 0)] * (room + 1) for _ in range(count + 1)]
    for i in range(count - 1, -1, -1):
        unit, after = candidates[i], best[i + 1]
        row = best[i]
        for c in range(room + 1):
            row[c] = after[c]
            if unit.tokens <= c:
                value, minus_tokens = after[c - unit.tokens]
                row[c] = max(row[c], (value + unit.value, minus_tokens - unit.tokens))
    chosen: list[Unit] = []
    c = room
    value, minus_tokens = best[0][room]
    for i, unit in enumerate(candidates):
        rest = (value - unit.value, minus_tokens + unit.tokens)
        if unit.tokens <= c and best[i + 1][c - unit.tokens] == rest:
            chosen.append(unit)
            c -= unit.tokens
            value, minus_tokens = rest
    return chosen


def optimal_set(candidates: Sequence[Unit], room: int) -> list[Unit]:
    if len(candidates) <= BRUTE_FORCE_LIMIT:
        return canonical_by_brute_force(candidates, room)
    return canonical_by_table(candidates, room)


def output_order(kept: Sequence[Unit], order: str) -> list[int]:
    in_rank_order = sorted(kept, key=lambda unit: unit.rank)
    if order == "input":
        return sorted(i for unit in kept for i in unit.members)
    if order == "edges":
        in_rank_order = in_rank_order[0::2] + in_rank_order[1::2][::-1]
    else:
        assert order == "ranking", order
    return [i for unit in in_rank_order for i in unit.members]


def reference(
    fragments: Sequence[Any],
    budget: int,
    strategy: str = "greedy",
    min_relevance: float = 0.0,
    on_overflow: str = "keep_top",
    order: str = "ranking",
) -> Outcome:
    """What `compress` and `explain` return for these (valid) fragments, or `Refusal`."""
    assert strategy in STRATEGIES, strategy
    units = units_of(fragments)
    required = [unit for unit in units if unit.required]
    # Eligible non-required units, in rank order: what a strategy chooses from.
    candidates = [u for u in units if not u.required and u.relevance >= min_relevance]
    required_tokens = sum(unit.tokens for unit in required)
    decided: dict[int, tuple[bool, str, int | None]] = {}  # by rank
    for unit in units:
        if unit.required:
            decided[unit.rank] = (True, "required", None)
        elif unit.relevance < min_relevance:
            decided[unit.rank] = (False, "below_min_relevance", None)
    kept = list(required)
    extra = 0  # the fractional bound over the candidates, beyond the required units' value

    if required_tokens > budget:
        if on_overflow != "keep_top":
            raise Refusal(budget, required_tokens, required=True)
        for unit in candidates:
            decided[unit.rank] = (False, "zero_budget" if budget == 0 else "no_room", None)
    elif budget == 0:
        for unit in candidates:
            decided[unit.rank] = (False, "zero_budget", None)
    else:
        room = budget - required_tokens
        extra = fractional_bound(candidates, room)
        if strategy in ("greedy", "prefix"):
            left, stopped = room, False
            for unit in candidates:
                if stopped:
                    decided[unit.rank] = (False, "after_stop", None)
                elif unit.tokens <= left:
                    decided[unit.rank] = (True, "fits", left)
                    kept.append(unit)
                    left -= unit.tokens
                else:
                    decided[unit.rank] = (False, "no_room", left)
                    stopped = strategy == "prefix"
            overflow = not kept and bool(candidates)
        else:
            chosen = (density_set if strategy == "density" else optimal_set)(candidates, room)
            for unit in candidates:
                if unit in chosen:
                    decided[unit.rank] = (True, "chosen", None)
                else:
                    reason = "not_chosen" if unit.tokens <= room else "no_room"
                    decided[unit.rank] = (False, reason, None)
            kept += chosen
            # Under `optimal` a set can be empty while units fit (all of value 0): that is
            # not an overflow. Under `density` the walk keeps whatever fits first.
            nothing_fits = all(unit.tokens > room for unit in candidates)
            overflow = not kept and bool(candidates) and nothing_fits
        if overflow:
            top = candidates[0]
            if on_overflow == "keep_top":
                kept = [top]
                # budget_left "as for the walks" (docs/contract.md, explaining under density
                # and optimal): nothing was kept, so the whole budget was left when the top
                # unit was reached.
                decided[top.rank] = (True, "top_over_budget", budget)
            elif on_overflow == "raise":
                if strategy == "prefix":
                    needed = top.tokens
                else:
                    needed = min(unit.tokens for unit in candidates)
                raise Refusal(budget, needed, required=False)

    decisions: list[Decision] = [Decision(False, "", -1, None)] * len(fragments)
    for unit in units:
        was_kept, reason, left_then = decided[unit.rank]
        for i in unit.members:
            decisions[i] = Decision(was_kept, reason, unit.rank, left_then)
    return Outcome(
        kept=output_order(kept, order),
        compressed_tokens=sum(unit.tokens for unit in kept),
        value_kept=sum(unit.value for unit in kept),
        value_bound=sum(unit.value for unit in required) + extra,
        decisions=decisions,
    )
