"""The selection policy on generated inputs: both backends against a reference written
straight from the contract (units, pins, the floor, the overflow policy, the orders and the
reasons), valid and broken inputs alike."""

from __future__ import annotations

import functools
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skeleton_compressor import (
    BudgetExceededError,
    ContextFragment,
    FragmentError,
    SkeletonCompressorService,
)

EXAMPLES = int(os.environ.get("DIFFERENTIAL_EXAMPLES", "400"))
MODES = [
    (strategy, on_overflow, order)
    for strategy in ("greedy", "prefix")
    for on_overflow in ("keep_top", "strict", "raise")
    for order in ("ranking", "input", "edges")
]
FLOORS = [0.0, 0.25, 0.5, 0.6, 1.0]
BACKENDS = ("rust", "python")


@functools.cache
def service(
    backend: str, strategy: str, floor: float, on_overflow: str, order: str
) -> SkeletonCompressorService:
    return SkeletonCompressorService(
        backend=backend,
        strategy=strategy,
        min_relevance=floor,
        on_overflow=on_overflow,
        order=order,
    )


class Refused(Exception):
    def __init__(self, budget: int, needed: int) -> None:
        self.budget, self.needed = budget, needed


def reference(
    fragments: tuple[ContextFragment, ...],
    budget: int,
    strategy: str,
    floor: float,
    on_overflow: str,
    order: str,
) -> tuple[list[str], int, dict[str, tuple[bool, str, int, int | None]]]:
    """Kept ids in output order, their tokens, and each fragment's decision."""
    by_key: dict[Any, list[int]] = {}
    for i, fragment in enumerate(fragments):
        key = ("group", fragment.group) if fragment.group is not None else ("alone", i)
        by_key.setdefault(key, []).append(i)
    units = list(by_key.values())

    def rank_key(i: int) -> tuple[float, str]:
        return (-float(fragments[i].relevance_score), fragments[i].fragment_id)

    leads = [min(members, key=rank_key) for members in units]
    ranked = sorted(range(len(units)), key=lambda u: rank_key(leads[u]))
    rank = {unit: position for position, unit in enumerate(ranked)}
    tokens = [sum(fragments[i].token_count for i in members) for members in units]
    required = [any(fragments[i].required for i in members) for members in units]
    eligible = [
        required[u] or float(fragments[leads[u]].relevance_score) >= floor
        for u in range(len(units))
    ]
    required_tokens = sum(t for t, r in zip(tokens, required) if r)
    decided: dict[int, tuple[bool, str, int | None]] = {}
    kept = [u for u in range(len(units)) if required[u]]
    for u in kept:
        decided[u] = (True, "required", None)
    for u in range(len(units)):
        if not eligible[u]:
            decided[u] = (False, "below_min_relevance", None)
    walkable = [u for u in ranked if eligible[u] and not required[u]]
    if required_tokens > budget:
        if on_overflow != "keep_top":
            raise Refused(budget, required_tokens)
        for u in walkable:
            decided[u] = (False, "zero_budget" if budget == 0 else "no_room", None)
    elif budget == 0:
        for u in walkable:
            decided[u] = (False, "zero_budget", None)
    else:
        left = budget - required_tokens
        stopped = False
        for u in walkable:
            if stopped:
                decided[u] = (False, "after_stop", None)
            elif tokens[u] <= left:
                decided[u] = (True, "fits", left)
                kept.append(u)
                left -= tokens[u]
            else:
                decided[u] = (False, "no_room", left)
                stopped = strategy == "prefix"
        if not kept and walkable:
            top = walkable[0]
            if on_overflow == "keep_top":
                kept = [top]
                decided[top] = (True, "top_over_budget", budget)
            elif on_overflow == "raise":
                smallest = min(tokens[u] for u in walkable)
                raise Refused(budget, tokens[top] if strategy == "prefix" else smallest)
    in_rank_order = sorted(kept, key=rank.__getitem__)
    if order == "input":
        positions = sorted(i for u in kept for i in units[u])
    else:
        if order == "edges":
            front = in_rank_order[0::2]
            back = in_rank_order[1::2]
            in_rank_order = front + back[::-1]
        positions = [i for u in in_rank_order for i in units[u]]
    decisions = {}
    for u, members in enumerate(units):
        was_kept, reason, left_then = decided[u]
        for i in members:
            decisions[fragments[i].fragment_id] = (was_kept, reason, rank[u], left_then)
    return (
        [fragments[i].fragment_id for i in positions],
        sum(tokens[u] for u in kept),
        decisions,
    )


BROKEN_FIELDS: list[tuple[str, list[Any]]] = [
    ("fragment_id", ["", 7, None]),
    ("token_count", [-1, "3", True, 2**63, 2.0]),
    ("relevance_score", [1.5, -0.1, "0.5", float("nan"), True]),
    ("required", [1, 0, "yes", None, 1.0]),
    ("group", ["", 7, b"g", ["g"]]),
]
RELEVANCES = [0.0, 0.1, 0.25, 0.5, 0.6, 0.9, 1.0]


