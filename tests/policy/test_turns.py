"""Turns (docs/turns.md): `compress` and `explain` with `previous`, `max_value_loss` and
`headroom`, on both backends: against the reference built from the ordinary call
(`support/turns_reference.py`) on generated turns, on examples worked by hand, bad input,
`compress_arrays(..., previous=rows)` and `SkeletonMetadata.reused_tokens`. The long loop of
turns is in `test_turns_loop.py`."""

from __future__ import annotations

import functools
import json
import math
import os
from array import array
from dataclasses import replace
from fractions import Fraction
from typing import Any, Callable, NamedTuple

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from skeleton_compressor import (
    BudgetExceededError,
    ContextFragment,
    FragmentError,
    SkeletonCompressorService,
    SkeletonMetadata,
    SkeletonResult,
    compress,
    compress_arrays,
    explain,
)
from support.turns_reference import UNITS, TurnOutcome, reference_turn
from support.valid_fragments import valid_fragments

F = ContextFragment
EXAMPLES = int(os.environ.get("DIFFERENTIAL_EXAMPLES", "150"))
BACKENDS = ("rust", "python")
STRATEGIES = ("greedy", "prefix", "density", "optimal")
ON_OVERFLOW = ("keep_top", "strict", "raise")
ORDERS = ("ranking", "input", "edges")
FLOORS = (0.0, 0.3, 0.6)
LOSSES = (0.0, 0.01, 0.3, 0.999)
HEADROOMS = (0.0, 0.1, 0.5)
RELEVANCES = (0.0, 0.1, 0.3, 0.5, 0.5, 0.7, 0.9, 1.0)
PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


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


def ids(fragments: Any) -> list[str]:
    return [f.fragment_id for f in fragments]


def same_objects(got: Any, expected: Any) -> bool:
    return len(got) == len(expected) and all(a is b for a, b in zip(got, expected))


def decided(explanation: Any) -> list[tuple[str, bool, str, int, int | None]]:
    return [
        (d.fragment.fragment_id, d.kept, d.reason, d.rank, d.budget_left)
        for d in explanation.decisions
    ]


# Generated turns ---------------------------------------------------------------------------


class Turn(NamedTuple):
    fragments: tuple[ContextFragment, ...]
    budget: int
    previous: tuple[ContextFragment, ...] | list[ContextFragment] | None
    how: str


@st.composite
def contexts(
    draw: st.DrawFn, min_size: int = 0, max_size: int = 8, content: bool = True
) -> tuple[F, ...]:
    """Up to `max_size` fragments with ties, zero relevance and zero tokens, a few required,
    groups (`g0` may be a rendering of `v0`) and variant sets, valid as `compress` needs them:
    a group's members share their `variant_of`, and a set has at most one required unit."""
    count = draw(st.integers(min_size, max_size))
    return valid_fragments(draw, count, 20, RELEVANCES, content)


def _changed(draw: st.DrawFn, fragment: F) -> F:
    """The fragment as it was before an edit: another content or another token count."""
    if draw(st.booleans()):
        return replace(fragment, content=f"{fragment.content} (edited)")
    return replace(fragment, token_count=fragment.token_count + 1)


@st.composite
def earlier_outputs(draw: st.DrawFn, now: tuple[F, ...], budget: int) -> tuple[F, ...]:
    """What an earlier call kept of a related context: this one with some fragments rescored,
    some not there yet, some as they were before an edit, some there no longer, reordered,
    compressed with this budget or another, its own strategy and order."""
    earlier: list[F] = []
    if draw(st.booleans()):
        # Scores drift, nothing else changes: the turn an agent loop has most often.
        fates = ["same", "rescored"]
    else:
        fates = ["same"] * 5 + ["rescored"] * 2 + ["new", "edited"]
    for fragment in now:
        fate = draw(st.sampled_from(fates))
        if fate == "new":
            continue
        if fate == "rescored":
            fragment = replace(fragment, relevance_score=draw(st.sampled_from(RELEVANCES)))
        elif fate == "edited":
            fragment = _changed(draw, fragment)
        earlier.append(fragment)
    for j in range(draw(st.integers(0, 2)) if len(fates) > 2 else 0):
        earlier.append(
            F(
                f"old{j}",
                draw(st.integers(0, 20)),
                draw(st.sampled_from(RELEVANCES)),
                f"old text {j}",
                variant_of=draw(st.sampled_from([None, None, "v0"])),
            )
        )
    earlier = draw(st.permutations(earlier))
    total = sum(f.token_count for f in earlier)
    return compress(
        tuple(earlier),
        draw(st.one_of(st.just(max(budget, 1)), st.integers(1, total + 5))),
        strategy=draw(st.sampled_from(STRATEGIES)),
        order=draw(st.sampled_from(ORDERS)),
        backend="python",
    ).fragments


