"""An oracle for every strategy with variants (docs/contract.md, "Variants"),
beside `value_reference.py` and written the same way: straight from the contract,
by brute force where the rule is a search. Fragments sharing a `variant_of` are renderings of
one thing; at most one of their units is kept.

- A required unit settles its variant set: the set's other units are never kept and their
  reason is `variant_kept` (after `required` and `below_min_relevance`, which come first).
- `greedy` and `prefix` pass over a unit whose set has a kept unit (`variant_kept`, with what
  was left); it does not stop `prefix`.
- `density` walks by density passing over the same, then the single unit of most value that
  fits replaces the walk if worth more.
- `optimal` tries every subset keeping at most one unit per set.
- The bound is the fractional relaxation with the fractions of one set summing to at most 1,
  computed here by its dual: the minimum over lam >= 0 of lam * room plus, per set, the most
  any of its units gives beyond lam per token (or 0).
- Under `density` and `optimal` a unit left out while its set has a kept unit says
  `variant_kept`.

Nothing here is fast; everything here should be obviously right.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from typing import Any

from .value_reference import STRATEGIES, Decision, Outcome, Refusal, value_of

__all__ = [
    "VariantUnit",
    "multiple_choice_bound",
    "optimal_by_brute_force",
    "optimal_by_table",
    "reference",
    "units_of",
]

# Past this many candidates `optimal` is solved by the table, not by trying every subset.
BRUTE_FORCE_LIMIT = 12


@dataclass(frozen=True)
class VariantUnit:
    """A group, or a fragment on its own, with the variant set its members share (or None)."""

    rank: int
    members: tuple[int, ...]
    tokens: int
    value: int
    relevance: float
    required: bool
    variant: str | None


def units_of(fragments: Sequence[Any]) -> list[VariantUnit]:
    """The units in rank order: relevance descending, then lead id ascending."""
    by_key: dict[Any, list[int]] = {}
    for i, fragment in enumerate(fragments):
        key = ("group", fragment.group) if fragment.group is not None else ("alone", i)
        by_key.setdefault(key, []).append(i)

    def fragment_key(i: int) -> tuple[float, str]:
        return (-float(fragments[i].relevance_score), fragments[i].fragment_id)

    groups = sorted(by_key.values(), key=lambda members: min(map(fragment_key, members)))
    units = []
    for rank, members in enumerate(groups):
        variants = {fragments[i].variant_of for i in members}
        assert len(variants) == 1, "a group's members share one variant_of"
        units.append(
            VariantUnit(
                rank=rank,
                members=tuple(members),
                tokens=sum(fragments[i].token_count for i in members),
                value=sum(value_of(fragments[i].relevance_score) for i in members),
                relevance=max(float(fragments[i].relevance_score) for i in members),
                required=any(bool(fragments[i].required) for i in members),
                variant=variants.pop(),
            )
        )
    return units


def _classes(units: Sequence[VariantUnit]) -> list[list[VariantUnit]]:
    by_set: dict[Any, list[VariantUnit]] = {}
    for unit in units:
        key = ("alone", unit.rank) if unit.variant is None else ("set", unit.variant)
        by_set.setdefault(key, []).append(unit)
    return list(by_set.values())


def multiple_choice_bound(candidates: Sequence[VariantUnit], room: int) -> int:
    """floor of the relaxation's optimum, by its dual (minimum at lam = 0 or where two of a
    set's lines, or a line and 0, cross)."""
    classes = _classes(candidates)
    lams = {Fraction(0)}
    for members in classes:
        for a in members:
            if a.tokens:
                lams.add(Fraction(a.value, a.tokens))
            for b in members:
                if a.tokens != b.tokens:
                    lam = Fraction(a.value - b.value, a.tokens - b.tokens)
                    if lam >= 0:
                        lams.add(lam)

    def dual(lam: Fraction) -> Fraction:
        return lam * room + sum(
            max([Fraction(0)] + [unit.value - lam * unit.tokens for unit in members])
            for members in classes
        )

    return math.floor(min(map(dual, lams)))


def _density_key(unit: VariantUnit) -> tuple[Any, ...]:
    if unit.tokens == 0:
        return (0, unit.rank)
    return (1, -Fraction(unit.value, unit.tokens), unit.rank)


def density_set(candidates: Sequence[VariantUnit], room: int) -> list[VariantUnit]:
    walk: list[VariantUnit] = []
    left = room
    for unit in sorted(candidates, key=_density_key):
        taken = unit.variant is not None and any(k.variant == unit.variant for k in walk)
        if not taken and unit.tokens <= left:
            walk.append(unit)
            left -= unit.tokens
    fitting = [unit for unit in candidates if unit.tokens <= room]
    if fitting:
        best = max(fitting, key=lambda unit: (unit.value, -unit.rank))
        if best.value > sum(unit.value for unit in walk):
            return [best]
    return walk


def optimal_set(candidates: Sequence[VariantUnit], room: int) -> list[VariantUnit]:
    if len(candidates) <= BRUTE_FORCE_LIMIT:
        return optimal_by_brute_force(candidates, room)
    return optimal_by_table(candidates, room)


