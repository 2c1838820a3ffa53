"""The selection policy's options, errors and explanations, on both backends."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from skeleton_compressor import (
    BudgetExceededError,
    ContextFragment,
    FragmentDecision,
    FragmentTypeError,
    SkeletonCompressorService,
    compress,
    compress_arrays,
    explain,
)

F = ContextFragment

TASK = F("task", 40, 0.2, required=True)
CALL = F("call", 30, 0.9, group="tool")
RESULT = F("result", 50, 0.3, group="tool")
NOTE = F("note", 20, 0.6)
JUNK = F("junk", 5, 0.05)
PLAN = (TASK, CALL, RESULT, NOTE, JUNK)


def ids(fragments: Any) -> list[str]:
    return [f.fragment_id for f in fragments]


def test_defaults_are_the_plain_compression(backend: str) -> None:
    plain = (F("a", 5, 0.5), F("b", 5, 0.9), F("c", 50, 0.7))
    result = compress(plain, 20, backend=backend)
    assert ids(result.fragments) == ["b", "a"]
    service = SkeletonCompressorService(backend=backend)
    assert service.policy == (0.0, "keep_top", "ranking")
    assert repr(service) == f"SkeletonCompressorService(backend={backend!r}, strategy='greedy')"
    assert repr(SkeletonCompressorService(backend=backend, order="edges")) == (
        f"SkeletonCompressorService(backend={backend!r}, strategy='greedy', order='edges')"
    )


def test_a_pinned_task_and_a_tool_call_kept_with_its_result(backend: str) -> None:
    explanation = explain(PLAN, 130, backend=backend, min_relevance=0.1)
    result = explanation.result
    # The group ranks by its call (0.9); its members keep their input order; the pinned task
    # sits at its own rank (relevance 0.2), after the group.
    assert ids(result.fragments) == ["call", "result", "task"]
    assert result.metadata.compressed_tokens == 120
    assert result == compress(PLAN, 130, backend=backend, min_relevance=0.1)
    assert [tuple(d)[1:] for d in explanation.decisions] == [
        (True, "required", 2, None),
        (True, "fits", 0, 90),
        (True, "fits", 0, 90),
        (False, "no_room", 1, 10),
        (False, "below_min_relevance", 3, None),
    ]
    assert explanation.decisions[0].fragment is TASK
    assert isinstance(explanation.decisions[0], FragmentDecision)
    record = explanation.to_dict()
    assert record["decisions"]["note"] == {
        "kept": False,
        "reason": "no_room",
        "rank": 1,
        "budget_left": 10,
    }
    assert record["metadata"]["compressed_tokens"] == 120
    json.dumps(record)


@pytest.mark.parametrize(
    ("on_overflow", "expected"),
    [("keep_top", ["task"]), ("strict", None), ("raise", None)],
)
def test_required_fragments_over_budget(
    backend: str, on_overflow: str, expected: list[str] | None
) -> None:
    service = SkeletonCompressorService(backend=backend, on_overflow=on_overflow)
    if expected is not None:
        result = service.compress(PLAN, 30)
        assert ids(result.fragments) == expected
        assert result.metadata.over_budget
        return
    with pytest.raises(BudgetExceededError) as raised:
        service.compress(PLAN, 30)
    error = raised.value
    assert isinstance(error, ValueError)
    assert (error.skeleton_budget, error.needed_tokens) == (30, 40)
    assert str(error) == "required fragments need 40 tokens, skeleton_budget is 30"
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), again.needed_tokens) == (type(error), str(error), 40)


def test_input_order(backend: str) -> None:
    result = compress(PLAN, 1000, backend=backend, order="input")
    assert ids(result.fragments) == ids(PLAN)


def test_compress_arrays_takes_required_and_groups(backend: str) -> None:
    columns: Any = (
        [f.fragment_id for f in PLAN],
        [f.token_count for f in PLAN],
        [f.relevance_score for f in PLAN],
    )
    flags = [f.required for f in PLAN]
    groups = [f.group for f in PLAN]
    got = compress_arrays(
        *columns, 130, required=flags, groups=groups, min_relevance=0.1, backend=backend
    )
    assert list(got.indices) == [1, 2, 0]
    np = pytest.importorskip("numpy")
    again = compress_arrays(
        *columns,
        130,
        required=np.array(flags),
        groups=np.array(groups, dtype=object),
        min_relevance=0.1,
        backend=backend,
    )
    assert list(again.indices) == [1, 2, 0]
    with pytest.raises(
        ValueError,
        match=r"^fragment_ids, token_counts, relevance_scores and required must have one "
        r"length, got 5, 5, 5 and 4$",
    ):
        compress_arrays(*columns, 10, required=flags[:4], backend=backend)
    with pytest.raises(FragmentTypeError, match=r"^rows\[0\] \(id 'task'\): required must be"):
        compress_arrays(*columns, 10, required=[1, 0, 0, 0, 0], backend=backend)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"min_relevance": True}, TypeError, "min_relevance must be a real number, got bool"),
        ({"min_relevance": "0.5"}, TypeError, "min_relevance must be a real number, got str"),
        ({"min_relevance": 1.5}, ValueError, "min_relevance must be in [0, 1], got 1.5"),
        ({"min_relevance": float("nan")}, ValueError, "min_relevance must be in [0, 1], got nan"),
        (
            {"on_overflow": "never"},
            ValueError,
            "on_overflow must be one of keep_top, strict, raise, got 'never'",
        ),
        ({"order": 3}, ValueError, "order must be one of ranking, input, edges, got 3"),
    ],
)
def test_bad_options(backend: str, options: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error) as raised:
        SkeletonCompressorService(backend=backend, **options)
    assert str(raised.value) == message
    with pytest.raises(error):
        compress(PLAN, 10, backend=backend, **options)


def test_numpy_bools_are_read_as_bools(backend: str) -> None:
    np = pytest.importorskip("numpy")
    fragments = (F("a", 50, 0.1, required=np.bool_(True)), F("b", 5, 0.9))
    assert ids(compress(fragments, 50, backend=backend).fragments) == ["a"]


def test_budgets_beyond_64_bits_are_explained_exactly(backend: str) -> None:
    budget = 10**30
    explanation = explain(PLAN, budget, backend=backend)
    assert explanation.result.fragments == (CALL, RESULT, NOTE, TASK, JUNK)
    left = {d.fragment.fragment_id: d.budget_left for d in explanation.decisions}
    assert left == {
        "task": None,
        "call": budget - 40,
        "result": budget - 40,
        "note": budget - 120,
        "junk": budget - 140,
    }


def test_fragments_from_text_take_the_policy_fields() -> None:
    fragment = ContextFragment.from_text(
        "a", "hello world", 0.5, counter=len, required=True, group="tool"
    )
    assert fragment == ContextFragment("a", 11, 0.5, "hello world", True, "tool")
    assert ContextFragment.from_text("b", "hi", 0.5, counter=len).required is False


def test_budgets_beyond_128_bits_are_explained_exactly(backend: str) -> None:
    for budget in (2**128, 2**130):
        explanation = explain((TASK, F("a", 1, 0.5)), budget, backend=backend)
        assert [d.budget_left for d in explanation.decisions] == [None, budget - 40]


class Agreeable(float):
    """A float that calls itself equal to everything."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


