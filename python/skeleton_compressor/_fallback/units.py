"""The selection policy in plain Python, for the fallback backend: fragments of one group form
a unit, kept or dropped whole; required units first; a relevance floor; an overflow policy; an
output order; and the reason for every decision."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .. import _messages

__all__ = ["Decision", "Units"]


class Decision(NamedTuple):
    kept: bool
    reason: str
    rank: int
    budget_left: int | None


class _Walk(NamedTuple):
    kept: list[int]  # units: required ones, then the walk's
    walked: list[tuple[int, str, int]]  # (unit, reason, what was left) when explaining
    top_over_budget: int | None
    required_overflow: bool


class Units:
    """Units ranked by their leads (each unit's first member in the fragment ranking)."""

    __slots__ = ("candidate", "members", "ranked", "required", "required_tokens", "tokens")

    def __init__(
        self,
        token_counts: list[int],
        negated_scores: list[float],
        required: list[int],
        grouped: dict[int, str],
        ranking: list[int],
        min_relevance: float,
    ) -> None:
        count = len(token_counts)
        if grouped:
            unit_of: Sequence[int] = []
            members: list[list[int]] = []
            unit_of_group: dict[str, int] = {}
            for index in range(count):
                group = grouped.get(index)
                unit = (
                    len(members) if group is None else unit_of_group.setdefault(group, len(members))
                )
                if unit == len(members):
                    members.append([index])
                else:
                    members[unit].append(index)
                unit_of.append(unit)  # type: ignore[attr-defined]
            tokens = [sum([token_counts[i] for i in unit]) for unit in members]
        else:
            unit_of = range(count)
            members = [[index] for index in range(count)]
            tokens = token_counts
        self.members = members
        self.tokens = tokens
        self.required = [False] * len(members)
        for index in required:
            self.required[unit_of[index]] = True
        seen = [False] * len(members)
        ranked = []
        floor = -min_relevance
        candidate = [False] * len(members)
        for index in ranking:
            unit = unit_of[index]
            if not seen[unit]:
                seen[unit] = True
                ranked.append(unit)
                candidate[unit] = not self.required[unit] and negated_scores[index] <= floor
        self.ranked = ranked
        self.candidate = candidate
        self.required_tokens = sum([t for t, r in zip(tokens, self.required) if r])

    def walk(self, budget: int, prefix: bool, on_overflow: str, explain: bool) -> _Walk:
        required_units = [unit for unit, pinned in enumerate(self.required) if pinned]
        if self.required_tokens > budget:
            if on_overflow != "keep_top":
                raise _messages.budget_exceeded_error(budget, self.required_tokens, True)
            return _Walk(required_units, [], None, True)
        tokens, candidate = self.tokens, self.candidate
        kept: list[int] = []
        walked: list[tuple[int, str, int]] = []
        top = smallest = None
        if budget:
            remaining = budget - self.required_tokens
            for unit in self.ranked:
                if not candidate[unit]:
                    continue
                size = tokens[unit]
                if top is None:
                    top = unit
                if smallest is None or size < smallest:
                    smallest = size
                if explain:
                    walked.append((unit, "fits" if size <= remaining else "no_room", remaining))
                if size <= remaining:
                    remaining -= size
                    kept.append(unit)
                elif prefix:
                    break
        top_over_budget = None
        if not kept and not required_units and top is not None:
            if on_overflow == "keep_top":
                kept.append(top)
                top_over_budget = top
            elif on_overflow == "raise":
                needed = tokens[top] if prefix else smallest
                raise _messages.budget_exceeded_error(budget, needed or 0, False)
        return _Walk(required_units + kept, walked, top_over_budget, False)

    def kept_fragments(self, walk: _Walk, order: str) -> tuple[list[int], int]:
        """The kept fragments in `order`, and their tokens."""
        members = self.members
        compressed = sum([self.tokens[unit] for unit in walk.kept])
        if order == "input":
            return sorted([i for unit in walk.kept for i in members[unit]]), compressed
        kept = set(walk.kept)
        units = [unit for unit in self.ranked if unit in kept]
        if order == "edges":
            units = units[::2] + units[1::2][::-1]
        return [i for unit in units for i in members[unit]], compressed

    def decisions(self, walk: _Walk, budget: int) -> list[Decision]:
        """One decision per fragment, in input order."""
        rank = [0] * len(self.members)
        for position, unit in enumerate(self.ranked):
            rank[unit] = position
        by_unit: dict[int, Decision] = {}
        for unit in range(len(self.members)):
            if self.required[unit]:
                by_unit[unit] = Decision(True, "required", rank[unit], None)
            elif not self.candidate[unit]:
                by_unit[unit] = Decision(False, "below_min_relevance", rank[unit], None)
            elif budget == 0:
                by_unit[unit] = Decision(False, "zero_budget", rank[unit], None)
            elif walk.required_overflow:
                by_unit[unit] = Decision(False, "no_room", rank[unit], None)
            else:
                by_unit[unit] = Decision(False, "after_stop", rank[unit], None)
        for unit, reason, left in walk.walked:
            by_unit[unit] = Decision(reason == "fits", reason, rank[unit], left)
        if walk.top_over_budget is not None:
            top = by_unit[walk.top_over_budget]
            by_unit[walk.top_over_budget] = top._replace(kept=True, reason="top_over_budget")
        decisions: list[Decision | None] = [None] * sum([len(m) for m in self.members])
        for unit, unit_members in enumerate(self.members):
            for index in unit_members:
                decisions[index] = by_unit[unit]
        return decisions  # type: ignore[return-value]