@st.composite
def inputs(draw: st.DrawFn) -> tuple[tuple[ContextFragment, ...], bool]:
    count = draw(st.integers(0, 14))
    names = draw(
        st.lists(
            st.text("abcé\U0001f600", min_size=1, max_size=3),
            unique=True,
            min_size=count,
            max_size=count,
        )
    )
    fragments = []
    for name in names:
        fragments.append(
            ContextFragment(
                name,
                draw(st.sampled_from([0, 1, 2, 3, 5, 8, 13, 30])),
                draw(st.one_of(st.sampled_from(RELEVANCES), st.floats(0, 1))),
                required=draw(st.sampled_from([False] * 6 + [True])),
                group=draw(st.sampled_from([None, None, None, "g1", "g2", "tool"])),
            )
        )
    # One or two broken fields, anywhere: the first in input and field order is reported.
    breaks = draw(st.sampled_from([0] * 8 + [1, 2])) if fragments else 0
    for _ in range(breaks):
        at = draw(st.integers(0, len(fragments) - 1))
        field, choices = draw(st.sampled_from(BROKEN_FIELDS))
        object.__setattr__(fragments[at], field, draw(st.sampled_from(choices)))
    return tuple(fragments), breaks > 0


def outcome(service: SkeletonCompressorService, fragments: Any, budget: int) -> Any:
    try:
        explanation = service.explain(fragments, budget)
    except BudgetExceededError as error:
        return ("refused", error.skeleton_budget, error.needed_tokens, str(error))
    except FragmentError as error:
        return ("bad", type(error), str(error))
    result = explanation.result
    assert result == service.compress(fragments, budget)
    decisions = {
        d.fragment.fragment_id: (d.kept, d.reason, d.rank, d.budget_left)
        for d in explanation.decisions
    }
    kept_ids = [f.fragment_id for f in result.fragments]
    assert {i for i, d in decisions.items() if d[0]} == set(kept_ids)
    return ("kept", kept_ids, result.metadata.compressed_tokens, decisions)


def rows_outcome(service: SkeletonCompressorService, fragments: Any, budget: int) -> Any:
    """compress_arrays on the fragments' fields as columns."""
    try:
        result = service.compress_arrays(
            [f.fragment_id for f in fragments],
            [f.token_count for f in fragments],
            [f.relevance_score for f in fragments],
            budget,
            required=[f.required for f in fragments],
            groups=[f.group for f in fragments],
        )
    except BudgetExceededError as error:
        return ("refused", error.skeleton_budget, error.needed_tokens, str(error))
    except FragmentError as error:
        return ("bad", type(error), str(error))
    return ("kept", list(result.indices))


def rust_kept(outcome: Any, fragments: tuple[ContextFragment, ...]) -> list[ContextFragment]:
    by_id = {f.fragment_id: f for f in fragments}
    return [by_id[i] for i in outcome[1]]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inputs(),
    st.sampled_from(MODES),
    st.one_of(st.sampled_from(FLOORS), st.floats(0, 1)),
    st.data(),
)
def test_both_backends_follow_the_policy(
    generated: tuple[tuple[ContextFragment, ...], bool],
    mode: tuple[str, str, str],
    floor: float,
    data: st.DataObject,
) -> None:
    fragments, broken = generated
    strategy, on_overflow, order = mode
    counts = [f.token_count for f in fragments]
    total = sum(count for count in counts if type(count) is int and 0 <= count < 2**63)
    budget = data.draw(st.one_of(st.sampled_from([0, 1, total]), st.integers(0, total + 3)))
    services = [service(backend, strategy, floor, on_overflow, order) for backend in BACKENDS]
    rust, python = (outcome(each, fragments, budget) for each in services)
    assert rust == python
    rows = [rows_outcome(each, fragments, budget) for each in services]
    assert rows[0] == rows[1]
    if rust[0] == "kept":
        assert rows[0] == ("kept", [fragments.index(f) for f in rust_kept(rust, fragments)])
    elif rust[0] == "refused":
        assert rows[0] == rust
    else:
        assert rows[0][0] == "bad"
        assert rows[0][2] == rust[2].replace("fragments[", "rows[")
    if broken:
        assert rust[0] == "bad"
        return
    try:
        kept, compressed, decisions = reference(
            fragments, budget, strategy, floor, on_overflow, order
        )
    except Refused as refused:
        assert rust[:3] == ("refused", refused.budget, refused.needed)
        return
    assert rust == ("kept", kept, compressed, decisions)


@pytest.mark.parametrize("mode", MODES, ids=["-".join(mode) for mode in MODES])
def test_compress_many_is_compress_for_each_budget(mode: tuple[str, str, str]) -> None:
    strategy, on_overflow, order = mode
    fragments = tuple(
        ContextFragment(
            f"f{i:02d}",
            (i * 7) % 11,
            (i * 37 % 10) / 10,
            required=i % 9 == 4,
            group=f"g{i % 3}" if i % 4 == 0 else None,
        )
        for i in range(30)
    )
    for backend in BACKENDS:
        each = service(backend, strategy, 0.25, on_overflow, order)
        budgets = [0, 1, 5, 12, 40, 200]
        expected: list[Any] = []
        for budget in budgets:
            try:
                expected.append(each.compress(fragments, budget))
            except BudgetExceededError as error:
                expected.append(("refused", error.skeleton_budget, error.needed_tokens))
                break
        try:
            many: list[Any] = list(each.compress_many(fragments, budgets))
        except BudgetExceededError as error:
            many = [*expected[:-1], ("refused", error.skeleton_budget, error.needed_tokens)]
            assert isinstance(expected[-1], tuple)
        assert many == expected
