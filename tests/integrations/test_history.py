"""The framework-free history packer: tool groups, the start on a turn, and every result
checked against a brute-force reference over all subsets of small histories."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skeleton_compressor import BudgetExceededError, FragmentValueError
from skeleton_compressor.integrations._history import MessageShape, pack_history, tool_groups
from skeleton_compressor.integrations._packing import Packing

SYSTEM = MessageShape(pinned=True, system=True)
USER = MessageShape(opens_turn=True)
LATEST_USER = MessageShape(pinned=True, opens_turn=True)
REPLY = MessageShape()

# The backend fixture is a plain name, the same for every generated input.
FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def call(*ids: str) -> MessageShape:
    return MessageShape(calls=ids)


def answer(*ids: str) -> MessageShape:
    return MessageShape(answers=ids)


def packing(backend: str, budget: int, **options: str) -> Packing:
    return Packing(budget, len, backend=backend, **options)  # type: ignore[arg-type]


# tool_groups


def partition(groups: list[str | None]) -> list[list[int]]:
    """The messages sharing each group (their names are the implementation's)."""
    names = dict.fromkeys(group for group in groups if group is not None)
    return [[i for i, group in enumerate(groups) if group == name] for name in names]


def test_a_call_shares_a_group_with_every_answer_and_nothing_else() -> None:
    shapes = [USER, call("a", "b"), answer("a"), answer("b"), call("c"), answer("c"), USER]
    assert tool_groups(shapes, "messages") == [
        None, "tools@1", "tools@1", "tools@1", "tools@4", "tools@4", None,
    ]  # fmt: skip


def test_an_answer_to_two_callers_joins_their_groups() -> None:
    shapes = [call("a"), call("b"), REPLY, answer("a", "b")]
    groups = tool_groups(shapes, "messages")
    assert partition(groups) == [[0, 1, 3]]
    assert groups[2] is None


def test_an_unanswered_call_is_a_group_of_its_own() -> None:
    groups = tool_groups([USER, call("a")], "items")
    assert groups[0] is None and partition(groups) == [[1]]


def test_an_answer_to_an_unknown_or_later_call_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError) as unknown:
        tool_groups([USER, call("a"), answer("b")], "messages")
    assert str(unknown.value) == "messages[2] answers tool call 'b', which no earlier message makes"
    with pytest.raises(ValueError) as later:
        tool_groups([answer("a"), call("a")], "history")
    assert str(later.value) == "history[0] answers tool call 'a', which no earlier message makes"


def test_an_answer_goes_with_the_latest_call_of_its_id() -> None:
    groups = tool_groups([call("a"), answer("a"), USER, call("a"), answer("a")], "messages")
    assert groups[0] == groups[1] and groups[3] == groups[4]
    assert groups[0] != groups[3] and groups[2] is None


# pack_history, hand-checked


def test_a_selection_starting_inside_a_turn_is_made_again_from_that_turn(backend: str) -> None:
    shapes = [SYSTEM, USER, REPLY, USER, call("a"), answer("a"), LATEST_USER]
    counts = [1, 1, 1, 5, 1, 1, 1]
    scores = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.9]
    # Greedy first keeps [0, 2, 4, 5, 6]: it starts on the reply at 2, whose turn opens at 1.
    kept, metadata = pack_history(packing(backend, 5), shapes, counts, scores, "messages")
    assert kept == [0, 1, 4, 5, 6]
    assert (metadata.original_tokens, metadata.compressed_tokens) == (11, 5)
    assert (metadata.fragments_total, metadata.fragments_kept) == (7, 5)
    assert metadata.ratio == 5 / 11


def test_without_start_on_turn_the_first_selection_stands(backend: str) -> None:
    shapes = [SYSTEM, USER, REPLY, USER, call("a"), answer("a"), LATEST_USER]
    counts = [1, 1, 1, 5, 1, 1, 1]
    scores = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.9]
    kept, _ = pack_history(
        packing(backend, 5), shapes, counts, scores, "messages", start_on_turn=False
    )
    assert kept == [0, 2, 4, 5, 6]


def test_a_turn_too_large_to_start_on_gives_way_to_a_later_one(backend: str) -> None:
    shapes = [SYSTEM, USER, REPLY, USER, REPLY, LATEST_USER]
    counts = [1, 4, 1, 1, 1, 1]
    scores = [0.0, 0.1, 0.8, 0.3, 0.4, 0.9]
    # Greedy first keeps [0, 2, 4, 5]; the turn at 1 needs 4 tokens beside the pinned 2.
    kept, metadata = pack_history(packing(backend, 4), shapes, counts, scores, "messages")
    assert kept == [0, 3, 4, 5]
    assert metadata.compressed_tokens == 4


