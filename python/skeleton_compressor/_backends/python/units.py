"""The selection policy in plain Python, for the fallback backend: fragments of one group form
a unit, kept or dropped whole; units of one variant set, of which at most one is kept; required
units first (settling their variant sets); a relevance floor; an overflow policy; an output
order; and the reason for every decision."""

from __future__ import annotations

from collections.abc import Iterable
from copy import copy
from itertools import compress
from typing import NamedTuple

from ... import _messages
from .budget_walk import KEPT, NO_ROOM, PASSED_OVER, walk_budget
from .by_value import density_set, optimal_set
from .value import Densities, fragment_values
from .variants.bound import multiple_choice_bound
from .variants.optimal import multiple_choice_set
from .work import Work

__all__ = ["Decision", "Units", "Walk", "grouped_units"]


class Decision(NamedTuple):
    kept: bool
    reason: str
    rank: int
    budget_left: int | None


# The reason each step of a walk in rank order explains.
_REASONS = {KEPT: "fits", PASSED_OVER: "variant_kept", NO_ROOM: "no_room"}


class Walk(NamedTuple):
    kept: list[int]  # units: required ones, then the walk's
    walked: list[tuple[int, bool, str, int | None]]  # (unit, kept, reason, what was left)
    # The walk in rank order's (unit, step, what was left), as it recorded them: each step's
    # reason is looked up as its decision is made, not in a pass of its own.
    steps: list[tuple[int, int, int]]
    top_over_budget: int | None
    required_overflow: bool
    # Whether the strategy's set is exact: False when `optimal` ran out of work.
    exact: bool = True


def grouped_units(count: int, grouped: dict[int, str]) -> tuple[list[list[int]], list[int]]:
    """The units of `count` fragments, `grouped` giving the group of those in one: each
    unit's members in input order (units numbered by their first member's place), and each
    fragment's unit."""
    unit_of: list[int] = []
    members: list[list[int]] = []
    unit_of_group: dict[str, int] = {}
    for index in range(count):
        group = grouped.get(index)
        unit = len(members) if group is None else unit_of_group.setdefault(group, len(members))
        if unit == len(members):
            members.append([index])
        else:
            members[unit].append(index)
        unit_of.append(unit)
    return members, unit_of


