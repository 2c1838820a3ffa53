"""The LlamaIndex node postprocessor, through LlamaIndex's own API and a real query engine, on
both backends."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.frameworks import framework

li = framework("llama_index.core")

from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.postprocessor.types import BaseNodePostprocessor  # noqa: E402
from llama_index.core.query_engine import RetrieverQueryEngine  # noqa: E402
from llama_index.core.schema import (  # noqa: E402
    MetadataMode,
    NodeWithScore,
    QueryBundle,
    TextNode,
)
from pydantic import ValidationError  # noqa: E402
from skeleton_compressor import (  # noqa: E402
    BudgetExceededError,
    ContextFragment,
    FragmentTypeError,
    FragmentValueError,
    SkeletonMetadata,
    TokenCounter,
    compress,
)
from skeleton_compressor.integrations.llamaindex import SkeletonNodePostprocessor  # noqa: E402


def words(text: str) -> int:
    return len(text.split())


def units(score: float) -> int:
    """A relevance in the library's exact value units."""
    return round(score * 2**32)


def scored(node_id: str, size: int, score: object) -> NodeWithScore:
    node = NodeWithScore(node=TextNode(text=" ".join(["w"] * size), id_=node_id), score=0.5)
    node.score = score  # type: ignore[assignment]  # as a retriever's own code may set it
    return node


def retrieved() -> list[NodeWithScore]:
    """Input order c, a, e, b, d; by relevance a, b, c, d, e; 19 words in all."""
    return [
        scored("c", 3, 0.7),
        scored("a", 6, 0.9),
        scored("e", 5, 0.1),
        scored("b", 3, 0.8),
        scored("d", 2, 0.3),
    ]


def node_ids(nodes: list[NodeWithScore]) -> list[str]:
    return [node.node.node_id for node in nodes]


def packer(budget: int, backend: str, **options: Any) -> SkeletonNodePostprocessor:
    return SkeletonNodePostprocessor(budget, words, backend=backend, **options)


def test_it_is_a_llamaindex_node_postprocessor(backend: str) -> None:
    postprocessor = packer(8, backend)
    assert isinstance(postprocessor, BaseNodePostprocessor)
    assert postprocessor.class_name() == "SkeletonNodePostprocessor"
    assert postprocessor.skeleton_budget == 8
    assert postprocessor.strategy == "greedy"
    assert postprocessor.backend == backend
    assert postprocessor.scores == "auto"
    assert postprocessor.missing_score == "rank"
    assert postprocessor.metadata_mode is MetadataMode.LLM


@pytest.mark.parametrize(
    ("options", "kept"),
    [
        # a (6) leaves 2: b and c (3 each) do not fit, d (2) does.
        ({}, ["a", "d"]),
        # a fits, b does not: prefix stops there.
        ({"strategy": "prefix"}, ["a"]),
        # b, c, d: 8 words worth 1.8, against a and d's 1.2.
        ({"strategy": "optimal"}, ["b", "c", "d"]),
        ({"strategy": "optimal", "order": "input"}, ["c", "b", "d"]),
        # Ranks 0, 2 from the front, then 1 at the end.
        ({"strategy": "optimal", "order": "edges"}, ["b", "d", "c"]),
        # Only a and b are eligible; b does not fit after a.
        ({"min_relevance": 0.75}, ["a"]),
    ],
)
def test_kept_nodes_are_the_objects_passed_in_in_the_policys_order(
    backend: str, options: dict[str, Any], kept: list[str]
) -> None:
    nodes = retrieved()
    by_id = {node.node.node_id: node for node in nodes}
    result = packer(8, backend, **options).postprocess_nodes(nodes)
    assert node_ids(result) == kept
    assert all(node is by_id[node.node.node_id] for node in result)
    assert node_ids(nodes) == ["c", "a", "e", "b", "d"]  # the input is left as it was


def test_the_metadata_of_the_latest_call_and_of_pack(backend: str) -> None:
    postprocessor = packer(8, backend)
    assert postprocessor.last_metadata is None
    nodes = retrieved()
    postprocessor.postprocess_nodes(nodes, query_str="which?")
    expected = SkeletonMetadata(
        original_tokens=19,
        compressed_tokens=8,
        ratio=8 / 19,
        skeleton_budget=8,
        fragments_total=5,
        fragments_kept=2,
        value_kept=0.9 + 0.3,
        # Fractionally: b and c whole (6 words), then 2 of a's 6 words or all of d: 0.3.
        value_bound=postprocessor.last_metadata.value_bound,  # type: ignore[union-attr]
        reused_tokens=0,
        kept_share=(units(0.9) + units(0.3))
        / round(postprocessor.last_metadata.value_bound * 2**32),  # type: ignore[union-attr]
        exact=True,
    )
    assert postprocessor.last_metadata == expected
    assert math.isclose(expected.value_bound, 1.8, abs_tol=1e-9)  # type: ignore[arg-type]
    kept, metadata = postprocessor.pack(nodes)
    assert node_ids(kept) == ["a", "d"]
    assert metadata == expected