@st.composite
def turns(draw: st.DrawFn) -> Turn:
    now = draw(contexts())
    total = sum(f.token_count for f in now)
    how = draw(st.sampled_from(["earlier call"] * 3 + ["some units"] * 2 + ["any", "none"]))
    if how == "some units":
        # A budget that binds, for a run that is rarely worth V* whole.
        budget = draw(st.integers(max(1, total // 4), max(1, total * 3 // 4)))
    elif draw(st.sampled_from([True] * 9 + [False])):
        budget = draw(st.integers(1, total + 3))
    else:
        budget = 0
    previous: tuple[F, ...] | list[F] | None
    if how == "none":
        previous = None
    elif how == "earlier call":
        previous = draw(earlier_outputs(now, budget))
    elif how == "some units":
        # Whole units of this context in any order.
        members: dict[object, list[F]] = {}
        for i, fragment in enumerate(now):
            members.setdefault(fragment.group or i, []).append(fragment)
        chosen = draw(st.permutations(list(members.values())))[: draw(st.integers(1, 5))]
        previous = tuple(fragment for unit in chosen for fragment in unit)
    else:
        # Any fragments of this context, edited ones, unknown ones, repeats, in any order.
        pool = [*now, F("gone", 3, 0.5, "gone"), *(_changed(draw, f) for f in now[:2])]
        previous = tuple(draw(st.lists(st.sampled_from(pool), max_size=10)))
    if previous is not None and draw(st.booleans()):
        previous = list(previous)
    return Turn(now, budget, previous, how)


def _assert_result(
    got: SkeletonResult, expected: TurnOutcome, fragments: tuple[F, ...], budget: int
) -> None:
    assert ids(got.fragments) == ids(expected.fragments)
    assert same_objects(got.fragments, expected.fragments)
    metadata = got.metadata
    original = sum(f.token_count for f in fragments)
    assert metadata.original_tokens == original
    assert metadata.compressed_tokens == expected.compressed_tokens
    assert metadata.ratio == (expected.compressed_tokens / original if original else 1.0)
    assert metadata.skeleton_budget == budget
    assert metadata.fragments_total == len(fragments)
    assert metadata.fragments_kept == len(expected.fragments)
    assert metadata.reused_tokens == expected.reused_tokens
    assert metadata.value_kept == math.fsum(f.relevance_score for f in expected.fragments)
    assert metadata.value_bound == expected.value_bound_units / UNITS
    bound = expected.value_bound_units
    assert metadata.kept_share == (expected.value_kept_units / bound if bound else 1.0)


@st.composite
def cut_turns(draw: st.DrawFn) -> Turn:
    """A run of several whole units of a context of at least four fragments in a budget that
    binds: some of those `optimal` keeps (in any order) then others, or any units in any
    order. Under a small `max_value_loss` such a run is often cut short, and then headroom
    applies."""
    now = draw(contexts(min_size=4))
    total = sum(f.token_count for f in now)
    budget = draw(st.integers(max(1, total // 4), max(1, total * 3 // 4)))
    members: dict[object, list[F]] = {}
    for i, fragment in enumerate(now):
        members.setdefault(fragment.group or i, []).append(fragment)
    every = list(members.values())
    kept = compress(now, budget, strategy="optimal", backend="python").fragments
    best = [unit for unit in every if any(unit[0] is f for f in kept)]
    others = [unit for unit in every if all(unit[0] is not f for f in kept)]
    if draw(st.booleans()):
        some = draw(st.permutations(best))[: draw(st.integers(1, max(1, len(best) - 1)))]
        chosen = some + draw(st.permutations(others))[: draw(st.integers(1, 3))]
    else:
        chosen = draw(st.permutations(every))[: draw(st.integers(2, 5))]
    return Turn(now, budget, tuple(f for unit in chosen for f in unit), "some units")


def _check_against_the_reference(
    backend: str,
    turn: Turn,
    strategy: str,
    floor: float,
    on_overflow: str,
    order: str,
    loss: float,
    headroom: float,
) -> None:
    """`compress` and `explain`, module functions and service methods, equal the reference:
    the same objects, metadata, decisions; or the same refusal."""
    fragments, budget, previous, how = turn
    options = {
        "strategy": strategy,
        "min_relevance": floor,
        "on_overflow": on_overflow,
        "order": order,
    }
    turn_options = {"previous": previous, "max_value_loss": loss, "headroom": headroom}
    compressor = service(backend, strategy, floor, on_overflow, order)
    calls: list[Callable[[], Any]] = [
        lambda: compress(fragments, budget, backend=backend, **options, **turn_options),
        lambda: explain(fragments, budget, backend=backend, **options, **turn_options),
        lambda: compressor.compress(fragments, budget, **turn_options),
        lambda: compressor.explain(fragments, budget, **turn_options),
    ]
    try:
        expected = reference_turn(
            fragments,
            budget,
            previous,
            max_value_loss=loss,
            headroom=headroom,
            backend=backend,
            **options,
        )
    except BudgetExceededError as refused:
        # V* and the bound are the call's without `previous`: what it refuses is refused.
        event("refused")
        for call in calls:
            with pytest.raises(BudgetExceededError) as raised:
                call()
            assert str(raised.value) == str(refused)
        return
    if expected.run == 0:
        event(f"previous {how}: R empty")
    else:
        reused = "all" if expected.k == expected.run else "part" if expected.k else "none"
        event(f"previous {how}: reused {reused} of R")
        if expected.k < expected.run:
            event(f"headroom fill: {expected.headroom_used}")
    got = calls[0]()
    _assert_result(got, expected, fragments, budget)
    explained = calls[1]()
    _assert_result(explained.result, expected, fragments, budget)
    assert explained.decisions == expected.decisions
    assert all(d.fragment is f for d, f in zip(explained.decisions, fragments))
    by_service = calls[2]()
    assert by_service == got and same_objects(by_service.fragments, got.fragments)
    explained_by_service = calls[3]()
    assert explained_by_service == explained
    if previous is None:
        # The defaults: nothing reused, the ordinary call, reused_tokens 0 (not None).
        plain = compress(fragments, budget, backend=backend, **options)
        assert plain == got and same_objects(plain.fragments, got.fragments)
        assert plain.metadata.reused_tokens == 0


@PROPERTY_SETTINGS
@given(
    turn=turns(),
    strategy=st.sampled_from(STRATEGIES),
    floor=st.sampled_from(FLOORS),
    on_overflow=st.sampled_from(ON_OVERFLOW),
    order=st.sampled_from(ORDERS),
    loss=st.sampled_from(LOSSES),
    headroom=st.sampled_from(HEADROOMS),
)
def test_compress_and_explain_equal_the_reference(
    backend: str,
    turn: Turn,
    strategy: str,
    floor: float,
    on_overflow: str,
    order: str,
    loss: float,
    headroom: float,
) -> None:
    _check_against_the_reference(backend, turn, strategy, floor, on_overflow, order, loss, headroom)


@PROPERTY_SETTINGS
@given(
    turn=cut_turns(),
    strategy=st.sampled_from(STRATEGIES),
    on_overflow=st.sampled_from(ON_OVERFLOW),
    order=st.sampled_from(ORDERS),
    loss=st.sampled_from(LOSSES[:2]),
    headroom=st.sampled_from(HEADROOMS),
)
def test_a_run_cut_short_equals_the_reference(
    backend: str,
    turn: Turn,
    strategy: str,
    on_overflow: str,
    order: str,
    loss: float,
    headroom: float,
) -> None:
    _check_against_the_reference(backend, turn, strategy, 0.0, on_overflow, order, loss, headroom)


# Examples worked by hand -------------------------------------------------------------------

TASK = F("task", 10, 0.2, "the task", required=True)
A = F("a", 20, 0.9, "alpha")
B = F("b", 30, 0.8, "beta")
C = F("c", 40, 0.7, "gamma")
FIRST = (TASK, A, B, C)
SENT = (A, B, C, TASK)  # compress(FIRST, 120): everything, by rank
D = F("d", 15, 0.95, "delta")  # arrives on the second turn, ranked first
SECOND = (*FIRST, D)


def test_the_first_turn(backend: str) -> None:
    first = compress(FIRST, 120, backend=backend)
    assert same_objects(first.fragments, SENT)
    assert first.metadata.reused_tokens == 0
    assert first.metadata.to_dict()["reused_tokens"] == 0


def test_the_whole_previous_is_reused_when_it_fits(backend: str) -> None:
    # R = a, b, c, task (100 tokens); d fits the 20 left: the value is V* itself.
    explanation = explain(SECOND, 120, backend=backend, previous=SENT)
    result = explanation.result
    assert same_objects(result.fragments, (A, B, C, TASK, D))
    assert result.metadata.reused_tokens == 100
    assert result.metadata.compressed_tokens == 115
    assert result.metadata.to_dict()["reused_tokens"] == 100
    assert result.metadata.value_kept == math.fsum((0.2, 0.9, 0.8, 0.7, 0.95))
    assert (
        result.metadata.value_bound == compress(SECOND, 120, backend=backend).metadata.value_bound
    )
    assert decided(explanation) == [
        ("task", True, "reused", 4, None),
        ("a", True, "reused", 1, None),
        ("b", True, "reused", 2, None),
        ("c", True, "reused", 3, None),
        ("d", True, "fits", 0, 20),
    ]
    assert compress(SECOND, 120, backend=backend, previous=list(SENT)) == result
    # All of R kept: the cached prompt holds, and headroom changes nothing.
    assert compress(SECOND, 120, backend=backend, previous=SENT, headroom=0.5) == result
    # Without previous: by rank, nothing reused.
    plain = compress(SECOND, 120, backend=backend)
    assert ids(plain.fragments) == ["d", "a", "b", "c", "task"]
    assert plain.metadata.reused_tokens == 0


def test_a_dropped_fragment_ends_the_run(backend: str) -> None:
    # b is gone: R is a alone; c and task, though sent before, come by rank after d.
    context = (TASK, A, C, D)
    explanation = explain(context, 100, backend=backend, previous=SENT)
    assert same_objects(explanation.result.fragments, (A, D, C, TASK))
    assert explanation.result.metadata.reused_tokens == 20
    assert explanation.result.metadata.compressed_tokens == 85
    assert decided(explanation) == [
        ("task", True, "required", 3, None),
        ("a", True, "reused", 1, None),
        ("c", True, "fits", 2, 55),
        ("d", True, "fits", 0, 70),
    ]
    # A fragment previous names first that is gone: nothing is reused.
    gone = compress(context, 100, backend=backend, previous=(B, A))
    assert gone == compress(context, 100, backend=backend)
    assert gone.metadata.reused_tokens == 0


NOTE = F("note", 20, 0.6, "a note")
CALL = F("call", 10, 0.9, "read_file(x)", group="tool")
RESULT = F("result", 30, 0.5, "contents of x", group="tool")


def test_a_group_split_ends_the_run(backend: str) -> None:
    sent = compress((NOTE, CALL), 50, backend=backend, order="input")
    assert same_objects(sent.fragments, (NOTE, CALL))
    # The call's result joins its group: the unit {call, result} is not whole in previous.
    explanation = explain(
        (NOTE, CALL, RESULT), 100, backend=backend, order="input", previous=sent.fragments
    )
    assert same_objects(explanation.result.fragments, (NOTE, CALL, RESULT))
    assert explanation.result.metadata.reused_tokens == 20
    assert decided(explanation) == [
        ("note", True, "reused", 1, None),
        ("call", True, "fits", 0, 80),
        ("result", True, "fits", 0, 80),
    ]
    # Members out of input order split the unit too.
    swapped = compress((NOTE, CALL, RESULT), 100, backend=backend, previous=(RESULT, CALL))
    assert swapped.metadata.reused_tokens == 0


def test_max_value_loss_allows_reuse(backend: str) -> None:
    # Budget 100. V* = d, a, b, task = 2.85. F_4 = F_3 = a, b, c, task = 2.6 (8.8% less);
    # F_2 = a, b pinned, then d fits and c does not = 2.85.
    for loss in (0.0, 0.05):
        explanation = explain(SECOND, 100, backend=backend, previous=SENT, max_value_loss=loss)
        assert same_objects(explanation.result.fragments, (A, B, D, TASK))
        assert explanation.result.metadata.reused_tokens == 50
        assert explanation.result.metadata.compressed_tokens == 75
        assert decided(explanation) == [
            ("task", True, "required", 4, None),
            ("a", True, "reused", 1, None),
            ("b", True, "reused", 2, None),
            ("c", False, "no_room", 3, 25),
            ("d", True, "fits", 0, 40),
        ]
    explanation = explain(SECOND, 100, backend=backend, previous=SENT, max_value_loss=0.1)
    result = explanation.result
    assert same_objects(result.fragments, (A, B, C, TASK))
    assert result.metadata.reused_tokens == 100
    assert result.metadata.value_kept == math.fsum((0.2, 0.9, 0.8, 0.7))
    plain = compress(SECOND, 100, backend=backend)
    assert result.metadata.value_bound == plain.metadata.value_bound
    assert result.metadata.value_kept < plain.metadata.value_kept
    assert decided(explanation)[4] == ("d", False, "no_room", 0, 0)
    # The group split at budget 50: V* = the tool unit (1.4); the note alone is 0.6.
    context = (NOTE, CALL, RESULT)
    for loss, kept, reused in [(0.0, (CALL, RESULT), 0), (0.6, (NOTE,), 20)]:
        got = compress(
            context, 50, backend=backend, order="input", previous=(NOTE, CALL), max_value_loss=loss
        )
        assert same_objects(got.fragments, kept)
        assert got.metadata.reused_tokens == reused


def test_the_value_is_compared_exactly(backend: str) -> None:
    # V* = a's 0.1 = 429496730 units; eps = 0.3 is 0.29999999999999998889...: b must keep at
    # least 300647711.0000000048 units, so 300647712. At 300647711, floats would accept it.
    a = F("a", 10, 0.1)
    for b_units, reused in [(300647712, True), (300647711, False)]:
        b = F("b", 10, b_units / UNITS)
        got = compress((a, b), 10, backend=backend, previous=(b,), max_value_loss=0.3)
        assert same_objects(got.fragments, (b,) if reused else (a,))
        assert got.metadata.reused_tokens == (10 if reused else 0)
    # On the boundary: 0.75 is exactly (1 - 0.25) of 1.0.
    top, three_quarters = F("top", 10, 1.0), F("tq", 10, 0.75)
    boundary = compress(
        (top, three_quarters), 10, backend=backend, previous=(three_quarters,), max_value_loss=0.25
    )
    assert same_objects(boundary.fragments, (three_quarters,))
    below = math.nextafter(0.25, 0.0)
    refused = compress(
        (top, three_quarters), 10, backend=backend, previous=(three_quarters,), max_value_loss=below
    )
    assert same_objects(refused.fragments, (top,))


def test_headroom_leaves_room(backend: str) -> None:
    # eps 0 keeps R[:2] (a, b): the cached prompt breaks at c, so headroom applies. 0.3 x 100
    # is 29.99999999999999889 exactly: floor 29, the fill is made again in 71 tokens. a, b
    # and task take 60; d (15) no longer fits the 11 left.
    explanation = explain(SECOND, 100, backend=backend, previous=SENT, headroom=0.3)
    result = explanation.result
    assert same_objects(result.fragments, (A, B, TASK))
    assert result.metadata.reused_tokens == 50
    assert result.metadata.compressed_tokens == 60
    assert result.metadata.skeleton_budget == 100
    assert (
        result.metadata.value_bound == compress(SECOND, 100, backend=backend).metadata.value_bound
    )
    assert decided(explanation) == [
        ("task", True, "required", 4, None),
        ("a", True, "reused", 1, None),
        ("b", True, "reused", 2, None),
        ("c", False, "no_room", 3, 11),
        ("d", False, "no_room", 0, 11),
    ]
    # 0.2: 80 tokens, d still fits (budget_left is the smaller fill's).
    smaller = explain(SECOND, 100, backend=backend, previous=SENT, headroom=0.2)
    assert same_objects(smaller.result.fragments, (A, B, D, TASK))
    assert decided(smaller)[3:] == [("c", False, "no_room", 3, 5), ("d", True, "fits", 0, 20)]
    # 0.5: the pinned and required units (60) do not fit 50: the whole budget's fill stands.
    full = compress(SECOND, 100, backend=backend, previous=SENT, headroom=0.5)
    assert full == compress(SECOND, 100, backend=backend, previous=SENT)


def test_headroom_when_nothing_is_reused(backend: str) -> None:
    # R = note, k = 0 (the note alone is worth less than the tool unit), and the cached
    # prompt breaks: headroom applies. 0.5: the fill in 25 tokens keeps the note (not as
    # reused: k = 0); 0.7: floor(34.99999999999999778) = 34, so in 16 tokens, it keeps
    # nothing, and the fill of the whole budget (the call without previous) stands.
    context = (NOTE, CALL, RESULT)
    options: dict[str, Any] = {"backend": backend, "order": "input", "previous": (NOTE, CALL)}
    half = explain(context, 50, headroom=0.5, **options)
    assert same_objects(half.result.fragments, (NOTE,))
    assert half.result.metadata.reused_tokens == 0
    assert decided(half) == [
        ("note", True, "fits", 1, 25),
        ("call", False, "no_room", 0, 25),
        ("result", False, "no_room", 0, 25),
    ]
    most = explain(context, 50, headroom=0.7, **options)
    assert most == explain(context, 50, backend=backend, order="input")
    assert most.result.metadata.reused_tokens == 0


def test_headroom_of_a_budget_past_u128(backend: str) -> None:
    # Reusing b settles its variant set with the worse rendering, so no budget makes the
    # run worth keeping: k = 0 < |R|, and headroom applies however large the budget. The
    # room it leaves is measured from the real budget, past what the compiled core holds.
    whole = F("a", 5, 0.9, variant_of="doc")
    part = F("b", 3, 0.1, variant_of="doc")
    note = F("c", 4, 0.4)
    budget = 2**200
    share, scale = (0.3).as_integer_ratio()
    room = budget - share * budget // scale
    explanation = explain(
        (whole, part, note), budget, backend=backend, previous=(part,), headroom=0.3
    )
    assert same_objects(explanation.result.fragments, (whole, note))
    assert decided(explanation) == [
        ("a", True, "fits", 0, room),
        ("b", False, "variant_kept", 2, room - 9),
        ("c", True, "fits", 1, room - 5),
    ]
    # Near 1, the room binds: 2**129 less all but 2**-53 of it is 2**76 tokens, 8,192
    # fragments of 2**63 - 1 (measured from u128's largest, the room would hold half as many).
    many = tuple(F(f"f{i:05d}", 2**63 - 1, 0.5) for i in range(8_200))
    near_one = math.nextafter(1.0, 0.0)
    kept = compress(
        (whole, part, *many), 2**129, backend=backend, previous=(part,), headroom=near_one
    )
    assert same_objects(kept.fragments, (whole, *many[:8_192]))
    assert kept.metadata.compressed_tokens == 5 + 8_192 * (2**63 - 1)
    context = (whole, part, *many)
    rows = compress_arrays(
        [f.fragment_id for f in context],
        [f.token_count for f in context],
        [f.relevance_score for f in context],
        2**129,
        variants=[f.variant_of for f in context],
        backend=backend,
        previous=[1],
        headroom=near_one,
    )
    assert list(rows.indices) == [0, *range(2, 8_194)]


def test_previous_in_its_own_order(backend: str) -> None:
    got = compress(SECOND, 120, backend=backend, previous=(C, A))
    assert same_objects(got.fragments, (C, A, D, B, TASK))
    assert got.metadata.reused_tokens == 60
    edges = compress(SECOND, 120, backend=backend, previous=(C, A), order="edges")
    # The others by rank are d, b, task: edges over them alone is d, task, b.
    assert same_objects(edges.fragments, (C, A, D, TASK, B))
    by_input = compress(SECOND, 120, backend=backend, previous=(C, A), order="input")
    assert same_objects(by_input.fragments, (C, A, TASK, B, D))


def test_budget_zero_reuses_nothing(backend: str) -> None:
    task, free = F("task", 0, 0.2, required=True), F("free", 0, 0.9)
    explanation = explain((task, free), 0, backend=backend, previous=(free, task))
    assert same_objects(explanation.result.fragments, (task,))
    assert explanation.result.metadata.reused_tokens == 0
    assert decided(explanation) == [
        ("task", True, "required", 1, None),
        ("free", False, "zero_budget", 0, None),
    ]


def test_required_over_budget_reuses_nothing(backend: str) -> None:
    task, small = F("task", 50, 0.2, required=True), F("small", 10, 0.9)
    got = compress((task, small), 40, backend=backend, previous=(small, task))
    assert same_objects(got.fragments, (task,))
    assert got.metadata.reused_tokens == 0
    assert got.metadata.over_budget
    for on_overflow in ("strict", "raise"):
        with pytest.raises(BudgetExceededError) as raised:
            compress((task, small), 40, backend=backend, on_overflow=on_overflow, previous=(small,))
        assert str(raised.value) == "required fragments need 50 tokens, skeleton_budget is 40"


def test_previous_must_match_content_and_tokens(backend: str) -> None:
    plain = compress(SECOND, 120, backend=backend)
    for stale in (replace(A, content="alpha, before the edit"), replace(A, token_count=21)):
        got = compress(SECOND, 120, backend=backend, previous=(stale, B))
        assert got == plain and got.metadata.reused_tokens == 0
    # Relevance may differ: an earlier score of the same fragment matches.
    rescored = compress(SECOND, 120, backend=backend, previous=(replace(A, relevance_score=0.1),))
    assert same_objects(rescored.fragments, (A, D, B, C, TASK))
    assert rescored.metadata.reused_tokens == 20
    # A copy with the same id, tokens and content matches; the result holds this call's object.
    copy = F("a", 20, 0.9, "alpha")
    assert copy is not A
    assert compress(SECOND, 120, backend=backend, previous=(copy,)).fragments[0] is A


def test_token_counts_are_compared_as_python_compares_them(backend: str) -> None:
    numpy = pytest.importorskip("numpy")
    big = 2**62 + 1
    # numpy compares its int64 with a float as floats: there 2**62 + 1 equals float(2**62 + 1),
    # which is 2**62, though the plain int does not.
    assert numpy.int64(big) == float(big) and big != float(big)
    current = F("a", numpy.int64(big), 0.9, "alpha")
    sent = F("a", float(big), 0.9, "alpha")  # type: ignore[arg-type]
    got = compress((current,), 2**63, backend=backend, previous=(sent,))
    assert same_objects(got.fragments, (current,)) and got.metadata.reused_tokens == big


def test_an_id_that_only_claims_to_be_a_str_matches_nothing(backend: str) -> None:
    class ClaimsStr:
        __class__ = str  # type: ignore[assignment]

    assert isinstance(ClaimsStr(), str)
    sent = F(ClaimsStr(), 20, 0.9, "alpha")  # type: ignore[arg-type]
    alone = compress(SECOND, 120, backend=backend, previous=(sent,))
    assert alone == compress(SECOND, 120, backend=backend)
    assert alone.metadata.reused_tokens == 0
    after_a = compress(SECOND, 120, backend=backend, previous=(A, sent))
    assert after_a.metadata.reused_tokens == 20


def test_what_ends_the_run(backend: str) -> None:
    # Already in R: a repeat ends the run.
    repeated = compress(SECOND, 120, backend=backend, previous=(A, A, B))
    assert same_objects(repeated.fragments, (A, D, B, C, TASK))
    assert repeated.metadata.reused_tokens == 20
    # Not eligible: below min_relevance (and not required).
    low = F("low", 5, 0.1, "low")
    floor = compress((A, low, B), 100, backend=backend, min_relevance=0.5, previous=(A, low, B))
    assert same_objects(floor.fragments, (A, B))
    assert floor.metadata.reused_tokens == 20
    # Tokens: b would leave no room for the required task.
    task = F("task", 30, 0.2, "the task", required=True)
    tight = explain((task, A, B), 60, backend=backend, previous=(A, B, task))
    assert same_objects(tight.result.fragments, (A, task))
    assert tight.result.metadata.reused_tokens == 20
    assert decided(tight)[2] == ("b", False, "no_room", 1, 10)


def test_variant_sets_end_the_run(backend: str) -> None:
    full = F("main.py", 30, 0.9, "def f(): ...", variant_of="main")
    outline = F("main.py#outline", 5, 0.6, "def f()", variant_of="main")
    other = F("x", 10, 0.5, "x")
    context = (full, outline, other)
    # A second unit of a set R already has ends the run: R = outline. V* = full, x = 1.4;
    # outline and x = 1.1, within 25% of it.
    explanation = explain(
        context, 40, backend=backend, previous=(outline, full, other), max_value_loss=0.25
    )
    assert same_objects(explanation.result.fragments, (outline, other))
    assert explanation.result.metadata.reused_tokens == 5
    assert decided(explanation) == [
        ("main.py", False, "variant_kept", 0, None),
        ("main.py#outline", True, "reused", 1, None),
        ("x", True, "fits", 2, 35),
    ]
    strict_value = compress(context, 40, backend=backend, previous=(outline, full, other))
    assert strict_value == compress(context, 40, backend=backend)
    # A set with a required unit other than this one ends the run before it.
    pinned = replace(outline, required=True)
    settled = (full, pinned, other)
    got = compress(settled, 40, backend=backend, previous=(full, other))
    assert got == compress(settled, 40, backend=backend)
    assert got.metadata.reused_tokens == 0


def test_the_service_takes_the_same_arguments(backend: str) -> None:
    compressor = SkeletonCompressorService(backend=backend)
    got = compressor.compress(SECOND, 100, previous=SENT, max_value_loss=0.1, headroom=0.1)
    assert got == compress(SECOND, 100, backend=backend, previous=SENT, max_value_loss=0.1)
    assert got.metadata.reused_tokens == 100
    explanation = compressor.explain(SECOND, 100, previous=SENT, max_value_loss=0.1)
    assert explanation.result == got
    # Ints are real numbers.
    assert compressor.compress(SECOND, 100, previous=SENT, max_value_loss=0, headroom=0) == (
        compressor.compress(SECOND, 100, previous=SENT)
    )
    record = explanation.to_dict()
    assert record["metadata"]["reused_tokens"] == 100
    assert record["decisions"]["a"] == {
        "kept": True,
        "reason": "reused",
        "rank": 1,
        "budget_left": None,
    }
    json.dumps(record)


# Bad input ---------------------------------------------------------------------------------

PLAN = (TASK, A, B)

BAD_PREVIOUS: list[tuple[str, Callable[[], Any], type]] = [
    ("generator", lambda: (f for f in PLAN), TypeError),
    ("str", lambda: "ab", TypeError),
    ("dict", lambda: {f.fragment_id: f for f in PLAN}, TypeError),
    ("set", lambda: set(PLAN), TypeError),
    ("int", lambda: 3, TypeError),
]


class _LyingFloat(float):
    def __lt__(self, other: object) -> bool:
        return True

    __le__ = __gt__ = __ge__ = __lt__


class _LyingInt(int):
    def __lt__(self, other: object) -> bool:
        return True

    __le__ = __gt__ = __ge__ = __lt__


BAD_NUMBERS: list[tuple[Any, type]] = [
    (True, TypeError),
    ("0.1", TypeError),
    (None, TypeError),
    (-0.1, ValueError),
    (1.0, ValueError),
    (math.nan, ValueError),
    (math.inf, ValueError),
    (Fraction(-1, 10**400), ValueError),  # -0.0 as a float, below 0 as a number
    (_LyingFloat(-3.0), ValueError),  # read as the float it holds
    (_LyingInt(5), ValueError),
]


def _raised(call: Callable[[], Any]) -> tuple[type, str]:
    with pytest.raises(Exception) as raised:
        call()
    # The arguments exist: their check raised, not the call's signature.
    assert "unexpected keyword argument" not in str(raised.value)
    return type(raised.value), str(raised.value)


def _entry_points(
    backend: str, fragments: Any, budget: Any, **options: Any
) -> list[Callable[[], Any]]:
    compressor = SkeletonCompressorService(backend=backend)
    return [
        lambda: compress(fragments, budget, backend=backend, **options),
        lambda: explain(fragments, budget, backend=backend, **options),
        lambda: compressor.compress(fragments, budget, **options),
        lambda: compressor.explain(fragments, budget, **options),
    ]


@pytest.mark.parametrize(
    ("make", "error"),
    [(make, error) for _, make, error in BAD_PREVIOUS],
    ids=[name for name, _, _ in BAD_PREVIOUS],
)
def test_previous_must_be_a_tuple_or_list(
    backend: str, make: Callable[[], Any], error: type
) -> None:
    seen = set()
    for call in _entry_points(backend, PLAN, 50, previous=make()):
        kind, message = _raised(call)
        assert issubclass(kind, error) and not issubclass(kind, FragmentError)
        assert "previous" in message
        seen.add((kind, message))
    assert len(seen) == 1


def test_previous_items_must_be_fragments(backend: str) -> None:
    for bad in [(A, "b"), [A, B, None], (A, ("b", 30, 0.8))]:
        position = 1 if len(bad) == 2 else 2
        seen = set()
        for call in _entry_points(backend, PLAN, 50, previous=bad):
            kind, message = _raised(call)
            assert issubclass(kind, TypeError)
            assert f"previous[{position}]" in message
            seen.add((kind, message))
        assert len(seen) == 1


@pytest.mark.parametrize("name", ["max_value_loss", "headroom"])
@pytest.mark.parametrize(("value", "error"), BAD_NUMBERS)
def test_bad_max_value_loss_and_headroom(backend: str, name: str, value: Any, error: type) -> None:
    seen = set()
    for previous in (SENT, None):
        for call in _entry_points(backend, PLAN, 50, previous=previous, **{name: value}):
            kind, message = _raised(call)
            assert issubclass(kind, error) and not issubclass(kind, BudgetExceededError)
            assert name in message
            seen.add((kind, message))
    assert len(seen) == 1


def test_when_the_turn_arguments_are_checked(backend: str) -> None:
    bad_fragment = (F("a", -1, 0.5),)
    # After the fragments' container and the budget ...
    as_list: Any = list(PLAN)
    kind, message = _raised(lambda: compress(as_list, 10, backend=backend, previous="x"))
    assert kind is TypeError and "fragments must be a tuple" in message
    not_int: Any = 1.5
    kind, message = _raised(lambda: compress(bad_fragment, not_int, backend=backend, previous="x"))
    assert issubclass(kind, TypeError) and "skeleton_budget" in message
    kind, message = _raised(lambda: compress(bad_fragment, -1, backend=backend, headroom=2.0))
    assert issubclass(kind, ValueError) and "skeleton_budget" in message
    # ... before the fragments' own checks ...
    kind, message = _raised(lambda: compress(bad_fragment, 10, backend=backend, previous="x"))
    assert not issubclass(kind, FragmentError) and "previous" in message
    kind, message = _raised(
        lambda: compress(bad_fragment, 10, backend=backend, previous=(), max_value_loss=1.0)
    )
    assert not issubclass(kind, FragmentError) and "max_value_loss" in message
    # ... and before anything is kept (nor refused).
    over = (F("task", 50, 0.2, required=True),)
    for on_overflow in ("strict", "raise"):
        kind, message = _raised(
            lambda mode=on_overflow: compress(
                over, 10, backend=backend, on_overflow=mode, headroom=1.0
            )
        )
        assert not issubclass(kind, BudgetExceededError) and "headroom" in message
    # previous's items are checked as fragments only: one of an id not in the context does
    # not match, whatever its other fields hold.
    gone = F("gone", -5, 7.0)
    got = compress(PLAN, 60, backend=backend, previous=(gone, A))
    assert got == compress(PLAN, 60, backend=backend)


def test_both_backends_word_bad_input_alike() -> None:
    # Each case: the options (made afresh per call), the error, and what its message names.
    cases: list[tuple[Callable[[], dict[str, Any]], type, str]] = [
        *(
            (lambda make=make: {"previous": make()}, TypeError, "previous")
            for _, make, _ in BAD_PREVIOUS
        ),
        (lambda: {"previous": (A, 5)}, TypeError, "previous[1]"),
        (lambda: {"previous": [A, B, object()]}, TypeError, "previous[2]"),
        *(
            (lambda name=name, value=value: {name: value, "previous": SENT}, error, name)
            for name in ("max_value_loss", "headroom")
            for value, error in BAD_NUMBERS
        ),
    ]
    for options, error, named in cases:
        answers = {
            _raised(lambda name=backend, made=options: compress(PLAN, 50, backend=name, **made()))
            for backend in BACKENDS
        }
        assert len(answers) == 1, answers
        ((kind, message),) = answers
        assert issubclass(kind, error) and named in message


# compress_arrays ---------------------------------------------------------------------------


class Rows(NamedTuple):
    fragments: tuple[ContextFragment, ...]
    budget: int
    previous: Any


@st.composite
def row_turns(draw: st.DrawFn) -> Rows:
    fragments = draw(contexts(content=False))
    total = sum(f.token_count for f in fragments)
    budget = draw(st.integers(0, total + 3))
    count = len(fragments)
    if count and draw(st.booleans()):
        # What an earlier call kept of these rows, scored otherwise: its indices as they are.
        scores = [draw(st.sampled_from(RELEVANCES)) for _ in fragments]
        previous = compress_arrays(
            [f.fragment_id for f in fragments],
            [f.token_count for f in fragments],
            scores,
            draw(st.integers(0, total + 3)),
            required=[f.required for f in fragments],
            groups=[f.group for f in fragments],
            variants=[f.variant_of for f in fragments],
            order=draw(st.sampled_from(ORDERS)),
            backend="python",
        ).indices
        if draw(st.booleans()):
            previous = list(previous)
    else:
        # Any rows of this call, repeats included, in any order.
        previous = draw(st.lists(st.integers(0, count - 1), max_size=10)) if count else []
    return Rows(fragments, budget, previous)


@PROPERTY_SETTINGS
@given(
    case=row_turns(),
    strategy=st.sampled_from(STRATEGIES),
    floor=st.sampled_from(FLOORS),
    on_overflow=st.sampled_from(ON_OVERFLOW),
    order=st.sampled_from(ORDERS),
    loss=st.sampled_from(LOSSES),
    headroom=st.sampled_from(HEADROOMS),
)
def test_compress_arrays_equals_compress_with_those_fragments(
    backend: str,
    case: Rows,
    strategy: str,
    floor: float,
    on_overflow: str,
    order: str,
    loss: float,
    headroom: float,
) -> None:
    fragments, budget, rows = case
    options = {
        "strategy": strategy,
        "backend": backend,
        "min_relevance": floor,
        "on_overflow": on_overflow,
        "order": order,
        "max_value_loss": loss,
        "headroom": headroom,
    }
    previous = tuple(fragments[row] for row in rows)

    def by_rows() -> Any:
        return compress_arrays(
            [f.fragment_id for f in fragments],
            [f.token_count for f in fragments],
            [f.relevance_score for f in fragments],
            budget,
            required=[f.required for f in fragments],
            groups=[f.group for f in fragments],
            variants=[f.variant_of for f in fragments],
            previous=rows,
            **options,
        )

    try:
        expected = compress(fragments, budget, previous=previous, **options)
    except BudgetExceededError as refused:
        with pytest.raises(BudgetExceededError) as raised:
            by_rows()
        assert str(raised.value) == str(refused)
        return
    got = by_rows()
    assert isinstance(got.indices, array) and got.indices.typecode == "q"
    assert same_objects([fragments[i] for i in got.indices], expected.fragments)
    assert got.metadata == expected.metadata
    assert got.metadata.reused_tokens == expected.metadata.reused_tokens


def test_compress_arrays_takes_an_earlier_calls_indices(backend: str) -> None:
    columns: Any = (
        ids(SECOND),
        [f.token_count for f in SECOND],
        [f.relevance_score for f in SECOND],
    )
    flags = [f.required for f in SECOND]
    first = compress_arrays(*columns, 100, required=flags, backend=backend)
    assert [SECOND[i] for i in first.indices] == [D, A, B, TASK]
    assert first.metadata.reused_tokens == 0
    # The next turn scores c higher: the rows sent first still lead.
    scores = [0.2, 0.9, 0.8, 0.97, 0.95]
    again = compress_arrays(
        columns[0],
        columns[1],
        scores,
        100,
        required=flags,
        backend=backend,
        previous=first.indices,
        max_value_loss=0.3,
    )
    assert list(again.indices) == list(first.indices)
    assert again.metadata.reused_tokens == 75
    # Without the loss allowed, V* (c, d, a, task) asks for more than all four rows keep:
    # d and a lead, then c by rank.
    exact = compress_arrays(
        columns[0], columns[1], scores, 100, required=flags, backend=backend, previous=first.indices
    )
    assert list(exact.indices) == [4, 1, 3, 0]
    assert exact.metadata.reused_tokens == 35


@pytest.mark.parametrize(
    ("rows", "error"),
    [
        ([0, 3], ValueError),
        ([0, -1], ValueError),
        ([0, 10**30], ValueError),
        ([0, "1"], TypeError),
        ([0, 1.0], TypeError),
        ([0, None], TypeError),
    ],
)
def test_compress_arrays_refuses_rows_it_does_not_have(
    backend: str, rows: list[Any], error: type
) -> None:
    kind, message = _raised(
        lambda: compress_arrays(
            ["a", "b", "c"], [1, 2, 3], [0.5, 0.6, 0.7], 10, backend=backend, previous=rows
        )
    )
    assert issubclass(kind, error)
    assert "previous[1]" in message
    other = "python" if backend == "rust" else "rust"
    assert _raised(
        lambda: compress_arrays(
            ["a", "b", "c"], [1, 2, 3], [0.5, 0.6, 0.7], 10, backend=other, previous=rows
        )
    ) == (kind, message)


@pytest.mark.parametrize(
    ("rows", "got"),
    [
        ({0, 1}, "set (a set has no order)"),
        (frozenset({1}), "frozenset (a set has no order)"),
        ({0: "a"}, "dict"),
    ],
)
def test_compress_arrays_refuses_rows_in_no_order(backend: str, rows: object, got: str) -> None:
    # A set's or a mapping's order is not the order an earlier call sent its rows in.
    with pytest.raises(TypeError) as raised:
        compress_arrays(["a", "b"], [1, 2], [0.5, 0.6], 10, backend=backend, previous=rows)
    assert str(raised.value) == f"previous must be None or a sequence of row numbers, got {got}"


def test_compress_arrays_with_no_rows_names_none_for_previous(backend: str) -> None:
    with pytest.raises(
        ValueError, match=r"previous\[0\] must be a row of this call \(it has none\)"
    ):
        compress_arrays([], [], [], 10, backend=backend, previous=[0])


def test_a_share_just_below_1_is_the_float_just_below_1(backend: str) -> None:
    # 1 - 2**-60 is in [0, 1) though its float is 1.0.
    below_one = math.nextafter(1.0, 0.0)
    for name in ("max_value_loss", "headroom"):
        exact = compress(
            PLAN, 50, backend=backend, previous=SENT, **{name: Fraction(2**60 - 1, 2**60)}
        )
        assert exact == compress(PLAN, 50, backend=backend, previous=SENT, **{name: below_one})


def test_compress_arrays_reads_the_rows_a_list_subclass_stores(backend: str) -> None:
    class Rows(list):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            return iter([1])

    columns = (["a", "b", "c"], [5, 5, 5], [0.9, 0.8, 0.1])
    kept = compress_arrays(*columns, 10, backend=backend, previous=Rows([2]))
    assert (list(kept.indices), kept.metadata.reused_tokens) == ([0, 1], 0)


def test_compress_arrays_checks_rows_against_the_columns_their_own_code_left(
    backend: str,
) -> None:
    ids, tokens, scores = ["a", "b", "c"], [5, 5, 5], [0.9, 0.8, 0.1]

    class Row:
        def __index__(self) -> int:
            for column in (ids, tokens, scores):
                column.pop()
            return 2  # a row when the columns had three

    with pytest.raises(
        ValueError, match=r"^previous\[0\] must be a row of this call \(0 to 1\), got 2$"
    ):
        compress_arrays(ids, tokens, scores, 10, backend=backend, previous=[Row()])


def test_compress_arrays_names_columns_of_two_lengths_before_any_row(backend: str) -> None:
    with pytest.raises(ValueError, match="must have one length, got 1, 2 and 2"):
        compress_arrays(["a"], [5, 5], [0.9, 0.5], 10, backend=backend, previous=[1])
    # A row that is no number is named first, as without the lengths' problem.
    with pytest.raises(TypeError, match=r"^previous\[0\] must be a row number"):
        compress_arrays(["a"], [5, 5], [0.9, 0.5], 10, backend=backend, previous=["x"])


def test_compress_arrays_reads_an_int_subclass_row_as_the_int_it_holds(backend: str) -> None:
    class Row(int):
        def __lt__(self, other: object) -> bool:
            return True

        __le__ = __gt__ = __ge__ = __lt__

    with pytest.raises(ValueError, match=r"^previous\[0\] must be a row of this call"):
        compress_arrays(["a", "b"], [5, 5], [0.9, 0.5], 10, backend=backend, previous=[Row(7)])


def test_compress_arrays_names_numpy_rows_of_the_wrong_shape(backend: str) -> None:
    numpy = pytest.importorskip("numpy")
    columns = (["a", "b"], [5, 5], [0.9, 0.5])
    with pytest.raises(TypeError, match=r"^previous\[0\] must be a row number \(an int\)"):
        compress_arrays(*columns, 10, backend=backend, previous=numpy.array([[0], [1]]))
    with pytest.raises(TypeError, match=r"^previous must be None or a sequence of row numbers"):
        compress_arrays(*columns, 10, backend=backend, previous=numpy.array(0))


# SkeletonMetadata.reused_tokens -------------------------------------------------------------


def test_metadata_reused_tokens() -> None:
    plain = SkeletonMetadata(100, 40, 0.4)
    assert plain.reused_tokens is None
    assert plain.to_dict()["reused_tokens"] is None
    reused = SkeletonMetadata(100, 40, 0.4, reused_tokens=30)
    assert reused.reused_tokens == 30
    assert reused.to_dict()["reused_tokens"] == 30
    json.dumps(reused.to_dict())
    assert reused != plain
    for bad in (-1, 1.5, "30", True):
        with pytest.raises(ValueError, match="reused_tokens"):
            SkeletonMetadata(100, 40, 0.4, reused_tokens=bad)