class Units:
    """Units ranked by their leads (each unit's first member in the fragment ranking).

    Without groups each fragment is the unit of the same index, and `members` and `unit_of`
    (each fragment's unit) are None. Without variants `set_of` is None; with them,
    `set_of[unit]` is the unit's variant set (-1 for none), and `settled[unit]` tells a unit
    whose set has a required unit: it is never a candidate, nor counted by the bound, and
    its reason is `variant_kept` (unless it is below the floor, which is told first as for
    every unit)."""

    __slots__ = (
        "_densities",
        "_rank",
        "candidate",
        "candidates",
        "fragments",
        "max_work",
        "members",
        "pinned",
        "ranked",
        "required",
        "required_tokens",
        "required_value",
        "set_of",
        "settled",
        "tokens",
        "unit_of",
        "values",
    )

    def __init__(
        self,
        token_counts: list[int],
        negated_scores: list[float],
        required: list[int],
        grouped: dict[int, str],
        ranking: list[int],
        min_relevance: float,
        variants: dict[int, str] | None = None,
        max_work: int | None = None,
    ) -> None:
        count = len(token_counts)
        # The most work `optimal` may do per budget (None: no limit).
        self.max_work = max_work
        values = fragment_values(negated_scores)
        floor = -min_relevance
        self.fragments = count
        self.members: list[list[int]] | None = None
        self.unit_of: list[int] | None = None
        if grouped:
            members, unit_of = grouped_units(count, grouped)
            self.members, self.unit_of = members, unit_of
            self.tokens = [sum([token_counts[i] for i in unit]) for unit in members]
            self.values = [sum([values[i] for i in unit]) for unit in members]
            self.required = [False] * len(members)
            for index in required:
                self.required[unit_of[index]] = True
            seen = [False] * len(members)
            ranked = []
            candidate = [False] * len(members)
            for index in ranking:
                unit = unit_of[index]
                if not seen[unit]:
                    seen[unit] = True
                    ranked.append(unit)
                    candidate[unit] = not self.required[unit] and negated_scores[index] <= floor
        else:
            self.tokens = token_counts
            self.values = values
            self.required = [False] * count
            ranked = ranking
            candidate = list(map(floor.__ge__, negated_scores))
            for index in required:
                self.required[index] = True
                candidate[index] = False
        self.ranked = ranked
        self.candidate = candidate
        self.pinned = [unit for unit, pinned in enumerate(self.required) if pinned]
        self.set_of: list[int] | None = None
        self.settled: list[bool] | None = None
        self.candidates = list(compress(ranked, map(candidate.__getitem__, ranked)))
        if variants:
            self.set_of = self._variant_sets(variants)
            self._settle()
        self.required_tokens = sum(map(self.tokens.__getitem__, self.pinned))
        self.required_value = sum(map(self.values.__getitem__, self.pinned))
        self._densities: Densities | None = None
        self._rank: list[int] | None = None

    def _variant_sets(self, variants: dict[int, str]) -> list[int]:
        """Each unit's variant set, numbered, -1 for none (a group's members share their
        variant_of: the first member's is the unit's)."""
        members = self.members
        set_number: dict[str, int] = {}
        set_of = []
        for unit in range(len(self.required)):
            name = variants.get(unit if members is None else members[unit][0])
            set_of.append(-1 if name is None else set_number.setdefault(name, len(set_number)))
        return set_of

    def _settle(self) -> None:
        """A unit whose set has a required unit stops being a candidate. Eligibility
        (`candidate`) is left as the floor says, for the reasons."""
        set_of = self.set_of
        assert set_of is not None
        settled_sets = {set_of[unit] for unit in self.pinned} - {-1}
        settled = [
            variant in settled_sets and not pinned for variant, pinned in zip(set_of, self.required)
        ]
        self.settled = settled
        if settled_sets:
            self.candidates = [unit for unit in self.candidates if not settled[unit]]

    def pinning(self, units: Iterable[int]) -> Units:
        """These units with `units` standing as required ones: kept, their tokens taken from
        the budget first, their variant sets settled, told as `required`. Ranks and the
        eligibility the floor gives stay."""
        required = self.required
        added = [unit for unit in units if not required[unit]]
        pinned = copy(self)
        pinned.required = required = required[:]
        for unit in added:
            required[unit] = True
        pinned.pinned = self.pinned + added
        pinned.required_tokens = self.required_tokens + sum(map(self.tokens.__getitem__, added))
        pinned.required_value = self.required_value + sum(map(self.values.__getitem__, added))
        pinned.candidates = [unit for unit in self.candidates if not required[unit]]
        if self.set_of is not None:
            pinned._settle()
        pinned._densities = None
        pinned._rank = self.rank
        return pinned

    @property
    def densities(self) -> Densities:
        """The eligible units that are not required, by density."""
        if self._densities is None:
            self._densities = Densities(self.values, self.tokens, self.candidates)
        return self._densities

    @property
    def rank(self) -> list[int]:
        """Each unit's 0-based rank."""
        if self._rank is None:
            self._rank = rank = [0] * len(self.ranked)
            for position, unit in enumerate(self.ranked):
                rank[unit] = position
        return self._rank

    def bound(self, budget: int) -> int:
        """The required units' value, and the most the others could add within what they
        leave if any unit could be taken in part."""
        room = budget - self.required_tokens
        if not budget or room < 0:
            return self.required_value
        if self.set_of is not None:
            return self.required_value + multiple_choice_bound(
                self.values, self.tokens, self.candidates, self.set_of, room
            )
        return self.required_value + self.densities.bound(room)

    def walk(self, budget: int, strategy: str, on_overflow: str, explain: bool) -> Walk:
        """One budget packed by `strategy`; `optimal` does at most `max_work` (None: no
        limit), and the walk's `exact` says whether it finished."""
        required_units = self.pinned
        if self.required_tokens > budget:
            if on_overflow != "keep_top":
                raise _messages.budget_exceeded_error(budget, self.required_tokens, True)
            return Walk(required_units, [], [], None, True)
        candidates, tokens = self.candidates, self.tokens
        if not budget or not candidates:
            return Walk(required_units, [], [], None, False)
        room = budget - self.required_tokens
        prefix = strategy == "prefix"
        walked: list[tuple[int, bool, str, int | None]] = []
        steps: list[tuple[int, int, int]] = []
        by_rank = prefix or strategy == "greedy"
        exact = True
        if by_rank:
            # A unit passed over for its variant set does not stop `prefix`.
            kept, _ = walk_budget(
                candidates, tokens, room, prefix, self.set_of, steps if explain else None
            )
            overflow = not kept
        else:
            set_of = self.set_of
            work = Work(self.max_work)
            if strategy != "optimal":
                kept = density_set(self.densities, candidates, room, set_of)
            elif set_of is None:
                kept = optimal_set(self.densities, room, self.rank, work)
            else:
                kept = multiple_choice_set(
                    self.values, tokens, candidates, set_of, room, self.rank, work
                )
            if work.stopped:
                # Stopped short: the best set found, unless `density`'s is worth as much.
                by_density = density_set(self.densities, candidates, room, set_of)
                values = self.values
                if sum(map(values.__getitem__, by_density)) >= sum(map(values.__getitem__, kept)):
                    kept = by_density
                exact = False
            # Under `optimal` a unit of no value that fits is left out, and that is no overflow.
            overflow = not kept and min(map(tokens.__getitem__, candidates)) > room
        top_over_budget = None
        if overflow and not required_units:
            top = candidates[0]
            if on_overflow == "keep_top":
                kept.append(top)
                top_over_budget = top
            elif on_overflow == "raise":
                needed = tokens[top] if prefix else min(map(tokens.__getitem__, candidates))
                raise _messages.budget_exceeded_error(budget, needed, False)
        if explain and not by_rank:
            chosen = set(kept)
            # A unit kept alone over budget was not chosen: its set's others are told as
            # the walks in rank order tell them.
            kept_sets: frozenset[int] = (
                frozenset()
                if self.set_of is None or top_over_budget is not None
                else frozenset(map(self.set_of.__getitem__, kept)) - {-1}
            )
            walked = [self._chosen(unit, unit in chosen, room, kept_sets) for unit in candidates]
        return Walk(required_units + kept, walked, steps, top_over_budget, False, exact)

    def _chosen(
        self, unit: int, kept: bool, room: int, kept_sets: frozenset[int]
    ) -> tuple[int, bool, str, int | None]:
        """A value strategy's decision on a unit, with no budget left to tell; but the unit
        kept alone over budget is told as the walks in rank order tell it, and a unit left
        out while a unit of its variant set is kept says so."""
        fits = self.tokens[unit] <= room
        if kept:
            return (unit, True, "chosen", None) if fits else (unit, True, "top_over_budget", room)
        if kept_sets and self.set_of is not None and self.set_of[unit] in kept_sets:
            return unit, False, "variant_kept", None
        return unit, False, "not_chosen" if fits else "no_room", None

    def fragments_of(self, units: list[int]) -> list[int]:
        """The fragments of `units`, unit by unit, members in input order."""
        members = self.members
        return units if members is None else [i for unit in units for i in members[unit]]

    def arranged(self, units: list[int], order: str) -> list[int]:
        """The fragments of `units` in `order`."""
        if order == "input":
            return sorted(self.fragments_of(units))
        ranked = self.ranked
        in_order = list(compress(ranked, map(set(units).__contains__, ranked)))
        if order == "edges":
            in_order = in_order[::2] + in_order[1::2][::-1]
        return self.fragments_of(in_order)

    def kept_fragments(self, walk: Walk, order: str) -> tuple[list[int], int, int]:
        """The kept fragments in `order`, their tokens and their value."""
        kept = walk.kept
        compressed = sum(map(self.tokens.__getitem__, kept))
        return self.arranged(kept, order), compressed, self.value(walk)

    def value(self, walk: Walk) -> int:
        """The value the walk keeps."""
        return sum(map(self.values.__getitem__, walk.kept))

    def decisions(self, walk: Walk, budget: int) -> list[Decision]:
        """One decision per fragment, in input order."""
        rank = self.rank
        settled = self.settled
        by_unit: list[Decision] = []
        for unit, pinned in enumerate(self.required):
            if pinned:
                decision = Decision(True, "required", rank[unit], None)
            elif not self.candidate[unit]:
                decision = Decision(False, "below_min_relevance", rank[unit], None)
            elif settled is not None and settled[unit]:
                decision = Decision(False, "variant_kept", rank[unit], None)
            elif budget == 0:
                decision = Decision(False, "zero_budget", rank[unit], None)
            elif walk.required_overflow:
                decision = Decision(False, "no_room", rank[unit], None)
            else:
                decision = Decision(False, "after_stop", rank[unit], None)
            by_unit.append(decision)
        for unit, kept, reason, left in walk.walked:
            by_unit[unit] = Decision(kept, reason, rank[unit], left)
        for unit, step, left in walk.steps:
            by_unit[unit] = Decision(step == KEPT, _REASONS[step], rank[unit], left)
        if walk.top_over_budget is not None:
            top = by_unit[walk.top_over_budget]
            by_unit[walk.top_over_budget] = top._replace(kept=True, reason="top_over_budget")
        if self.members is None:
            return by_unit
        decisions = by_unit[:1] * self.fragments
        for unit, unit_members in enumerate(self.members):
            for index in unit_members:
                decisions[index] = by_unit[unit]
        return decisions