def test_budget_zero_and_empty_input_keep_nothing(backend: str) -> None:
    postprocessor = packer(0, backend)
    assert postprocessor.postprocess_nodes(retrieved()) == []
    assert postprocessor.last_metadata is not None
    assert postprocessor.last_metadata.compressed_tokens == 0
    assert postprocessor.last_metadata.original_tokens == 19
    assert packer(8, backend).pack([]) == (
        [],
        SkeletonMetadata(0, 0, 1.0, 8, 0, 0, 0.0, 0.0, 0, 1.0, True),
    )


def test_when_nothing_fits_the_overflow_policy_decides(backend: str) -> None:
    # The smallest node, d, takes 2 words; the budget is 1.
    assert node_ids(packer(1, backend).postprocess_nodes(retrieved())) == ["a"]
    assert packer(1, backend, on_overflow="strict").postprocess_nodes(retrieved()) == []
    with pytest.raises(BudgetExceededError) as raised:
        packer(1, backend, on_overflow="raise").postprocess_nodes(retrieved())
    assert (raised.value.skeleton_budget, raised.value.needed_tokens) == (1, 2)


def test_tokens_are_counted_from_the_content_the_llm_sees(backend: str) -> None:
    seen: list[str] = []

    def counting(text: str) -> int:
        seen.append(text)
        return words(text)

    node = TextNode(
        text="alpha beta",
        id_="n",
        metadata={"file": "a.py", "secret": "s"},
        excluded_llm_metadata_keys=["secret"],
    )
    nodes = [NodeWithScore(node=node, score=0.5)]
    SkeletonNodePostprocessor(10, counting, backend=backend).postprocess_nodes(nodes)
    SkeletonNodePostprocessor(
        10, counting, backend=backend, metadata_mode="none"
    ).postprocess_nodes(nodes)
    SkeletonNodePostprocessor(
        10, counting, backend=backend, metadata_mode=MetadataMode.ALL
    ).postprocess_nodes(nodes)
    assert seen == ["file: a.py\n\nalpha beta", "alpha beta", "file: a.py\nsecret: s\n\nalpha beta"]


def test_an_encoding_counts_alike_on_both_backends(backend: str) -> None:
    nodes = retrieved()
    cl100k = TokenCounter("cl100k_base")
    o200k = TokenCounter("o200k_base")
    texts = [node.get_content(MetadataMode.LLM) for node in nodes]
    for counter, reference in ((None, o200k), ("o200k_base", o200k), (cl100k, cl100k)):
        postprocessor = SkeletonNodePostprocessor(1000, counter, backend=backend)
        postprocessor.postprocess_nodes(nodes)
        assert postprocessor.last_metadata is not None
        assert postprocessor.last_metadata.original_tokens == sum(reference.count_many(texts))


def test_nodes_without_a_score_raise_or_get_the_missing_score(backend: str) -> None:
    nodes = retrieved()
    nodes[2].score = None  # e, 5 words
    with pytest.raises(FragmentTypeError) as raised:
        packer(8, backend, missing_score="raise").postprocess_nodes(nodes)
    assert (raised.value.index, raised.value.kind, raised.value.fragment_id) == (
        2,
        "relevance_type",
        "e",
    )
    assert raised.value.container == "nodes"
    assert str(raised.value) == (
        "nodes[2] (id 'e'): no relevance score: NodeWithScore.score is None (give "
        "missing_score= 'rank' or a number in [0, 1] to score such items)"
    )
    # Scored 0.95, e ranks first: e (5) leaves 3 for b (3).
    kept = packer(8, backend, missing_score=0.95).postprocess_nodes(nodes)
    assert node_ids(kept) == ["e", "b"]
    assert kept[0] is nodes[2]
    assert kept[0].score is None  # the node is not changed


