"""SkeletonMetadata's own checks, and the plan model."""

from __future__ import annotations

import json
import math
import sys
from decimal import Decimal
from fractions import Fraction

import pytest
from skeleton_compressor import (
    ContextFragment,
    FragmentTypeError,
    Plan,
    SkeletonCompressorService,
    SkeletonMetadata,
    SkeletonResult,
    compress,
)
from skeleton_compressor.service import _service


def test_metadata_accepts_consistent_values() -> None:
    metadata = SkeletonMetadata(1000, 500, 0.5, 600, 10, 4)
    assert not metadata.over_budget
    assert SkeletonMetadata(0, 0, 1.0).ratio == 1.0
    assert SkeletonMetadata(3, 1, 1 / 3 + 1e-10).ratio == pytest.approx(1 / 3)
    assert SkeletonMetadata(100, 100, 1.0, 50).over_budget
    assert not SkeletonMetadata(100, 100, 1.0).over_budget


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((100, 200, 2.0), "compressed_tokens must not exceed original_tokens"),
        ((-1, 0, 1.0), "original_tokens must be an int >= 0"),
        ((10, -1, 0.0), "compressed_tokens must be an int >= 0"),
        ((10.0, 5, 0.5), "original_tokens must be an int >= 0"),
        ((True, 0, 0.0), "original_tokens must be an int >= 0"),
        ((10, 5, 0.6), "ratio must be compressed_tokens / original_tokens"),
        ((10, 5, float("nan")), "ratio must be"),
        ((0, 0, 0.0), "ratio must be"),
        ((10, 5, "0.5"), "ratio must be"),
        ((10, 5, 0.5, -1), "skeleton_budget must be None or an int >= 0"),
        ((10, 5, 0.5, None, 2, 3), "fragments_kept must not exceed fragments_total"),
    ],
)
def test_metadata_rejects(arguments: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SkeletonMetadata(*arguments)


def test_metadata_is_frozen_and_serialisable() -> None:
    metadata = SkeletonMetadata(1000, 500, 0.5, 500, 4, 2)
    with pytest.raises(AttributeError):
        metadata.ratio = 1.0  # type: ignore[misc]
    assert json.loads(json.dumps(metadata.to_dict())) == metadata.to_dict()


def test_plan_spawns_compressed_subplan(service: SkeletonCompressorService) -> None:
    context = (
        ContextFragment("a", 400, 0.9, "alpha"),
        ContextFragment("b", 300, 0.5),
        ContextFragment("c", 200, 0.7),
    )
    parent = Plan("parent", "ship it", context=context)
    child = parent.spawn_subplan("child", "part of it", 600, compressor=service)
    assert child.parent_id == "parent"
    assert child.context == (context[0], context[2])
    assert child.skeleton_metadata == service.compress(context, 600).metadata
    cli = child.to_cli_dict()
    assert cli["context"] == [
        {"fragment_id": "a", "token_count": 400, "relevance_score": 0.9},
        {"fragment_id": "c", "token_count": 200, "relevance_score": 0.7},
    ]
    assert cli["skeleton_metadata"]["compressed_tokens"] == 600
    assert json.loads(json.dumps(cli)) == cli


def test_plan_uses_default_compressor_and_accepts_any_protocol_implementation() -> None:
    parent = Plan("p", "g", context=(ContextFragment("a", 10, 0.5),))
    assert parent.spawn_subplan("c", "g", 5).context == parent.context

    class KeepNothing:
        def compress(self, fragments: tuple, skeleton_budget: int) -> SkeletonResult:
            return SkeletonResult((), SkeletonMetadata(10, 0, 0.0, skeleton_budget))

    child = parent.spawn_subplan("c", "g", 5, compressor=KeepNothing())
    assert child.context == ()

    class ReturnsNone:
        def compress(self, fragments: tuple, skeleton_budget: int) -> None:
            return None

    with pytest.raises(TypeError, match=r"^ReturnsNone\.compress must return a SkeletonResult"):
        parent.spawn_subplan("c", "g", 5, compressor=ReturnsNone())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^compressor must be a SkeletonCompressor .*, got str$"):
        parent.spawn_subplan("c", "g", 5, compressor="rust")  # type: ignore[arg-type]


def test_plan_metadata_is_optional_and_checked() -> None:
    plan = Plan("p", "g")
    assert plan.to_cli_dict() == {
        "plan_id": "p",
        "goal": "g",
        "parent_id": None,
        "context": [],
        "skeleton_metadata": None,
    }
    assert plan.with_skeleton_metadata(None) == plan
    with pytest.raises(TypeError, match="SkeletonMetadata"):
        plan.with_skeleton_metadata({"ratio": 0.5})  # type: ignore[arg-type]


def test_metadata_of_computes_the_ratio_and_still_checks() -> None:
    assert SkeletonMetadata.of(1000, 250, 300, 8, 2) == SkeletonMetadata(
        1000, 250, 0.25, 300, 8, 2, reused_tokens=0
    )
    assert SkeletonMetadata.of(0, 0, 5, 0, 0).ratio == 1.0
    with pytest.raises(ValueError, match="compressed_tokens must not exceed original_tokens"):
        SkeletonMetadata.of(10, 20, 5, 1, 1)
    with pytest.raises(ValueError, match="fragments_kept must not exceed fragments_total"):
        SkeletonMetadata.of(10, 5, 5, 1, 2)


def test_a_child_scores_the_parents_context_for_its_own_goal(
    service: SkeletonCompressorService,
) -> None:
    parent = Plan(
        "p",
        "goal",
        context=(
            ContextFragment("a", 10, 0.9),
            ContextFragment("b", 10, 0.5),
            ContextFragment("task", 5, 0.1, required=True),
        ),
    )
    plain = parent.spawn_subplan("c1", "as the parent", 15, compressor=service)
    assert [f.fragment_id for f in plain.context] == ["a", "task"]
    child = parent.spawn_subplan("c2", "b matters", 15, compressor=service, relevance={"b": 0.99})
    assert [f.fragment_id for f in child.context] == ["b", "task"]
    assert child.context[0].relevance_score == 0.99
    assert parent.rescored(None) is parent.context
    assert parent.rescored({"a": 0.1})[0] == ContextFragment("a", 10, 0.1)


def test_metadata_repr_shows_over_budget(service: SkeletonCompressorService) -> None:
    fragments = (ContextFragment("a", 10, 0.9), ContextFragment("task", 30, 0.5, required=True))
    within = service.compress(fragments, 40).metadata
    over = service.compress(fragments, 20).metadata
    assert over.over_budget and not within.over_budget
    assert repr(within).endswith(", over_budget=False)")
    assert repr(over) == (
        "SkeletonMetadata(original_tokens=40, compressed_tokens=30, ratio=0.75, "
        "skeleton_budget=20, fragments_total=2, fragments_kept=1, value_kept=0.5, "
        "value_bound=0.5, reused_tokens=0, kept_share=1.0, exact=True, over_budget=True)"
    )
    # The fields still come first, in order, as the dataclass showed them.
    assert repr(SkeletonMetadata(0, 0, 1.0)).startswith("SkeletonMetadata(original_tokens=0, ")


def test_a_child_relevance_naming_an_unknown_id_is_refused(
    service: SkeletonCompressorService,
) -> None:
    parent = Plan(
        "p", "goal", context=(ContextFragment("a", 10, 0.9), ContextFragment("b", 10, 0.5))
    )
    with pytest.raises(
        ValueError,
        match=r"^relevance names fragment_id 'c', which is not in the context of plan 'p'$",
    ):
        parent.spawn_subplan("c1", "g", 15, compressor=service, relevance={"b": 0.99, "c": 0.5})
    with pytest.raises(ValueError, match=r"fragment_id 'x' \(and 1 more\)"):
        parent.spawn_subplan("c1", "g", 15, compressor=service, relevance={"x": 0.5, "y": 0.5})
    with pytest.raises(ValueError, match=r"fragment_id 7,"):
        parent.rescored({7: 0.5})  # type: ignore[dict-item]
    # Ids it names keep working; an empty mapping changes nothing.
    child = parent.spawn_subplan("c1", "g", 10, compressor=service, relevance={"b": 0.99})
    assert [f.fragment_id for f in child.context] == ["b"]
    assert parent.spawn_subplan("c2", "g", 10, compressor=service, relevance={}).context == (
        parent.context[0],
    )


@pytest.mark.parametrize("strategy", ["greedy", "optimal"])
@pytest.mark.parametrize("tokens", [10, 2**53 - 4, 2**53 + 1, 2**62])
def test_compress_returns_the_metadata_its_answer_makes(
    backend: str, strategy: str, tokens: int
) -> None:
    # The Rust backend builds the result itself; past 2**53 tokens the ratio is an exact
    # division of ints, which it leaves to Python.
    fragments = (
        ContextFragment("a", tokens, 0.9),
        ContextFragment("b", tokens + 3, 0.1),
        ContextFragment("c", 7, 0.3),
        ContextFragment("d", 0, 0.0),
    )
    service = SkeletonCompressorService(backend=backend, strategy=strategy)  # type: ignore[arg-type]
    for budget in (0, 7, tokens, tokens + 7, 3 * tokens):
        result = service.compress(fragments, budget)
        kept, original, compressed, value, bound, relevance, exact = service._compressor.compress(
            fragments, budget
        )
        metadata = SkeletonMetadata.of(
            original, compressed, budget, 4, len(kept), value, bound, 0, relevance, exact
        )
        assert type(result) is SkeletonResult and type(result.metadata) is SkeletonMetadata
        assert result.fragments == kept
        assert repr(result.metadata) == repr(metadata)
        for name in SkeletonMetadata.__dataclass_fields__:
            assert type(getattr(result.metadata, name)) is type(getattr(metadata, name)), name


class _LyingInt(int):
    def __gt__(self, other: object) -> bool:
        return False

    def __lt__(self, other: object) -> bool:
        return False

    def __ge__(self, other: object) -> bool:
        return True


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((_LyingInt(5), 10, 2.0), "compressed_tokens must not exceed original_tokens"),
        ((10, 5, 0.5, None, _LyingInt(1), 5), "fragments_kept must not exceed fragments_total"),
        ((10, _LyingInt(-1), 0.0), "compressed_tokens must be an int >= 0"),
    ],
)
def test_metadata_checks_an_int_subclass_as_the_int_it_holds(
    arguments: tuple, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        SkeletonMetadata(*arguments)
    assert SkeletonMetadata(10, 10, 1.0, _LyingInt(5)).over_budget


class _Unreadable(ContextFragment):
    __slots__ = ()

    def __getattribute__(self, name: str) -> object:
        if name == "token_count":
            raise RuntimeError("boom")
        return object.__getattribute__(self, name)


def test_a_fragment_to_rescore_that_cannot_be_read_is_named(
    service: SkeletonCompressorService,
) -> None:
    parent = Plan("p", "g", context=(ContextFragment("z", 1, 0.5), _Unreadable("a", 1, 0.5)))
    message = r"^fragments\[1\] \(id 'a'\): cannot read token_count: RuntimeError: boom$"
    with pytest.raises(FragmentTypeError, match=message) as raised:
        parent.spawn_subplan("c", "g", 1, compressor=service, relevance={"a": 0.1})
    assert isinstance(raised.value.__cause__, RuntimeError)
    with pytest.raises(FragmentTypeError, match=message):
        parent.spawn_subplans([("c", "g", 1, {"a": 0.1})], compressor=service)


@pytest.mark.skipif(
    sys.version_info < (3, 10), reason="Python 3.9: no slots; a field deleted reads its default"
)
def test_a_fragment_with_an_unset_field_is_rescored_as_compress_reads_it(
    service: SkeletonCompressorService,
) -> None:
    no_group = ContextFragment("a", 5, 0.5, "text", group="g")
    object.__delattr__(no_group, "group")  # as a fragment made before groups existed
    parent = Plan("p", "g", context=(no_group, ContextFragment("b", 5, 0.4)))
    child = parent.spawn_subplan("c", "g", 5, compressor=service, relevance={"a": 0.9})
    assert child.context == (ContextFragment("a", 5, 0.9, "text"),)
    no_content = ContextFragment("a", 5, 0.5, "text")
    object.__delattr__(no_content, "content")
    parent = Plan("p", "g", context=(ContextFragment("z", 1, 0.5), no_content))
    with pytest.raises(FragmentTypeError, match=r"^fragments\[1\] \(id 'a'\): cannot read content"):
        parent.spawn_subplan("c", "g", 5, compressor=service, relevance={"a": 0.9})


class _OwnHash(str):
    def __hash__(self) -> int:
        return 0


class _OneItem(tuple):  # type: ignore[type-arg]
    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(tuple.__getitem__(self, slice(0, 1)))


def test_a_child_reads_its_scores_and_the_context_as_the_compressor_does(
    service: SkeletonCompressorService,
) -> None:
    fragments = (ContextFragment("a", 5, 0.9), ContextFragment("b", 5, 0.5))
    parent = Plan("p", "g", context=fragments)
    scores = {_OwnHash("a"): 0.1}
    one = parent.spawn_subplan("c", "g", 5, compressor=service, relevance=scores)
    (many,) = parent.spawn_subplans([("c", "g", 5, scores)], compressor=service)
    assert [f.fragment_id for f in one.context] == [f.fragment_id for f in many.context] == ["b"]
    # A tuple subclass is read as the items it stores.
    stored = Plan("p", "g", context=_OneItem(fragments))
    child = stored.spawn_subplan("c", "g", 10, compressor=service, relevance={"a": 0.9})
    assert [f.fragment_id for f in child.context] == ["a", "b"]


def test_to_cli_dict_is_json_for_every_context_the_compressor_takes() -> None:
    numpy = pytest.importorskip("numpy")
    context = (
        ContextFragment("a", numpy.int64(5), numpy.float32(0.5), group=_OwnHash("g")),  # type: ignore[arg-type]
        ContextFragment(_OwnHash("b"), 3, Fraction(1, 4), required=numpy.bool_(True)),  # type: ignore[arg-type]
        ContextFragment("c", 2, 1),
    )
    data = Plan("p", "g", context=context).to_cli_dict()
    assert json.loads(json.dumps(data))["context"] == [
        {"fragment_id": "a", "token_count": 5, "relevance_score": 0.5, "group": "g"},
        {"fragment_id": "b", "token_count": 3, "relevance_score": 0.25, "required": True},
        {"fragment_id": "c", "token_count": 2, "relevance_score": 1},
    ]
    assert [type(f["fragment_id"]) for f in data["context"]] == [str, str, str]
    assert type(data["context"][2]["relevance_score"]) is int  # as given
    # Not checked: the compressor checks a context.
    assert Plan("p", "g", context=(ContextFragment("a", -1, 2.0),)).to_cli_dict()["context"] == [
        {"fragment_id": "a", "token_count": -1, "relevance_score": 2.0}
    ]
    # But what JSON cannot hold is named.
    for fragment, message in [
        (ContextFragment("a", 1, Decimal("0.5")), r"^context\[0\]\.relevance_score cannot be"),  # type: ignore[arg-type]
        (ContextFragment("a", 1, math.nan), r"^context\[0\]\.relevance_score cannot be"),
        (ContextFragment(b"a", 1, 0.5), r"^context\[0\]\.fragment_id cannot be"),  # type: ignore[arg-type]
        (ContextFragment("a", 1, 0.5, required="no"), r"^context\[0\]\.required must be a bool"),  # type: ignore[arg-type]
    ]:
        with pytest.raises(TypeError, match=message):
            Plan("p", "g", context=(fragment,)).to_cli_dict()


class _EqualToAll(str):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


def test_explanation_to_dict_keeps_one_decision_per_fragment(
    service: SkeletonCompressorService,
) -> None:
    fragments = tuple(ContextFragment(_EqualToAll(name), 1, 0.5) for name in "abc")
    decisions = service.explain(fragments, 2).to_dict()["decisions"]
    assert {key: value["reason"] for key, value in decisions.items()} == {
        "a": "fits",
        "b": "fits",
        "c": "no_room",
    }
    assert all(type(key) is str for key in decisions)


def test_a_backend_name_is_read_as_the_plain_str_it_holds() -> None:
    with pytest.raises(ValueError, match=r"^backend must be one of auto, rust, python"):
        SkeletonCompressorService(backend=_EqualToAll("bogus"))
    assert SkeletonCompressorService(backend=_EqualToAll("python")).backend == "python"
    # The module functions' services too: one made for a name is not another's.
    fragments = (ContextFragment("a", 5, 0.5),)
    for name in ("python", "rust", "python"):
        result = compress(fragments, 5, backend=_EqualToAll(name))  # type: ignore[arg-type]
        assert result == compress(fragments, 5, backend=name)  # type: ignore[arg-type]
        assert _service(_EqualToAll(name), "greedy").backend == name  # type: ignore[arg-type]
