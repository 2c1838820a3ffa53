"""Variants of a fragment, on generated inputs: each backend against the brute-force oracle in
`support/variant_reference.py`, written from the contract alone, for `compress`, `explain`,
`compress_many` and `compress_arrays(variants=)`; the oracle first checked against hand-worked
cases and against `value_reference.py` where there are no variants.

Inputs are those of `test_value_reference.py` (up to 12 units, groups, pins, floors, every
overflow rule and order, budgets from 0 past the total) with variant sets drawn over the
units from a few names, so that sets of two to five units are common, a group is sometimes a
rendering, and a pinned unit settles its set (never two pinned units in one set: that input
is an error, tested in tests/input).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from skeleton_compressor import BudgetExceededError, ContextFragment, Plan
from support import value_reference
from support.value_reference import SCALE, STRATEGIES, Outcome, Refusal, value_of
from support.variant_reference import (
    multiple_choice_bound,
    optimal_by_brute_force,
    optimal_by_table,
    reference,
    units_of,
)
from test_value_reference import (
    OVERFLOWS,
    SETTINGS,
    attempt,
    backend_settings,
    budgets_for,
    check_metadata,
    check_refusal,
    check_result,
    described,
    fragment_sets,
    policies,
    service,
)

F = ContextFragment
NAMES = ["file", "file", "doc", "log"]


@st.composite
def variant_sets(
    draw: st.DrawFn, min_units: int = 0, max_units: int = 12, huge: bool = True
) -> tuple[ContextFragment, ...]:
    """`fragment_sets` with a variant_of given to most units (all members of a group alike),
    at most one pinned unit per name."""
    fragments = draw(fragment_sets(min_units=min_units, max_units=max_units, huge=huge))
    unit_of = [
        ("group", f.group) if f.group is not None else ("alone", i) for i, f in enumerate(fragments)
    ]
    pinned = {unit for unit, f in zip(unit_of, fragments) if f.required}
    names: dict[Any, str | None] = {}
    settled: set[str] = set()
    for unit in dict.fromkeys(unit_of):
        name = draw(st.sampled_from([None, *NAMES]))
        if unit in pinned and name is not None:
            if name in settled:
                name = None
            settled.add(name or "")
        names[unit] = name
    return tuple(
        dataclasses.replace(fragment, variant_of=names[unit])
        for unit, fragment in zip(unit_of, fragments)
    )


def expected(
    fragments: tuple[ContextFragment, ...],
    budget: int,
    strategy: str,
    policy: tuple[float, str, str],
) -> Outcome | Refusal:
    try:
        return reference(fragments, budget, strategy, *policy)
    except Refusal as refusal:
        return refusal


# --- the oracle against itself -------------------------------------------------------------


def test_oracle_worked_cases() -> None:
    # A file too large whole fits as its outline; its summary is then passed over.
    full, outline, summary = (
        F("full", 100, 0.9, variant_of="a"),
        F("outline", 20, 0.6, variant_of="a"),
        F("summary", 5, 0.3, variant_of="a"),
    )
    other = F("b", 30, 0.5)
    file = (full, outline, summary, other)
    outcome = reference(file, 25, "greedy")
    assert outcome.kept == [1]
    assert [(d.kept, d.reason, d.budget_left) for d in outcome.decisions] == [
        (False, "no_room", 25),
        (True, "fits", 25),
        (False, "variant_kept", 5),
        (False, "no_room", 5),
    ]
    # prefix stops at the first misfit, but a passed-over variant does not stop it.
    assert reference(file, 25, "prefix").kept == [0]  # full alone, over budget (keep_top)
    assert reference(file, 130, "prefix").kept == [0, 3]
    assert [d.reason for d in reference(file, 130, "prefix").decisions] == [
        "fits",
        "variant_kept",
        "variant_kept",
        "fits",
    ]
    # optimal: the outline and b (1.1) over the whole file (0.9); the whole file and b
    # when both fit.
    assert reference(file, 50, "optimal").kept == [1, 3]
    assert reference(file, 130, "optimal").kept == [0, 3]
    assert [d.reason for d in reference(file, 50, "optimal").decisions] == [
        "variant_kept",
        "chosen",
        "variant_kept",
        "chosen",
    ]
    # density walks summary (0.06 a token), passes over outline, keeps b; the whole file
    # alone (0.9) is worth more than that walk (0.8) and replaces it.
    assert reference(file, 130, "density").kept == [0]
    # The bound: the set's hull is (0, 0), (5, .3), (20, .6), (100, .9); at 25 tokens it
    # takes the summary, then the outline's step (15 tokens for .3), then 5/30 of b's.
    v = value_of
    step = v(0.6) - v(0.3)
    assert reference(file, 25, "greedy").value_bound == v(0.3) + step + (v(0.5) * 5) // 30
    # A required unit settles its set: the others are never kept, whatever the budget.
    pinned = (dataclasses.replace(summary, required=True), full, outline, other)
    for strategy in STRATEGIES:
        outcome = reference(pinned, 1000, strategy)
        assert outcome.kept == [3, 0]
        assert [d.reason for d in outcome.decisions][1:3] == ["variant_kept", "variant_kept"]
        assert outcome.value_bound == v(0.3) + v(0.5)
    # below the floor comes first, as for every unit.
    floored = reference(pinned, 1000, "greedy", min_relevance=0.7)
    assert [d.reason for d in floored.decisions] == [
        "required",
        "variant_kept",
        "below_min_relevance",
        "below_min_relevance",
    ]


def test_oracle_density_is_not_half_the_optimum_with_variants() -> None:
    """Three files, each as a line (1 token, 10) or whole (33 tokens, 300), in 99 tokens:
    the density walk keeps the three lines (30), the best single file is 300, the optimum
    keeps the three files (900). The half-optimum guarantee of `density` holds without
    variants only."""
    relevance = {1: 10 / 1024, 33: 300 / 1024}
    files = tuple(
        F(f"{name}.{size}", size, relevance[size], variant_of=name)
        for name in "xyz"
        for size in (1, 33)
    )
    density = reference(files, 99, "density")
    optimal = reference(files, 99, "optimal")
    assert density.value_kept == value_of(300 / 1024)
    assert optimal.value_kept == 3 * value_of(300 / 1024)
    assert 2 * density.value_kept < optimal.value_kept


@SETTINGS
@given(
    fragments=fragment_sets(), strategy=st.sampled_from(STRATEGIES), policy=policies, data=st.data()
)
def test_oracle_without_variants_is_the_value_oracle(
    fragments: tuple[ContextFragment, ...],
    strategy: str,
    policy: tuple[float, str, str],
    data: st.DataObject,
) -> None:
    budget = data.draw(budgets_for(fragments))
    try:
        ours: Any = reference(fragments, budget, strategy, *policy)
    except Refusal as refusal:
        ours = (refusal.budget, refusal.needed, refusal.required)
    try:
        theirs: Any = value_reference.reference(fragments, budget, strategy, *policy)
    except Refusal as refusal:
        theirs = (refusal.budget, refusal.needed, refusal.required)
    assert ours == theirs


@SETTINGS
@given(fragments=variant_sets(max_units=8), policy=policies, data=st.data())
def test_oracle_properties(
    fragments: tuple[ContextFragment, ...], policy: tuple[float, str, str], data: st.DataObject
) -> None:
    """At most one unit per set is kept; a pinned unit's set keeps only it; optimal is the
    best of every allowed set and keeps at least what greedy and density keep; the bound is
    at least every allowed set's value, and without variants it is the value oracle's
    fractional bound (found there by filling by density, here by the dual)."""
    budget = data.draw(budgets_for(fragments))
    outcomes = {s: expected(fragments, budget, s, policy) for s in STRATEGIES}
    results = {s: o for s, o in outcomes.items() if isinstance(o, Outcome)}
    units = units_of(fragments)
    unit_of = {i: unit for unit in units for i in unit.members}
    for outcome in results.values():
        kept_units = {unit_of[i] for i in outcome.kept}
        names = [unit.variant for unit in kept_units if unit.variant is not None]
        assert len(names) == len(set(names))
        for unit in units:
            if unit.required and unit.variant is not None:
                same = [u for u in kept_units if u.variant == unit.variant]
                assert same == [unit]
    if "optimal" in results and results["optimal"].compressed_tokens <= budget and budget:
        best = results["optimal"].value_kept
        assert best >= results["greedy"].value_kept
        assert best >= results["density"].value_kept
        pinned = [u for u in units if u.required]
        settled = {u.variant for u in pinned} - {None}
        room = budget - sum(u.tokens for u in pinned)
        candidates = [
            u
            for u in units
            if not u.required and u.relevance >= policy[0] and u.variant not in settled
        ]
        allowed = [
            chosen
            for size in range(len(candidates) + 1)
            for chosen in itertools.combinations(candidates, size)
            if sum(u.tokens for u in chosen) <= room
            and len([u.variant for u in chosen if u.variant])
            == len({u.variant for u in chosen if u.variant})
        ]
        required_value = sum(u.value for u in pinned)
        assert best == required_value + max(sum(u.value for u in c) for c in allowed)
        bound = results["optimal"].value_bound
        assert bound >= best
        assert bound == required_value + multiple_choice_bound(candidates, room)
        if not any(u.variant for u in candidates):
            plain = [
                value_reference.Unit(u.rank, u.members, u.tokens, u.value, u.relevance, False)
                for u in candidates
            ]
            assert bound - required_value == value_reference.fractional_bound(plain, room)


@SETTINGS
@given(fragments=variant_sets(max_units=12, huge=False), data=st.data())
def test_oracle_optimal_by_two_algorithms(
    fragments: tuple[ContextFragment, ...], data: st.DataObject
) -> None:
    candidates = [unit for unit in units_of(fragments) if not unit.required]
    room = data.draw(st.integers(0, 60))
    assert optimal_by_brute_force(candidates, room) == optimal_by_table(candidates, room)


# --- the backends against the oracle -------------------------------------------------------


@SETTINGS
@given(
    fragments=variant_sets(),
    strategy=st.sampled_from(STRATEGIES),
    policy=policies,
    data=st.data(),
)
def test_compress_and_explain_follow_the_oracle(
    backend: str,
    fragments: tuple[ContextFragment, ...],
    strategy: str,
    policy: tuple[float, str, str],
    data: st.DataObject,
) -> None:
    budget = data.draw(budgets_for(fragments))
    outcome = expected(fragments, budget, strategy, policy)
    each = service(backend, strategy, *policy)
    result = attempt(lambda: each.compress(fragments, budget))
    check_result(result, fragments, budget, outcome)
    explanation = attempt(lambda: each.explain(fragments, budget))
    if isinstance(outcome, Refusal):
        check_refusal(explanation, outcome)
        return
    assert explanation.result == result
    assert described(explanation) == [
        (id(fragment), d.kept, d.reason, d.rank, d.budget_left)
        for fragment, d in zip(fragments, outcome.decisions)
    ]


@backend_settings(2)
@given(
    fragments=variant_sets(),
    strategy=st.sampled_from(STRATEGIES),
    policy=policies,
    data=st.data(),
)
def test_compress_many_follows_the_oracle(
    backend: str,
    fragments: tuple[ContextFragment, ...],
    strategy: str,
    policy: tuple[float, str, str],
    data: st.DataObject,
) -> None:
    budgets = data.draw(st.lists(budgets_for(fragments), min_size=1, max_size=5))
    outcomes = []
    for budget in budgets:
        outcomes.append(expected(fragments, budget, strategy, policy))
        if isinstance(outcomes[-1], Refusal):
            break
    many = attempt(lambda: service(backend, strategy, *policy).compress_many(fragments, budgets))
    if isinstance(outcomes[-1], Refusal):
        check_refusal(many, outcomes[-1])
        return
    assert isinstance(many, tuple), many
    assert len(many) == len(budgets)
    for result, budget, outcome in zip(many, budgets, outcomes):
        check_result(result, fragments, budget, outcome)


@SETTINGS
@given(
    fragments=variant_sets(),
    strategy=st.sampled_from(STRATEGIES),
    policy=policies,
    data=st.data(),
)
def test_compress_arrays_follows_the_oracle(
    backend: str,
    fragments: tuple[ContextFragment, ...],
    strategy: str,
    policy: tuple[float, str, str],
    data: st.DataObject,
) -> None:
    budget = data.draw(budgets_for(fragments))
    outcome = expected(fragments, budget, strategy, policy)
    result = attempt(
        lambda: service(backend, strategy, *policy).compress_arrays(
            [f.fragment_id for f in fragments],
            [f.token_count for f in fragments],
            [f.relevance_score for f in fragments],
            budget,
            required=[f.required for f in fragments],
            groups=[f.group for f in fragments],
            variants=[f.variant_of for f in fragments],
        )
    )
    if isinstance(outcome, Refusal):
        check_refusal(result, outcome)
        return
    assert not isinstance(result, BaseException), result
    assert list(result.indices) == outcome.kept
    check_metadata(result.metadata, fragments, budget, outcome)


@backend_settings(4)
@given(
    fragments=variant_sets(min_units=13, max_units=40, huge=False),
    strategy=st.sampled_from(STRATEGIES),
    policy=policies,
    data=st.data(),
)
def test_more_units_follow_the_oracle(
    backend: str,
    fragments: tuple[ContextFragment, ...],
    strategy: str,
    policy: tuple[float, str, str],
    data: st.DataObject,
) -> None:
    """Past 12 candidates the oracle solves `optimal` by its table (small token counts)."""
    budget = data.draw(budgets_for(fragments))
    outcome = expected(fragments, budget, strategy, policy)
    each = service(backend, strategy, *policy)
    check_result(attempt(lambda: each.compress(fragments, budget)), fragments, budget, outcome)
    if isinstance(outcome, Outcome):
        explanation = each.explain(fragments, budget)
        assert [(d.kept, d.reason, d.rank, d.budget_left) for d in explanation.decisions] == [
            (d.kept, d.reason, d.rank, d.budget_left) for d in outcome.decisions
        ]


# --- properties of the backends' answers, past what the oracle tries -----------------------


@backend_settings(2)
@given(fragments=variant_sets(max_units=40), policy=policies, data=st.data())
def test_value_properties_with_variants(
    backend: str,
    fragments: tuple[ContextFragment, ...],
    policy: tuple[float, str, str],
    data: st.DataObject,
) -> None:
    """optimal keeps at least what greedy, prefix and density keep; no result within budget
    keeps more than the bound, which is the input's whatever the strategy; every strategy
    keeps at most one unit per variant set."""
    budget = data.draw(budgets_for(fragments))
    answers = {
        strategy: attempt(
            functools.partial(service(backend, strategy, *policy).compress, fragments, budget)
        )
        for strategy in STRATEGIES
    }
    refused = {
        s: (a.skeleton_budget, a.needed_tokens) if isinstance(a, BudgetExceededError) else None
        for s, a in answers.items()
        if s != "prefix"
    }
    assert len(set(refused.values())) == 1, refused
    results = {s: a for s, a in answers.items() if not isinstance(a, BaseException)}
    assert len({r.metadata.value_bound for r in results.values()}) <= 1
    for result in results.values():
        kept_sets: dict[str, set[Any]] = {}
        for f in result.fragments:
            if f.variant_of is not None:
                kept_sets.setdefault(f.variant_of, set()).add(f.group or f.fragment_id)
        assert all(len(units) == 1 for units in kept_sets.values()), kept_sets
        # As the strategies count value: the share of one bound, exact in units.
        if not result.metadata.over_budget:
            assert result.metadata.kept_share is not None
            assert result.metadata.kept_share <= 1.0
    if "optimal" in results:
        best = results["optimal"].metadata.kept_share
        assert best is not None
        for strategy in ("greedy", "density"):
            assert best >= results[strategy].metadata.kept_share  # type: ignore[operator]
        if "prefix" in results and not results["prefix"].metadata.over_budget:
            assert best >= results["prefix"].metadata.kept_share  # type: ignore[operator]


def test_the_counterexample_on_the_backends(backend: str) -> None:
    relevance = {1: 10 / 1024, 33: 300 / 1024}
    files = tuple(
        F(f"{name}.{size}", size, relevance[size], variant_of=name)
        for name in "xyz"
        for size in (1, 33)
    )
    density = service(backend, "density", 0.0, "keep_top", "ranking").compress(files, 99)
    optimal = service(backend, "optimal", 0.0, "keep_top", "ranking").compress(files, 99)
    assert [f.fragment_id for f in density.fragments] == ["x.33"]
    assert [f.fragment_id for f in optimal.fragments] == ["x.33", "y.33", "z.33"]
    assert optimal.metadata.value_bound == 3 * value_of(300 / 1024) / SCALE


@pytest.mark.parametrize("on_overflow", OVERFLOWS)
def test_a_required_unit_settles_its_set_under_every_overflow(
    backend: str, on_overflow: str
) -> None:
    fragments = (
        F("task", 10, 0.1, required=True),
        F("summary", 5, 0.2, required=True, variant_of="file"),
        F("full", 50, 1.0, variant_of="file"),
        F("other", 5, 0.5),
    )
    for strategy in STRATEGIES:
        each = service(backend, strategy, 0.0, on_overflow, "ranking")
        explanation = each.explain(fragments, 1000)
        assert [(d.kept, d.reason) for d in explanation.decisions] == [
            (True, "required"),
            (True, "required"),
            (False, "variant_kept"),
            (True, "fits" if strategy in ("greedy", "prefix") else "chosen"),
        ]
        if on_overflow == "keep_top":
            small = each.explain(fragments, 12)
            assert [d.reason for d in small.decisions] == [
                "required",
                "required",
                "variant_kept",
                "no_room",
            ]
        else:
            with pytest.raises(BudgetExceededError):
                each.compress(fragments, 12)


def test_optimal_climbs_a_set_only_from_what_it_kept(backend: str) -> None:
    """By efficiency: c, then a's first step (10 tokens) misses the 7 left, b fits, then a's
    second step (2 tokens) would fit the 2 left, but it is a step from a.part, not kept: the
    set is a.whole alone (110 in 12 tokens), not c, b and a.whole (22 tokens)."""
    fragments = (
        F("a.part", 10, 100 / 1024, variant_of="a"),
        F("a.whole", 12, 110 / 1024, variant_of="a"),
        F("b", 5, 45 / 1024),
        F("c", 5, 55 / 1024),
    )
    optimal = service(backend, "optimal", 0.0, "keep_top", "ranking")
    assert [f.fragment_id for f in optimal.compress(fragments, 12).fragments] == ["a.whole"]
    assert reference(fragments, 12, "optimal").kept == [1]


def test_a_subplan_inherits_one_rendering(backend: str) -> None:
    parent = Plan(
        "p",
        "goal",
        context=(
            F("main.py", 40, 0.9, variant_of="main.py"),
            F("main.py#outline", 8, 0.7, variant_of="main.py"),
            F("notes", 4, 0.5),
        ),
    )
    compressor = service(backend, "greedy", 0.0, "keep_top", "ranking")
    child = parent.spawn_subplan("c", "sub", 20, compressor=compressor)
    assert [f.fragment_id for f in child.context] == ["main.py#outline", "notes"]
    assert child.to_cli_dict()["context"][0] == {
        "fragment_id": "main.py#outline",
        "token_count": 8,
        "relevance_score": 0.7,
        "variant_of": "main.py",
    }
    whole = parent.spawn_subplan("c", "sub", 50, compressor=compressor)
    assert [f.fragment_id for f in whole.context] == ["main.py", "notes"]