@pytest.mark.parametrize(
    ("score", "error", "kind", "detail"),
    [
        ("0.5", FragmentTypeError, "relevance_type", "must be a real number, got '0.5' (str)"),
        (True, FragmentTypeError, "relevance_type", "must be a real number, got True (bool)"),
        (math.nan, FragmentValueError, "relevance_range", "must be in [0, 1], got nan"),
        (1.5, FragmentValueError, "relevance_range", "must be in [0, 1], got 1.5"),
        (-0.1, FragmentValueError, "relevance_range", "must be in [0, 1], got -0.1"),
    ],
)
def test_a_bad_score_names_the_node(
    backend: str, score: object, error: type[Exception], kind: str, detail: str
) -> None:
    nodes = retrieved()
    nodes[3].score = score  # type: ignore[assignment]
    with pytest.raises(error) as raised:
        packer(8, backend, scores="strict").postprocess_nodes(nodes)
    assert type(raised.value) is error
    assert (raised.value.index, raised.value.kind) == (3, kind)  # type: ignore[attr-defined]
    assert str(raised.value) == f"nodes[3] (id 'b'): relevance_score {detail}"


@pytest.mark.parametrize(
    ("item", "shown"),
    [("oops", "'oops' (str)"), (None, "None (NoneType)"), (0.5, "0.5 (float)")],
)
def test_an_item_that_is_not_a_node_with_score_is_named(
    backend: str, item: object, shown: str
) -> None:
    nodes: list[Any] = retrieved()
    nodes[1] = item
    with pytest.raises(FragmentTypeError) as raised:
        packer(8, backend).postprocess_nodes(nodes)
    assert (raised.value.index, raised.value.kind) == (1, "not_fragment")
    assert str(raised.value) == f"nodes[1] must be a NodeWithScore, got {shown}"


def test_a_bare_node_is_not_a_node_with_score(backend: str) -> None:
    nodes: list[Any] = [TextNode(text="x", id_="bare")]
    with pytest.raises(FragmentTypeError, match=r"^nodes\[0\] must be a NodeWithScore, got "):
        packer(8, backend).postprocess_nodes(nodes)


def test_any_iterable_of_nodes_is_read_once(backend: str) -> None:
    nodes = retrieved()
    kept = packer(8, backend).postprocess_nodes(node for node in nodes)  # type: ignore[arg-type]
    assert node_ids(kept) == ["a", "d"]
    assert kept[0] is nodes[1]
    kept, metadata = packer(8, backend).pack(iter(nodes))
    assert (node_ids(kept), metadata.fragments_total) == (["a", "d"], 5)
    with pytest.raises(TypeError) as raised:
        packer(8, backend).postprocess_nodes(None)  # type: ignore[arg-type]
    assert str(raised.value) == "nodes must be an iterable of NodeWithScore, got None (NoneType)"


@pytest.mark.parametrize(
    ("count", "error", "message"),
    [
        (-1, FragmentValueError, "nodes[0] (id 'c'): token_count must be >= 0, got -1"),
        ("3", FragmentTypeError, "nodes[0] (id 'c'): token_count must be an int, got '3' (str)"),
    ],
)
def test_a_counters_bad_count_names_the_node(
    backend: str, count: object, error: type[Exception], message: str
) -> None:
    postprocessor = SkeletonNodePostprocessor(8, lambda text: count, backend=backend)
    with pytest.raises(error) as raised:
        postprocessor.postprocess_nodes(retrieved())
    assert type(raised.value) is error
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"skeleton_budget": -1}, ValueError, "skeleton_budget must be >= 0, got -1"),
        ({"skeleton_budget": True}, TypeError, "skeleton_budget must be an int, got True (bool)"),
        ({"skeleton_budget": 8.0}, TypeError, "skeleton_budget must be an int, got 8.0 (float)"),
        ({"strategy": "best"}, ValueError, "strategy"),
        ({"min_relevance": 1.5}, ValueError, "min_relevance must be in [0, 1], got 1.5"),
        ({"on_overflow": "drop"}, ValueError, "on_overflow must be one of"),
        ({"order": "random"}, ValueError, "order must be one of"),
        ({"backend": "gpu"}, ValueError, "backend"),
        ({"token_counter": 5}, TypeError, "counter must be a TokenCounter"),
        (
            {"missing_score": "skip"},
            ValueError,
            "missing_score must be 'raise', 'rank' or a real number in [0, 1], got 'skip'",
        ),
        (
            {"missing_score": 1.5},
            ValueError,
            "missing_score must be 'raise', 'rank' or a real number in [0, 1], got 1.5",
        ),
        (
            {"missing_score": None},
            TypeError,
            "missing_score must be 'raise', 'rank' or a real number in [0, 1], got None (NoneType)",
        ),
        (
            {"missing_score": True},
            TypeError,
            "missing_score must be 'raise', 'rank' or a real number in [0, 1], got True (bool)",
        ),
        (
            {"metadata_mode": "some"},
            ValueError,
            "metadata_mode must be one of all, embed, llm, none, got 'some'",
        ),
    ],
)
def test_bad_options_fail_at_construction(
    backend: str, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"skeleton_budget": 8, "token_counter": words, "backend": backend}
    arguments.update(options)
    with pytest.raises(error) as raised:
        SkeletonNodePostprocessor(**arguments)
    assert type(raised.value) is error
    assert message in str(raised.value)


