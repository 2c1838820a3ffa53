"""Turns (docs/turns.md) computed plainly: `compress` with `previous`, `max_value_loss` and
`headroom`, built from the library's ordinary, separately tested `explain`.

Every fill is an ordinary public `explain(...)` call on a copy of the fragments in which the
units of R[:k] are marked `required=True` (`dataclasses.replace`), its answer mapped back to
the caller's objects by index. This module only matches, cuts the reusable run, compares
values exactly and arranges; nothing here is fast, everything here should be obviously right.

`reference_turn(...)` returns a `TurnOutcome`, or raises what the call without `previous`
raises (a `BudgetExceededError` under `strict` or `raise`): V* and the bound are that call's,
so a call it refuses has nothing to compare with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any, NamedTuple

from skeleton_compressor import ContextFragment, FragmentDecision, SkeletonExplanation, explain

__all__ = [
    "UNITS",
    "TurnOutcome",
    "Units",
    "matched_run",
    "reference_turn",
    "reusable_run",
    "same_fragment",
    "units_of",
    "value_units",
]

UNITS = 2**32
"""Value is counted in units of 2**-32 of relevance."""


class TurnOutcome(NamedTuple):
    """What `compress`/`explain` with `previous` return, in plain terms."""

    fragments: tuple[ContextFragment, ...]  # the caller's objects, in output order
    reused_tokens: int
    compressed_tokens: int
    value_kept_units: int
    value_bound_units: int
    decisions: tuple[FragmentDecision, ...]  # one per fragment, in input order
    # How the answer came about (for hypothesis' events and the scratch checks):
    run: int  # |R|, in units
    k: int  # units of R kept at the head
    headroom_used: bool  # the smaller fill stands


class Units(NamedTuple):
    """This call's units: a group whole (members in input order) or a fragment alone,
    numbered by their first member."""

    unit_of: list[int]
    members: list[list[int]]
    required: list[bool]
    relevance: list[float]  # the best member's
    variant: list[str | None]
    tokens: list[int]


def value_units(value: float | None) -> int:
    """A metadata value (units / 2**32 as a float) back in units: exact."""
    assert value is not None
    units = round(value * UNITS)
    assert units / UNITS == value
    return units


def kept_units(fragments: Sequence[ContextFragment]) -> int:
    """The value of `fragments` in units, as the strategies count it (`value_kept` is their
    relevance added up as written, not in units)."""
    return sum(round(float(f.relevance_score) * UNITS) for f in fragments)


def units_of(fragments: Sequence[ContextFragment]) -> Units:
    unit_of: list[int] = []
    members: list[list[int]] = []
    by_group: dict[str, int] = {}
    for index, fragment in enumerate(fragments):
        if fragment.group is None:
            unit = len(members)
        else:
            unit = by_group.setdefault(fragment.group, len(members))
        if unit == len(members):
            members.append([])
        members[unit].append(index)
        unit_of.append(unit)
    return Units(
        unit_of,
        members,
        [any(fragments[i].required for i in m) for m in members],
        [max(float(fragments[i].relevance_score) for i in m) for m in members],
        [fragments[m[0]].variant_of for m in members],
        [sum(fragments[i].token_count for i in m) for m in members],
    )


def same_fragment(before: ContextFragment, now: ContextFragment) -> bool:
    """The same fragment: id, token count and content equal (relevance may differ)."""
    return before is now or (
        before.fragment_id == now.fragment_id
        and before.token_count == now.token_count
        and before.content == now.content
    )


def matched_run(
    fragments: Sequence[ContextFragment], previous: Sequence[ContextFragment]
) -> list[int]:
    """Step 1: this call's index of each of `previous`'s fragments, up to the first that
    has no match (no fragment of that id here, or not the same one)."""
    index_of = {fragment.fragment_id: i for i, fragment in enumerate(fragments)}
    run = []
    for before in previous:
        index = index_of.get(before.fragment_id)
        if index is None or not same_fragment(before, fragments[index]):
            break
        run.append(index)
    return run


def reusable_run(
    fragments: Sequence[ContextFragment],
    skeleton_budget: int,
    previous: Sequence[ContextFragment],
    min_relevance: float,
) -> list[int]:
    """Step 2: R, as this call's units, in `previous`'s order."""
    units = units_of(fragments)
    required_units = {u for u, pinned in enumerate(units.required) if pinned}
    if skeleton_budget == 0 or sum(units.tokens[u] for u in required_units) > skeleton_budget:
        return []
    run = matched_run(fragments, previous)
    reusable: list[int] = []
    position = 0
    while position < len(run):
        unit = units.unit_of[run[position]]
        members = units.members[unit]
        # Whole, members in input order, one after another in `previous`.
        if run[position : position + len(members)] != members:
            break
        if unit in reusable:
            break
        if not (units.required[unit] or units.relevance[unit] >= min_relevance):
            break
        name = units.variant[unit]
        if name is not None:
            if any(units.variant[u] == name for u in reusable):
                break
            if any(units.variant[u] == name and u != unit for u in required_units):
                break
        taken = set(reusable) | {unit} | required_units
        if sum(units.tokens[u] for u in taken) > skeleton_budget:
            break
        reusable.append(unit)
        position += len(members)
    return reusable


def _pinned_explain(
    fragments: tuple[ContextFragment, ...],
    units: Units,
    pinned: Sequence[int],
    skeleton_budget: int,
    options: dict[str, Any],
) -> SkeletonExplanation:
    """The ordinary `explain` in ranking order on a copy with the pinned units' members
    marked required."""
    copy = list(fragments)
    for unit in pinned:
        for index in units.members[unit]:
            copy[index] = replace(fragments[index], required=True)
    return explain(tuple(copy), skeleton_budget, order="ranking", **options)


def _indices(fragments: Sequence[ContextFragment], kept: Sequence[ContextFragment]) -> list[int]:
    index_of = {fragment.fragment_id: i for i, fragment in enumerate(fragments)}
    return [index_of[fragment.fragment_id] for fragment in kept]


def reference_turn(
    fragments: tuple[ContextFragment, ...],
    skeleton_budget: int,
    previous: Sequence[ContextFragment] | None = None,
    *,
    max_value_loss: float = 0.0,
    headroom: float = 0.0,
    strategy: str = "greedy",
    min_relevance: float = 0.0,
    on_overflow: str = "keep_top",
    order: str = "ranking",
    backend: str = "python",
) -> TurnOutcome:
    """What `compress(fragments, skeleton_budget, previous=..., max_value_loss=...,
    headroom=..., ...)` returns, for valid arguments."""
    budget = skeleton_budget
    options: dict[str, Any] = {
        "strategy": strategy,
        "backend": backend,
        "min_relevance": min_relevance,
    }
    # The call without `previous`: V*, the bound, and the answer when nothing is reused.
    plain = explain(fragments, budget, order=order, on_overflow=on_overflow, **options)
    vstar = kept_units(plain.result.fragments)
    bound = value_units(plain.result.metadata.value_bound)
    units = units_of(fragments)
    reusable = [] if previous is None else reusable_run(fragments, budget, previous, min_relevance)
    required_units = [u for u, pinned in enumerate(units.required) if pinned]

    # Step 3: the longest R[:k] whose fill keeps at least (1 - eps) x V*, exactly.
    loss = Fraction(max_value_loss)
    num, den = loss.numerator, loss.denominator
    k, fill = 0, None
    for size in range(len(reusable), 0, -1):
        try:
            trial = _pinned_explain(
                fragments, units, reusable[:size], budget, {**options, "on_overflow": on_overflow}
            )
        except Exception as error:  # pragma: no cover - the reference's own check
            raise AssertionError(f"a fill with R[:{size}] pinned raised {error!r}") from error
        # R fits by construction: the fill's own overflow rules never trigger.
        assert not trial.result.metadata.over_budget, "a pinned fill went over budget"
        kept_ids = {f.fragment_id for f in trial.result.fragments}
        assert all(
            fragments[i].fragment_id in kept_ids for u in reusable[:size] for i in units.members[u]
        ), "a pinned unit was not kept"
        value = kept_units(trial.result.fragments)
        if value >= vstar or (vstar - value) * den <= num * vstar:
            k, fill = size, trial
            break
    pins = reusable[:k]

    # Step 4: headroom, when the cached prompt breaks anyway.
    headroom_used = False
    if k < len(reusable) and headroom > 0:
        share = Fraction(headroom)
        smaller = budget - (share.numerator * budget) // share.denominator
        needed = sum(units.tokens[u] for u in set(pins) | set(required_units))
        if needed <= smaller:
            try:
                trial = _pinned_explain(
                    fragments, units, pins, smaller, {**options, "on_overflow": "strict"}
                )
            except Exception as error:  # pragma: no cover - the reference's own check
                raise AssertionError(f"the headroom fill raised {error!r}") from error
            assert trial.result.metadata.compressed_tokens <= smaller
            if trial.result.fragments:
                fill, headroom_used = trial, True

    if fill is None:
        # Nothing reused and no smaller fill: the call without `previous` itself.
        assert k == 0
        result = plain.result
        metadata = result.metadata
        return TurnOutcome(
            result.fragments,
            0,
            metadata.compressed_tokens,
            vstar,
            bound,
            plain.decisions,
            len(reusable),
            0,
            False,
        )

    # Step 5: R[:k] in previous's order, then the fill's other units by `order`.
    pinned_indices = [i for u in pins for i in units.members[u]]
    if previous is not None:
        assert pinned_indices == matched_run(fragments, previous)[: len(pinned_indices)]
    pinned_set = set(pinned_indices)
    rest = [i for i in _indices(fragments, fill.result.fragments) if i not in pinned_set]
    if order == "input":
        tail = sorted(rest)
    else:
        rest_units: list[list[int]] = []
        for index in rest:  # ranking order: a unit's members side by side
            if rest_units and units.unit_of[rest_units[-1][0]] == units.unit_of[index]:
                rest_units[-1].append(index)
            else:
                rest_units.append([index])
        if order == "edges":
            rest_units = rest_units[0::2] + rest_units[1::2][::-1]
        tail = [i for unit in rest_units for i in unit]
    kept = tuple(fragments[i] for i in pinned_indices + tail)

    decisions = []
    for index, (made, ordinary) in enumerate(zip(fill.decisions, plain.decisions)):
        # Pinning changes no relevance, so no rank.
        assert made.rank == ordinary.rank
        if index in pinned_set:
            assert (made.kept, made.reason, made.budget_left) == (True, "required", None)
            decisions.append(FragmentDecision(fragments[index], True, "reused", made.rank, None))
        else:
            decisions.append(
                FragmentDecision(
                    fragments[index], made.kept, made.reason, made.rank, made.budget_left
                )
            )

    compressed = sum(f.token_count for f in kept)
    value = kept_units(kept)
    assert compressed == fill.result.metadata.compressed_tokens
    assert math.fsum(f.relevance_score for f in kept) == fill.result.metadata.value_kept
    return TurnOutcome(
        kept,
        sum(fragments[i].token_count for i in pinned_indices),
        compressed,
        value,
        bound,
        tuple(decisions),
        len(reusable),
        k,
        headroom_used,
    )