def test_an_earlier_turn_when_no_later_one_fits(backend: str) -> None:
    shapes = [USER, REPLY, USER, REPLY, USER]
    counts = [1, 1, 5, 1, 5]
    scores = [0.1, 0.2, 0.3, 0.9, 0.05]
    # Prefix first keeps [3] and stops at 2; turns 2 and 4 do not fit, turn 0 does.
    kept, _ = pack_history(
        packing(backend, 3, strategy="prefix"), shapes, counts, scores, "messages"
    )
    assert kept == [0, 3]


def test_without_any_turn_only_the_pinned_messages_are_kept(backend: str) -> None:
    shapes = [SYSTEM, call("a"), answer("a"), REPLY]
    kept, metadata = pack_history(packing(backend, 100), shapes, [3, 2, 2, 2], [0.5] * 4, "m")
    assert kept == [0]
    assert (metadata.original_tokens, metadata.compressed_tokens, metadata.ratio) == (9, 3, 1 / 3)


def test_a_history_of_no_tokens_made_again_reports_a_ratio_of_one(backend: str) -> None:
    kept, metadata = pack_history(packing(backend, 5), [REPLY, LATEST_USER], [0, 0], [1, 1], "m")
    assert kept == [1]
    assert (metadata.original_tokens, metadata.ratio) == (0, 1.0)


def test_pinned_messages_over_the_budget_are_kept_alone_under_keep_top(backend: str) -> None:
    shapes = [SYSTEM, USER, REPLY, LATEST_USER]
    kept, metadata = pack_history(packing(backend, 3), shapes, [2, 1, 1, 2], [1.0] * 4, "m")
    assert kept == [0, 3]
    assert metadata.over_budget


def test_keep_top_keeps_no_unit_over_the_budget_when_nothing_is_pinned(backend: str) -> None:
    for start_on_turn in (True, False):
        kept, metadata = pack_history(
            packing(backend, 3), [USER, REPLY], [4, 5], [0.5, 1.0], "m", start_on_turn=start_on_turn
        )
        assert kept == []
        assert (metadata.original_tokens, metadata.compressed_tokens) == (9, 0)
        assert (metadata.ratio, metadata.fragments_kept, metadata.value_kept) == (0.0, 0, 0.0)


@pytest.mark.parametrize("on_overflow", ["keep_top", "strict", "raise"])
def test_nothing_pinned_and_nothing_fitting_keeps_nothing_under_every_rule(
    backend: str, on_overflow: str
) -> None:
    # `raise` raises for pinned messages alone; here keep_top keeps nothing either.
    for start_on_turn in (True, False):
        kept, metadata = pack_history(
            packing(backend, 3, on_overflow=on_overflow),
            [USER, REPLY],
            [4, 5],
            [0.5, 1.0],
            "m",
            start_on_turn=start_on_turn,
        )
        assert (kept, metadata.compressed_tokens, metadata.over_budget) == ([], 0, False)


def test_pinned_messages_over_the_budget_raise_under_strict(backend: str) -> None:
    with pytest.raises(BudgetExceededError) as error:
        pack_history(
            packing(backend, 3, on_overflow="strict"),
            [SYSTEM, USER, LATEST_USER],
            [2, 1, 2],
            [1.0] * 3,
            "m",
        )
    assert (error.value.skeleton_budget, error.value.needed_tokens) == (3, 4)


def test_bad_scores_and_counts_name_the_message_and_its_id(backend: str) -> None:
    shapes = [USER, REPLY]
    with pytest.raises(FragmentValueError) as score:
        pack_history(packing(backend, 9), shapes, [1, 1], [0.5, 1.5], "messages", ids=["a", "b"])
    assert str(score.value) == "messages[1] (id 'b'): relevance_score must be in [0, 1], got 1.5"
    with pytest.raises(FragmentValueError) as count:
        pack_history(packing(backend, 9), shapes, [-1, 1], [0.5, 0.5], "messages", ids=[None, "b"])
    assert str(count.value) == "messages[0]: token_count must be >= 0, got -1"


# pack_history against every subset of small histories


def reference_groups(shapes: list[MessageShape]) -> list[frozenset[int]]:
    """The units, found by growing each call's component until no message joins it."""
    units: list[set[int]] = []
    for index in range(len(shapes)):
        linked = {index}
        grown = True
        while grown:
            ids = {i for member in linked for i in shapes[member].calls + shapes[member].answers}
            more = {
                other
                for other, shape in enumerate(shapes)
                if set(shape.calls + shape.answers) & ids
            }
            grown = not more <= linked
            linked |= more
        if linked not in units:
            units.append(linked)
    return [frozenset(unit) for unit in units]


def value(score: float) -> int:
    return round(score * 2**32)