def test_options_cannot_change_after_construction(backend: str) -> None:
    postprocessor = packer(8, backend)
    with pytest.raises(ValidationError, match="frozen"):
        postprocessor.skeleton_budget = 100
    assert node_ids(postprocessor.postprocess_nodes(retrieved())) == ["a", "d"]


def test_the_async_api_keeps_the_same_nodes(backend: str) -> None:
    nodes = retrieved()
    kept = asyncio.run(packer(8, backend).apostprocess_nodes(nodes))
    assert node_ids(kept) == ["a", "d"]
    assert kept[0] is nodes[1]


class FixedRetriever(BaseRetriever):
    """Returns the same scored nodes for every query."""

    def __init__(self, nodes: list[NodeWithScore]) -> None:
        super().__init__()
        self.nodes = nodes

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return list(self.nodes)


def test_in_a_query_engine_the_answer_sees_only_the_kept_nodes(backend: str) -> None:
    nodes = [
        NodeWithScore(node=TextNode(text="lions hunt at night", id_="lion"), score=0.4),
        NodeWithScore(node=TextNode(text="owls hunt at night too", id_="owl"), score=0.9),
        NodeWithScore(node=TextNode(text="bats sleep by day", id_="bat"), score=0.6),
    ]
    # owl (5 words) leaves 3: bat (4) does not fit, lion (4) neither.
    engine = RetrieverQueryEngine.from_args(
        FixedRetriever(nodes),
        llm=MockLLM(),
        node_postprocessors=[packer(8, backend)],
    )
    response = engine.query("who hunts at night?")
    assert [node.node.node_id for node in response.source_nodes] == ["owl"]
    assert response.source_nodes[0] is nodes[1]
    # The mock model answers with its prompt: the context holds the kept node only.
    answer = str(response)
    assert "owls hunt at night too" in answer
    assert "lions" not in answer
    assert "bats" not in answer


scores = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)


# The backend fixture is a constant name: nothing to reset between examples.
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    items=st.lists(st.tuples(st.integers(0, 9), scores), max_size=12),
    budget=st.integers(0, 40),
    strategy=st.sampled_from(["greedy", "prefix", "density", "optimal"]),
    order=st.sampled_from(["ranking", "input", "edges"]),
    on_overflow=st.sampled_from(["keep_top", "strict", "raise"]),
    min_relevance=st.sampled_from([0.0, 0.3]),
)
def test_it_keeps_what_compress_keeps_of_the_same_fragments(
    backend: str,
    items: list[tuple[int, float]],
    budget: int,
    strategy: str,
    order: str,
    on_overflow: str,
    min_relevance: float,
) -> None:
    options: dict[str, Any] = {
        "strategy": strategy,
        "order": order,
        "on_overflow": on_overflow,
        "min_relevance": min_relevance,
        "backend": backend,
    }
    nodes = [scored(f"n{index}", size, score) for index, (size, score) in enumerate(items)]
    # Ids in input order, so that ties in relevance rank as the adapter ranks them.
    fragments = tuple(
        ContextFragment(f"{index:02d}", size, score) for index, (size, score) in enumerate(items)
    )
    try:
        expected = compress(fragments, budget, **options)
    except BudgetExceededError as error:
        with pytest.raises(BudgetExceededError) as raised:
            SkeletonNodePostprocessor(budget, words, **options).pack(nodes)
        assert raised.value.needed_tokens == error.needed_tokens
        return
    kept, metadata = SkeletonNodePostprocessor(budget, words, **options).pack(nodes)
    assert [nodes.index(node) for node in kept] == [
        int(fragment.fragment_id) for fragment in expected.fragments
    ]
    assert metadata == expected.metadata
