"""Turns (docs/turns.md): a call that sends first the longest leading run of what an earlier
call sent that the value allows, so that a provider's cache reads it again, then fills the
rest of the budget as usual. The turn is made on the policy path's units; the reused units
stand in each fill as required units do."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..._values import plain_str
from ...policy import Policy
from ...types import ContextFragment
from .columns import Columns
from .compress import policy_units
from .fill_bounds import fill_bounds
from .ranking import ranking
from .units import Decision, Units, Walk

__all__ = ["Turn", "matched_rows", "turn"]


class Turn(NamedTuple):
    """The kept fragments in output order, their tokens and value, the bound of the call
    without `previous`, the reused tokens, and the decisions when explaining."""

    kept: list[int]
    compressed_tokens: int
    value: int
    bound: int
    reused_tokens: int
    decisions: list[Decision]
    exact: bool = True


class _Fill(NamedTuple):
    units: Units  # with the reused units pinned
    walk: Walk
    budget: int
    on_overflow: str


def matched_rows(
    fragments: tuple[ContextFragment, ...], columns: Columns, previous: Sequence[ContextFragment]
) -> list[int]:
    """The rows of `fragments` that `previous` sent, in its order, up to the first fragment
    it sent that is not one of them (the same id, tokens and content)."""
    row_of = {fid: row for row, fid in enumerate(columns.fragment_ids)}
    matched = []
    for sent in previous:
        # The plain str an id holds, so that a subclass's own `__eq__` cannot match a row
        # (and nothing that only claims `str` as its `__class__` does).
        fid = plain_str(sent.fragment_id)
        row = None if fid is None else row_of.get(fid)
        if row is None:
            break
        current = fragments[row]
        # The fields as given, compared as Python compares them (a numpy count compares
        # with a float as a float), as the Rust backend compares them.
        if not (
            sent is current
            or (sent.token_count == current.token_count and sent.content == current.content)
        ):
            break
        matched.append(row)
    return matched


def turn(
    columns: Columns,
    budget: int,
    strategy: str,
    policy: Policy,
    matched: list[int],
    max_value_loss: float,
    headroom: float,
    explain: bool,
    max_work: int | None = None,
) -> Turn:
    """The turn that reuses what it can of the `matched` rows (in the order sent); each
    `optimal` fill does at most `max_work`."""
    units = policy_units(columns, ranking(columns), policy, max_work)
    # The call without `previous` comes first: it raises what `compress` raises.
    on_overflow = policy.on_overflow
    ordinary = _Fill(units, units.walk(budget, strategy, on_overflow, False), budget, on_overflow)
    run = reusable_run(units, matched, budget)
    reused, fill, fills_exact = _longest_reuse(run, ordinary, strategy, max_value_loss)
    if len(reused) < len(run) and headroom:
        fill = _with_headroom(fill, headroom, strategy)
    if explain:
        # Only the chosen fill is told: walked again, recording its steps.
        fill = fill._replace(walk=fill.units.walk(fill.budget, strategy, fill.on_overflow, True))
    # The reuse is measured against the call's value without it, and a fill stopped short
    # may have been refused a length that holds: exact only if every walk finished.
    exact = ordinary.walk.exact and fills_exact and fill.walk.exact
    return _turn_of(fill, reused, policy.order, units.bound(budget), explain)._replace(exact=exact)


def reusable_run(units: Units, matched: list[int], budget: int) -> list[int]:
    """R: the units of the matched rows, a whole unit at a time, up to the first that is not
    whole and in member order there or is already in R, is not eligible, is in a variant set
    R or a required unit already has, or would take R and the required units it leaves out
    over the budget."""
    if not budget or units.required_tokens > budget:
        return []
    unit_of, members, set_of, settled = units.unit_of, units.members, units.set_of, units.settled
    required, eligible = units.required, units.candidate
    run: list[int] = []
    in_run: set[int] = set()
    taken_sets: set[int] = set()
    tokens = units.required_tokens
    position = 0
    while position < len(matched):
        if unit_of is None or members is None:
            unit, stop = matched[position], position + 1
        else:
            unit = unit_of[matched[position]]
            stop = position + len(members[unit])
            if matched[position:stop] != members[unit]:
                break
        if unit in in_run or not (required[unit] or eligible[unit]):
            break
        variant = -1 if set_of is None else set_of[unit]
        if variant >= 0 and (variant in taken_sets or (settled is not None and settled[unit])):
            break
        # A required unit's tokens are counted already.
        size = 0 if required[unit] else units.tokens[unit]
        if tokens + size > budget:
            break
        tokens += size
        taken_sets.add(variant)
        in_run.add(unit)
        run.append(unit)
        position = stop
    return run


def _longest_reuse(
    run: list[int], ordinary: _Fill, strategy: str, max_value_loss: float
) -> tuple[list[int], _Fill, bool]:
    """The longest leading part of `run` whose fill keeps at least (1 - max_value_loss) of
    the call's value without it, compared exactly, with that fill (with none, the call), and
    whether every fill tried finished."""
    if not run:
        return [], ordinary, True
    units = ordinary.units
    best = units.value(ordinary.walk)
    loss, scale = max_value_loss.as_integer_ratio()

    def enough(value: int) -> bool:
        return value >= best or (best - value) * scale <= loss * best

    budget, on_overflow = ordinary.budget, ordinary.on_overflow
    all_finished = True

    def fill(length: int, most: int) -> _Fill | None:
        """F_length, when it keeps enough; `most`, what it keeps at most, may tell at once
        that it does not."""
        nonlocal all_finished
        if not enough(most):
            return None
        pinned = units.pinning(run[:length])
        # Pinned units are kept first and fit: the overflow rules never act.
        walk = pinned.walk(budget, strategy, on_overflow, False)
        all_finished = all_finished and walk.exact
        return _Fill(pinned, walk, budget, on_overflow) if enough(pinned.value(walk)) else None

    bounds = fill_bounds(units, run, budget)
    if strategy == "optimal":
        reused, bisected = _bisected(run, fill, [0, *reversed(list(bounds))]) or ([], ordinary)
        return reused, bisected, all_finished
    for length, most in zip(range(len(run), 0, -1), bounds):
        found = fill(length, most)
        if found is not None:
            return run[:length], found, all_finished
    return [], ordinary, all_finished


def _bisected(
    run: list[int], fill: Callable[[int, int], _Fill | None], bounds: list[int]
) -> tuple[list[int], _Fill] | None:
    """The longest reuse under `optimal`, by bisection (`bounds[k]`: the most F_k keeps):
    each unit pinned narrows the sets the fill chooses from, and `optimal` keeps the most
    value of them, so a longer reuse never keeps more and the lengths that keep enough are
    those up to the longest."""
    found = None
    shortest, longest = 1, len(run)  # the longest that keeps enough, if any, lies between
    while shortest <= longest:
        length = (shortest + longest) // 2
        candidate = fill(length, bounds[length])
        if candidate is None:
            longest = length - 1
        else:
            found = run[:length], candidate
            shortest = length + 1
    return found


def _with_headroom(fill: _Fill, headroom: float, strategy: str) -> _Fill:
    """The fill made again with floor(headroom x budget) fewer tokens, keeping nothing where
    nothing fits; `fill` when the pinned and required units do not fit that, or when it
    keeps nothing."""
    share, scale = headroom.as_integer_ratio()
    smaller = fill.budget - share * fill.budget // scale
    units = fill.units
    # Not smaller: the walk is `fill`'s, or keeps nothing where `fill` keeps its top unit.
    if smaller == fill.budget or units.required_tokens > smaller:
        return fill
    walk = units.walk(smaller, strategy, "strict", False)
    return _Fill(units, walk, smaller, "strict") if walk.kept else fill


def _turn_of(fill: _Fill, reused: list[int], order: str, bound: int, explain: bool) -> Turn:
    """The reused units' fragments in the order sent, then the fill's other units in
    `order`; the metadata of the whole; the fill's decisions, the reused told as such."""
    units, walk = fill.units, fill.walk
    reused_fragments = units.fragments_of(reused)
    in_run = set(reused)
    others = [unit for unit in walk.kept if unit not in in_run]
    kept = reused_fragments + units.arranged(others, order)
    tokens = units.tokens
    compressed = sum(map(tokens.__getitem__, walk.kept))
    reused_tokens = sum(map(tokens.__getitem__, reused))
    decisions: list[Decision] = []
    if explain:
        decisions = units.decisions(walk, fill.budget)
        for index in reused_fragments:
            decisions[index] = decisions[index]._replace(
                kept=True, reason="reused", budget_left=None
            )
    return Turn(kept, compressed, units.value(walk), bound, reused_tokens, decisions)