def starts_on_turn(kept: list[int], shapes: list[MessageShape]) -> bool:
    for index in kept:
        shape = shapes[index]
        if shape.pinned and not shape.opens_turn:
            continue
        return shape.opens_turn and not shape.answers
    return True


def valid_subsets(
    shapes: list[MessageShape], counts: list[int], budget: int, start_on_turn: bool
) -> list[list[int]]:
    units = reference_groups(shapes)
    required = [unit for unit in units if any(shapes[i].pinned for i in unit)]
    optional = [unit for unit in units if unit not in required]
    base = set().union(*required)
    found = []
    for size in range(len(optional) + 1):
        for chosen in combinations(optional, size):
            kept = sorted(base.union(*chosen))
            if sum(counts[i] for i in kept) > budget:
                continue
            if start_on_turn and not starts_on_turn(kept, shapes):
                continue
            found.append(kept)
    return found


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[MessageShape], list[int], list[float]]:
    shapes: list[MessageShape] = [SYSTEM] if draw(st.booleans()) else []
    calls = 0
    while len(shapes) < 8:
        kind = draw(st.sampled_from(["user", "reply", "calls", "system", "stop"]))
        if kind == "stop":
            break
        if kind == "calls":
            ids = [f"c{calls + k}" for k in range(draw(st.integers(1, 2)))]
            calls += len(ids)
            answers = draw(st.permutations(ids))
            shapes += [call(*ids), *(answer(i) for i in answers[: draw(st.integers(0, 2))])]
        else:
            shapes.append({"user": USER, "reply": REPLY, "system": SYSTEM}[kind])
    users = [i for i, shape in enumerate(shapes) if shape is USER]
    if users and draw(st.booleans()):
        shapes[users[-1]] = LATEST_USER
    counts = draw(st.lists(st.integers(0, 6), min_size=len(shapes), max_size=len(shapes)))
    scores = draw(
        st.lists(st.integers(0, 8).map(lambda k: k / 8), min_size=len(shapes), max_size=len(shapes))
    )
    return shapes, counts, scores


@FUZZ
@given(history=histories(), budget=st.integers(0, 30))
def test_optimal_keeps_the_best_valid_subset(
    backend: str, history: tuple[list[MessageShape], list[int], list[float]], budget: int
) -> None:
    shapes, counts, scores = history
    required_rows = required_rows_of(shapes)
    if sum(counts[i] for i in required_rows) > budget:
        return
    kept, metadata = pack_history(
        packing(backend, budget, strategy="optimal", on_overflow="strict"),
        shapes, counts, scores, "m", start_on_turn=False,
    )  # fmt: skip
    subsets = valid_subsets(shapes, counts, budget, start_on_turn=False)
    assert kept in subsets
    best = max(sum(value(scores[i]) for i in subset) for subset in subsets)
    if budget == 0:  # the library keeps only the required units at a budget of 0
        assert kept == required_rows
        return
    assert sum(value(scores[i]) for i in kept) == best
    fewest = min(
        sum(counts[i] for i in s) for s in subsets if sum(value(scores[i]) for i in s) == best
    )
    assert metadata.compressed_tokens == sum(counts[i] for i in kept) == fewest


def required_rows_of(shapes: list[MessageShape]) -> list[int]:
    units = reference_groups(shapes)
    return sorted(set().union(*(u for u in units if any(shapes[i].pinned for i in u))))


@FUZZ
@given(
    history=histories(),
    budget=st.integers(0, 30),
    strategy=st.sampled_from(["greedy", "prefix", "density", "optimal"]),
    on_overflow=st.sampled_from(["keep_top", "strict"]),
)
def test_every_result_starts_on_a_turn_when_some_valid_subset_does(
    backend: str,
    history: tuple[list[MessageShape], list[int], list[float]],
    budget: int,
    strategy: str,
    on_overflow: str,
) -> None:
    shapes, counts, scores = history
    required_rows = required_rows_of(shapes)
    pinned_overflow = sum(counts[i] for i in required_rows) > budget
    chosen = packing(backend, budget, strategy=strategy, on_overflow=on_overflow)
    if pinned_overflow and on_overflow == "strict":
        with pytest.raises(BudgetExceededError):
            pack_history(chosen, shapes, counts, scores, "m")
        return
    kept, metadata = pack_history(chosen, shapes, counts, scores, "m")
    assert kept == sorted(kept)
    assert metadata.compressed_tokens == sum(counts[i] for i in kept)
    assert (metadata.fragments_kept, metadata.fragments_total) == (len(kept), len(shapes))
    assert metadata.original_tokens == sum(counts)
    if pinned_overflow:
        assert kept == required_rows  # keep_top: the pinned units and nothing else
        return
    assert not metadata.over_budget
    subsets = valid_subsets(shapes, counts, budget, start_on_turn=True)
    assert kept in subsets if subsets else kept == required_rows