class Bogus(str):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


def test_options_are_read_as_their_plain_values(backend: str) -> None:
    fragments = (F("a", 1, 0.9), F("b", 1, 0.5))
    low = compress(fragments, 10, backend=backend, min_relevance=Agreeable(0.1))
    assert ids(low.fragments) == ["a", "b"]
    high = compress(fragments, 10, backend=backend, min_relevance=Agreeable(0.95))
    assert ids(high.fragments) == []
    for options in ({"order": Bogus("bogus")}, {"on_overflow": Bogus("x")}):
        with pytest.raises(ValueError, match=r"must be one of .*, got ('bogus'|'x')$"):
            SkeletonCompressorService(backend=backend, **options)
    with pytest.raises(ValueError, match="strategy must be one of greedy, prefix"):
        compress(fragments, 10, backend=backend, strategy=Bogus("prefix-ish"))


def test_a_child_view_leaves_bad_contexts_to_the_compressor(backend: str) -> None:
    from skeleton_compressor import Plan

    service = SkeletonCompressorService(backend=backend)
    as_list = Plan("p", "g", context=[F("a", 1, 0.5)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="fragments must be a tuple"):
        as_list.spawn_subplan("c", "g", 5, compressor=service, relevance={"a": 0.9})
    junk = Plan("p", "g", context=(F("a", 1, 0.5), "junk"))  # type: ignore[arg-type]
    with pytest.raises(FragmentTypeError, match=r"fragments\[1\] must be a ContextFragment"):
        junk.spawn_subplan("c", "g", 5, compressor=service, relevance={"a": 0.9})
    bad_id = Plan("p", "g", context=(F(["x"], 1, 0.5),))  # type: ignore[arg-type]
    with pytest.raises(FragmentTypeError, match=r"fragment_id must be a str"):
        bad_id.spawn_subplan("c", "g", 5, compressor=service, relevance={"a": 0.9})