def optimal_by_table(candidates: Sequence[VariantUnit], room: int) -> list[VariantUnit]:
    """The same set by dynamic programming over the sets, for more candidates and a small
    room: `best[c]` is the greatest (value, -tokens, flags) of a choice from the sets so far
    within c tokens, the flags an int whose bits are the kept units, the best-ranked unit the
    highest bit (sets own disjoint bits, so the three add up and compare as the rule says)."""
    room = min(room, sum(unit.tokens for unit in candidates))
    assert room <= 100_000, "the table is for small token counts"
    top = max((unit.rank for unit in candidates), default=0)
    best = [(0, 0, 0)] * (room + 1)
    for members in _classes(candidates):
        before = best
        best = list(before)
        for unit in members:
            add = (unit.value, -unit.tokens, 1 << (top - unit.rank))
            for c in range(unit.tokens, room + 1):
                grown = tuple(a + b for a, b in zip(before[c - unit.tokens], add))
                if grown > best[c]:
                    best[c] = grown  # type: ignore[assignment]
    flags = best[room][2]
    return [unit for unit in candidates if flags >> (top - unit.rank) & 1]


def optimal_by_brute_force(candidates: Sequence[VariantUnit], room: int) -> list[VariantUnit]:
    """Every subset with at most one unit per set that fits: most value, fewest tokens, then
    the greatest tuple of kept flags in rank order."""
    assert len(candidates) <= 14, "too many candidates to try every subset"
    best: tuple[Any, ...] | None = None
    for flags in product((False, True), repeat=len(candidates)):
        chosen = [unit for unit, kept in zip(candidates, flags) if kept]
        names = [unit.variant for unit in chosen if unit.variant is not None]
        tokens = sum(unit.tokens for unit in chosen)
        if tokens <= room and len(names) == len(set(names)):
            key = (sum(unit.value for unit in chosen), -tokens, flags)
            if best is None or key > best:
                best = key
    assert best is not None
    return [unit for unit, kept in zip(candidates, best[2]) if kept]


def _output_order(kept: Sequence[VariantUnit], order: str) -> list[int]:
    if order == "input":
        return sorted(i for unit in kept for i in unit.members)
    in_rank_order = sorted(kept, key=lambda unit: unit.rank)
    if order == "edges":
        in_rank_order = in_rank_order[0::2] + in_rank_order[1::2][::-1]
    return [i for unit in in_rank_order for i in unit.members]


def reference(
    fragments: Sequence[Any],
    budget: int,
    strategy: str = "greedy",
    min_relevance: float = 0.0,
    on_overflow: str = "keep_top",
    order: str = "ranking",
) -> Outcome:
    """What `compress` and `explain` return for these valid fragments, or `Refusal`."""
    assert strategy in STRATEGIES, strategy
    units = units_of(fragments)
    required = [unit for unit in units if unit.required]
    settled = {unit.variant for unit in required if unit.variant is not None}
    decided: dict[int, tuple[bool, str, int | None]] = {}
    for unit in units:
        if unit.required:
            decided[unit.rank] = (True, "required", None)
        elif unit.relevance < min_relevance:
            decided[unit.rank] = (False, "below_min_relevance", None)
        elif unit.variant in settled:
            decided[unit.rank] = (False, "variant_kept", None)
    candidates = [unit for unit in units if unit.rank not in decided]
    required_tokens = sum(unit.tokens for unit in required)
    kept = list(required)
    extra = 0

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
        extra = multiple_choice_bound(candidates, room)
        if strategy in ("greedy", "prefix"):
            left, stopped = room, False
            taken: set[str] = set()
            for unit in candidates:
                if stopped:
                    decided[unit.rank] = (False, "after_stop", None)
                elif unit.variant in taken:
                    decided[unit.rank] = (False, "variant_kept", left)
                elif unit.tokens <= left:
                    decided[unit.rank] = (True, "fits", left)
                    kept.append(unit)
                    left -= unit.tokens
                    if unit.variant is not None:
                        taken.add(unit.variant)
                else:
                    decided[unit.rank] = (False, "no_room", left)
                    stopped = strategy == "prefix"
            overflow = not kept and bool(candidates)
        else:
            chosen = (density_set if strategy == "density" else optimal_set)(candidates, room)
            kept_sets = {unit.variant for unit in chosen if unit.variant is not None}
            for unit in candidates:
                if unit in chosen:
                    decided[unit.rank] = (True, "chosen", None)
                elif unit.variant in kept_sets:
                    decided[unit.rank] = (False, "variant_kept", None)
                else:
                    reason = "not_chosen" if unit.tokens <= room else "no_room"
                    decided[unit.rank] = (False, reason, None)
            kept += chosen
            nothing_fits = all(unit.tokens > room for unit in candidates)
            overflow = not kept and bool(candidates) and nothing_fits
        if overflow:
            top = candidates[0]
            if on_overflow == "keep_top":
                kept = [top]
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
        kept=_output_order(kept, order),
        compressed_tokens=sum(unit.tokens for unit in kept),
        value_kept=sum(unit.value for unit in kept),
        value_bound=sum(unit.value for unit in required) + extra,
        decisions=decisions,
    )
