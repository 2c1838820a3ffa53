"""The value strategies (`density`, `optimal`) and the value measures (`value_kept`,
`value_bound`) of every strategy, on generated inputs: each backend against the brute-force
oracle in `support/value_reference.py`, written from the contract alone. The first tests check
the oracle against itself: hand-worked cases, a second exact algorithm for `optimal`, and the
dual of the fractional bound.

Inputs have up to 12 units (so `optimal` can try every subset), groups, pins, floors, every
overflow rule and order, budgets from 0 past the total; relevance comes from a few levels and
token counts from a few sizes most of the time, so that equal densities, equal values and equal
token counts are common and the tie rules decide.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skeleton_compressor import (
    BudgetExceededError,
    ContextFragment,
    SkeletonCompressorService,
    SkeletonMetadata,
)
from support.value_reference import (
    SCALE,
    STRATEGIES,
    Outcome,
    Refusal,
    Unit,
    canonical_by_brute_force,
    canonical_by_table,
    density_set,
    fractional_bound,
    reference,
    units_of,
    value_of,
)

EXAMPLES = int(os.environ.get("DIFFERENTIAL_EXAMPLES", "400"))
OVERFLOWS = ("keep_top", "strict", "raise")
ORDERS = ("ranking", "input", "edges")
FLOORS = [0.0, 0.0, 0.25, 0.5, 0.6, 1.0]
# Relevance levels: a few (so ties are common), ones whose value is a tie of round half to
# even (0.5, 1.5 and 2.5 units), the smallest and the largest below 1, and ints.
LEVELS: list[Any] = [0.0, 0.25, 0.5, 0.5, 0.75, 1.0, 1, 0]
ODD_LEVELS: list[Any] = [
    0.1,
    0.3,
    0.6,
    0.5 / SCALE,
    1.5 / SCALE,
    2.5 / SCALE,
    5e-324,
    0.9999999999999999,
    -0.0,
]
TOKENS = [0, 1, 2, 3, 4, 4, 4, 8, 8, 16]
HUGE_TOKENS = [2**40, 2**62 + 1, 2**63 - 1]


def backend_settings(share: int = 1) -> settings:
    """Settings for tests that run the backends: a `share`-th of the examples, no deadline."""
    return settings(
        max_examples=max(1, EXAMPLES // share),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


SETTINGS = backend_settings()


@functools.cache
def service(
    backend: str, strategy: str, floor: float, on_overflow: str, order: str
) -> SkeletonCompressorService:
    made = SkeletonCompressorService(
        backend=backend,
        strategy=strategy,
        min_relevance=floor,
        on_overflow=on_overflow,
        order=order,
    )
    assert made.backend == backend
    return made


# --- generated inputs ----------------------------------------------------------------------


@st.composite
def token_counts(draw: st.DrawFn, huge: bool) -> int:
    pick = draw(st.integers(0, 99))
    if pick < 60:
        return draw(st.sampled_from(TOKENS))
    if pick < 97 or not huge:
        return draw(st.integers(0, 40))
    return draw(st.sampled_from(HUGE_TOKENS))


@st.composite
def relevances(draw: st.DrawFn) -> Any:
    pick = draw(st.integers(0, 99))
    if pick < 70:
        return draw(st.sampled_from(LEVELS))
    if pick < 85:
        return draw(st.sampled_from(ODD_LEVELS))
    return draw(st.floats(0, 1))


@st.composite
def fragment_sets(
    draw: st.DrawFn,
    min_units: int = 0,
    max_units: int = 12,
    policy: bool = True,
    huge: bool = True,
) -> tuple[ContextFragment, ...]:
    """`min_units` to `max_units` units; with `policy`, some are groups of 2 or 3 (or a group
    of one) and some are pinned (by one or more members); members end up anywhere in the
    input."""
    count = draw(st.integers(min_units, max_units))
    pins = policy and draw(st.booleans())  # half the sets have no pins at all
    sizes = [draw(st.sampled_from([1, 1, 1, 1, 2, 3] if policy else [1])) for _ in range(count)]
    names = iter(
        draw(
            st.lists(
                st.text("abAé\U0001f600", min_size=1, max_size=4),
                unique=True,
                min_size=sum(sizes),
                max_size=sum(sizes),
            )
        )
    )
    fragments = []
    for unit, size in enumerate(sizes):
        grouped = policy and (size > 1 or draw(st.integers(0, 9)) == 0)
        pinned = [False] * size
        if pins and draw(st.integers(0, 5)) == 0:
            pinned = draw(st.lists(st.booleans(), min_size=size, max_size=size))
            pinned[draw(st.integers(0, size - 1))] = True
        for required in pinned:
            fragments.append(
                ContextFragment(
                    next(names),
                    draw(token_counts(huge)),
                    draw(relevances()),
                    required=required,
                    group=f"g{unit}" if grouped else None,
                )
            )
    return tuple(draw(st.permutations(fragments)))


@st.composite
def budgets_for(draw: st.DrawFn, fragments: tuple[ContextFragment, ...]) -> int:
    """0, 1, the total and past it, anything up to it, up to the smallest fragment (so that
    often nothing fits), a quarter to three quarters of the total, and near what a subset of
    the fragments needs (so exact fits and near misses are common)."""
    counts = [f.token_count for f in fragments]
    total = sum(counts)
    pick = draw(st.integers(0, 9))
    if pick < 2:
        return draw(st.sampled_from([0, 1, total, total + 1, 10**30]))
    if pick < 3:
        return draw(st.integers(0, total + 3))
    if pick < 5:
        return draw(st.integers(0, min(total, 64) + 3))
    if pick < 6:
        return draw(st.integers(1, min([c for c in counts if c > 0], default=1)))
    if pick < 7:
        return draw(st.integers(total // 4, total * 3 // 4))
    chosen = draw(st.lists(st.sampled_from(counts), max_size=len(counts))) if counts else []
    return max(0, sum(chosen) + draw(st.integers(-1, 1)))


policies = st.tuples(
    st.sampled_from([*FLOORS, None]).flatmap(
        lambda floor: st.floats(0, 1) if floor is None else st.just(floor)
    ),
    st.sampled_from(OVERFLOWS),
    st.sampled_from(ORDERS),
)


# --- comparing a backend's answer with the oracle's ------------------------------------------


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


def attempt(action: Callable[[], Any]) -> Any:
    try:
        return action()
    except BudgetExceededError as error:
        return error


def check_refusal(got: Any, refusal: Refusal) -> None:
    assert isinstance(got, BudgetExceededError), got
    assert (got.skeleton_budget, got.needed_tokens) == (refusal.budget, refusal.needed)
    ending = f"need{'' if refusal.required else 's'} {refusal.needed} tokens"
    assert str(got).endswith(f"{ending}, skeleton_budget is {refusal.budget}"), str(got)
    if refusal.required:
        assert str(got).startswith("required fragments need")


def check_metadata(
    metadata: SkeletonMetadata,
    fragments: tuple[ContextFragment, ...],
    budget: int,
    outcome: Outcome,
) -> None:
    assert metadata.compressed_tokens == outcome.compressed_tokens
    assert metadata.original_tokens == sum(f.token_count for f in fragments)
    assert metadata.skeleton_budget == budget
    assert metadata.fragments_total == len(fragments)
    assert metadata.fragments_kept == len(outcome.kept)
    # The value kept reads as the kept relevance added up as written; the bound, and the
    # share of it kept, are the reference's exact units (the same int divided by 2**32, and
    # two ints divided once: exactly equal floats).
    assert type(metadata.value_kept) is float
    assert type(metadata.value_bound) is float
    kept = [float(fragments[i].relevance_score) for i in outcome.kept]
    assert metadata.value_kept == math.fsum(kept)
    assert metadata.value_bound == outcome.value_bound / SCALE
    bound = outcome.value_bound
    assert metadata.kept_share == (outcome.value_kept / bound if bound else 1.0)
    as_dict = metadata.to_dict()
    assert as_dict["value_kept"] == metadata.value_kept
    assert as_dict["value_bound"] == metadata.value_bound
    assert as_dict["kept_share"] == metadata.kept_share


def check_result(
    result: Any, fragments: tuple[ContextFragment, ...], budget: int, outcome: Outcome | Refusal
) -> None:
    if isinstance(outcome, Refusal):
        check_refusal(result, outcome)
        return
    assert not isinstance(result, BaseException), result
    # The very objects passed in, in output order.
    assert [id(f) for f in result.fragments] == [id(fragments[i]) for i in outcome.kept]
    check_metadata(result.metadata, fragments, budget, outcome)


def described(explanation: Any) -> list[tuple[int, bool, str, int, int | None]]:
    return [
        (id(d.fragment), d.kept, d.reason, d.rank, d.budget_left) for d in explanation.decisions
    ]


# --- the oracle against itself -------------------------------------------------------------

F = ContextFragment


def test_values_are_relevance_in_units_rounded_half_to_even() -> None:
    assert value_of(1.0) == value_of(1) == SCALE
    assert value_of(0.0) == value_of(-0.0) == value_of(5e-324) == 0
    assert value_of(0.5) == SCALE // 2
    assert value_of(0.5 / SCALE) == 0
    assert value_of(1.5 / SCALE) == 2
    assert value_of(2.5 / SCALE) == 2
    assert value_of(0.9999999999999999) == SCALE  # 2**32 - 2**-21, rounded up
    assert value_of(0.1) == 429496730  # 429496729.6 rounded


def test_oracle_worked_cases() -> None:
    # One large relevant fragment against many small ones that together are worth more.
    crowd = (F("big", 100, 0.9), *(F(f"s{i}", 25, 0.6) for i in range(4)))
    assert reference(crowd, 100, "greedy").kept == [0]
    for strategy in ("density", "optimal"):
        outcome = reference(crowd, 100, strategy)
        assert outcome.kept == [1, 2, 3, 4]
        assert outcome.value_kept == 4 * value_of(0.6)
    assert reference(crowd, 100, "greedy").value_bound == 4 * value_of(0.6)

    # density: the single unit worth more than its walk replaces it.
    pair = (F("a", 1, 0.2), F("b", 100, 1.0))
    outcome = reference(pair, 100, "density")
    assert outcome.kept == [1]
    assert [(d.reason, d.budget_left) for d in outcome.decisions] == [
        ("not_chosen", None),
        ("chosen", None),
    ]
    assert reference(pair, 101, "density").kept == [1, 0]

    # optimal: equal value, fewest tokens; the bound takes a fraction of the misfit.
    halves = (F("a", 64, 0.5), F("b", 32, 0.5))
    assert reference(halves, 64, "greedy").kept == [0]
    assert reference(halves, 64, "optimal").kept == [1]
    assert reference(halves, 64, "optimal").value_bound == 3 * SCALE // 4
    # optimal: equal value and tokens, the better rank ("a" before "b" at equal relevance).
    twins = (F("b", 10, 0.5), F("a", 10, 0.5))
    assert reference(twins, 15, "optimal").kept == [1]
    # ... and at the first rank where two sets differ: {a, d} over {b, c}.
    four = (F("a", 2, 0.5), F("b", 1, 0.25), F("c", 1, 0.25), F("d", 2, 0.5))
    assert reference(four, 2, "optimal").kept == [0]
    assert reference(four, 4, "optimal").kept == [0, 3]

    # optimal: zero-token units always, units of value 0 never.
    zeros = (F("free", 0, 0.0), F("junk", 5, 0.0), F("x", 5, 0.5))
    assert reference(zeros, 10, "optimal").kept == [2, 0]
    assert reference(zeros, 10, "density").kept == [2, 0, 1]
    # optimal with nothing of value that fits: empty, not an overflow, no raise.
    only_junk = (F("junk", 5, 0.0), F("x", 50, 0.5))
    for on_overflow in OVERFLOWS:
        outcome = reference(only_junk, 10, "optimal", on_overflow=on_overflow)
        assert (outcome.kept, outcome.value_kept) == ([], 0)
        assert [d.reason for d in outcome.decisions] == ["not_chosen", "no_room"]
    assert reference(only_junk, 10, "density", on_overflow="raise").kept == [0]

    # Nothing fits: the overflow rules, as for greedy.
    too_big = (F("a", 50, 0.9), F("b", 30, 0.5))
    for strategy in ("density", "optimal"):
        outcome = reference(too_big, 10, strategy)
        assert outcome.kept == [0]
        assert [(d.kept, d.reason) for d in outcome.decisions] == [
            (True, "top_over_budget"),
            (False, "no_room"),
        ]
        assert outcome.value_bound == value_of(0.9) * 10 // 50  # a is the denser
        assert reference(too_big, 10, strategy, on_overflow="strict").kept == []
        with pytest.raises(Refusal) as refused:
            reference(too_big, 10, strategy, on_overflow="raise")
        assert (refused.value.budget, refused.value.needed) == (10, 30)

    # Required units first; the bound counts them and what is left after them.
    pinned = (F("task", 40, 0.1, required=True), F("a", 30, 0.9), F("b", 30, 0.8))
    outcome = reference(pinned, 80, "optimal")
    assert outcome.kept == [1, 0]
    assert outcome.value_bound == value_of(0.1) + value_of(0.9) + value_of(0.8) * 10 // 30
    assert reference(pinned, 30, "optimal").kept == [0]  # over budget under keep_top
    assert reference(pinned, 30, "optimal").value_bound == value_of(0.1)
    assert reference(pinned, 0, "optimal").value_bound == value_of(0.1)


@st.composite
def candidate_units(draw: st.DrawFn, max_size: int = 12) -> list[Unit]:
    count = draw(st.integers(0, max_size))
    return [
        Unit(
            rank=rank,
            members=(rank,),
            tokens=draw(st.sampled_from([0, 1, 2, 3, 4, 4, 6])),
            value=draw(st.sampled_from([0, 1, 2, 3, 4, 6, 8])),
            relevance=0.0,
            required=False,
        )
        for rank in range(count)
    ]


@settings(max_examples=EXAMPLES, deadline=None)
@given(candidate_units(), st.integers(0, 30))
def test_oracle_optimal_by_two_algorithms(candidates: list[Unit], room: int) -> None:
    assert canonical_by_brute_force(candidates, room) == canonical_by_table(candidates, room)


@settings(max_examples=EXAMPLES, deadline=None)
@given(candidate_units(max_size=8), st.integers(0, 30))
def test_oracle_bound_is_the_dual_minimum(candidates: list[Unit], room: int) -> None:
    # The fractional knapsack's optimum is min over lam >= 0 of
    # lam * room + sum(max(0, value - lam * tokens)), reached at lam = 0 or at a density.
    duals = [
        lam * room + sum(max(Fraction(0), unit.value - lam * unit.tokens) for unit in candidates)
        for lam in {Fraction(0)}
        | {Fraction(unit.value, unit.tokens) for unit in candidates if unit.tokens}
    ]
    assert fractional_bound(candidates, room) == math.floor(min(duals))
    best = canonical_by_brute_force(candidates, room)
    assert sum(unit.value for unit in best) <= fractional_bound(candidates, room)
    chosen = density_set(candidates, room)
    assert sum(unit.tokens for unit in chosen) <= room
    assert 2 * sum(unit.value for unit in chosen) >= sum(unit.value for unit in best)


@settings(max_examples=EXAMPLES, deadline=None)
@given(fragment_sets(), policies, st.data())
def test_oracle_properties(
    fragments: tuple[ContextFragment, ...], policy: tuple[float, str, str], data: st.DataObject
) -> None:
    budget = data.draw(budgets_for(fragments))
    outcomes = {s: expected(fragments, budget, s, policy) for s in STRATEGIES}
    # greedy, density and optimal refuse together (nothing fits, or the pins overflow).
    refusals = {
        s: (o.budget, o.needed, o.required) if isinstance(o, Refusal) else None
        for s, o in outcomes.items()
        if s != "prefix"
    }
    assert len(set(refusals.values())) == 1, refusals
    results = {s: o for s, o in outcomes.items() if isinstance(o, Outcome)}
    assert len({o.value_bound for o in results.values()}) <= 1
    for outcome in results.values():
        kept = set(outcome.kept)
        assert len(kept) == len(outcome.kept)
        assert kept == {i for i, d in enumerate(outcome.decisions) if d.kept}
        assert outcome.compressed_tokens == sum(fragments[i].token_count for i in kept)
        assert outcome.value_kept == sum(value_of(fragments[i].relevance_score) for i in kept)
        if outcome.compressed_tokens <= budget:
            assert outcome.value_kept <= outcome.value_bound
    if "optimal" in results:
        best = results["optimal"].value_kept
        assert best >= results["greedy"].value_kept
        assert best >= results["density"].value_kept
        assert 2 * results["density"].value_kept >= best
        # Within budget, no set of candidates that fits beside the pins is worth more.
        units = units_of(fragments)
        pinned = [u for u in units if u.required]
        room = budget - sum(u.tokens for u in pinned)
        if results["optimal"].compressed_tokens <= budget and budget > 0:
            candidates = [u for u in units if not u.required and u.relevance >= policy[0]]
            assert best == sum(u.value for u in pinned) + max(
                sum(u.value for u in chosen)
                for size in range(len(candidates) + 1)
                for chosen in itertools.combinations(candidates, size)
                if sum(u.tokens for u in chosen) <= room
            )


# --- the backends against the oracle -------------------------------------------------------


@SETTINGS
@given(
    fragments=fragment_sets(),
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
    as_dict = explanation.to_dict()
    assert as_dict["metadata"] == result.metadata.to_dict()
    assert as_dict["metadata"]["value_bound"] == outcome.value_bound / SCALE


@backend_settings(2)
@given(
    fragments=fragment_sets(),
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
    for budget in budgets:  # up to the first budget that raises
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
    with_policy=st.booleans(),
    strategy=st.sampled_from(STRATEGIES),
    policy=policies,
    data=st.data(),
)
def test_compress_arrays_follows_the_oracle(
    backend: str,
    with_policy: bool,
    strategy: str,
    policy: tuple[float, str, str],
    data: st.DataObject,
) -> None:
    """Columns: plain ones, or with the `required=` and `groups=` columns."""
    fragments = data.draw(fragment_sets(policy=with_policy))
    budget = data.draw(budgets_for(fragments))
    outcome = expected(fragments, budget, strategy, policy)
    columns = (
        [f.fragment_id for f in fragments],
        [f.token_count for f in fragments],
        [f.relevance_score for f in fragments],
        budget,
    )
    extra: dict[str, Any] = {}
    if with_policy:
        extra = {
            "required": [f.required for f in fragments],
            "groups": [f.group for f in fragments],
        }
    result = attempt(lambda: service(backend, strategy, *policy).compress_arrays(*columns, **extra))
    if isinstance(outcome, Refusal):
        check_refusal(result, outcome)
        return
    assert not isinstance(result, BaseException), result
    assert list(result.indices) == outcome.kept
    check_metadata(result.metadata, fragments, budget, outcome)


@backend_settings(4)
@given(
    fragments=fragment_sets(min_units=13, max_units=40, huge=False),
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


# --- properties of the backends' answers ---------------------------------------------------


@backend_settings(2)
@given(fragments=fragment_sets(max_units=30), policy=policies, data=st.data())
def test_value_properties(
    backend: str,
    fragments: tuple[ContextFragment, ...],
    policy: tuple[float, str, str],
    data: st.DataObject,
) -> None:
    """optimal keeps at least what greedy and density keep, and density at least half of it;
    no result within budget keeps more than the bound; the bound is the input's, whatever
    the strategy. Up to 30 units: past what the oracle tries."""
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
    results = {s: a.metadata for s, a in answers.items() if not isinstance(a, BaseException)}
    assert len({m.value_bound for m in results.values()}) <= 1, results
    # Compared as the strategies count value: the shares of one bound, exact in units (the
    # relevance added up as written may order two selections of equal units either way).
    share = {s: m.kept_share for s, m in results.items()}
    for metadata in results.values():
        if not metadata.over_budget:
            assert metadata.kept_share is not None and metadata.kept_share <= 1.0
    if "optimal" in results:
        best = share["optimal"]
        assert best is not None
        assert best >= share["greedy"]  # type: ignore[operator]
        assert best >= share["density"]  # type: ignore[operator]
        assert 2 * share["density"] >= best  # type: ignore[operator]
