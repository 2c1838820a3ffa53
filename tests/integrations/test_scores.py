"""Retrievers' scores mapped into [0, 1] (`scores="auto"`) and items without one scored by
rank: the mapping itself, and the stock retrievers that broke the adapters' strict check,
run in their real frameworks on both backends."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from skeleton_compressor import FragmentTypeError, FragmentValueError
from skeleton_compressor.integrations._scores import (
    NOISE,
    UNSCORED,
    checked_missing_score,
    checked_scores,
    relevances,
)
from support.frameworks import framework

# Under scores="auto" any finite score is mapped: the error does not ask for [0, 1].
FINITE = "must be a finite number (within a float's range)"


def mapped(scores: list[object], mode: str = "auto", missing: object = "rank") -> list[object]:
    ids = [chr(ord("a") + index) for index in range(len(scores))]
    return relevances(scores, mode, missing, "documents", ids)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        # In [0, 1] give or take float rounding: clamped, the rest as they are.
        ([1.0000000000000002, 0.5, -1e-12], [1.0, 0.5, 0.0]),
        ([0.25, 0.75], [0.25, 0.75]),
        # BM25 and other scores from 0 up: divided by the largest.
        ([1.52, 0.76, 0.0], [1.0, 0.5, 0.0]),
        # Cosines, some negative: (s + 1) / 2.
        ([0.5, -0.5, -1.0, 1.0], [0.75, 0.25, 0.0, 1.0]),
        # Logits: from [lowest, highest] to [0, 1].
        ([3.0, -1.0, 1.0], [1.0, 0.0, 0.5]),
        ([-4.0, -4.0], [1.0, 1.0]),
        ([], []),
    ],
)
def test_each_scale_maps_into_the_unit_interval(
    scores: list[object], expected: list[float]
) -> None:
    assert mapped(scores) == expected


def test_strict_leaves_the_scores_to_the_library() -> None:
    assert mapped([1.5, -0.25, "x"], "strict") == [1.5, -0.25, "x"]


def test_an_item_without_a_score_scores_by_rank_and_is_not_mapped() -> None:
    # Of four items, the i-th scores (4 - i) / 4; the others' scale is read without them.
    assert mapped([UNSCORED, 3.0, UNSCORED, 1.5]) == [1.0, 1.0, 0.5, 0.5]
    assert mapped([0.2, UNSCORED], "strict") == [0.2, 0.5]


def test_minus_zero_becomes_zero() -> None:
    (score,) = mapped([-0.0])
    assert math.copysign(1.0, score) == 1.0  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("score", "error", "kind", "detail"),
    [
        (math.nan, FragmentValueError, "relevance_range", f"{FINITE}, got nan"),
        (math.inf, FragmentValueError, "relevance_range", f"{FINITE}, got inf"),
        (-math.inf, FragmentValueError, "relevance_range", f"{FINITE}, got -inf"),
        (10**400, FragmentValueError, "relevance_range", f"{FINITE}, got 1000"),
        ("0.5", FragmentTypeError, "relevance_type", "must be a real number, got '0.5' (str)"),
        (True, FragmentTypeError, "relevance_type", "must be a real number, got True (bool)"),
        (None, FragmentTypeError, "relevance_type", "must be a real number, got None"),
    ],
)
def test_a_score_no_mapping_reads_names_the_item(
    score: object, error: type[Exception], kind: str, detail: str
) -> None:
    with pytest.raises(error) as raised:
        mapped([0.5, score])
    assert type(raised.value) is error
    assert (raised.value.index, raised.value.kind) == (1, kind)  # type: ignore[attr-defined]
    assert str(raised.value).startswith(f"documents[1] (id 'b'): relevance_score {detail}")


finite = st.floats(allow_nan=False, allow_infinity=False)


@given(st.lists(finite, max_size=30))
def test_every_mapping_keeps_the_order_within_the_unit_interval(scores: list[float]) -> None:
    result = mapped(scores)  # type: ignore[arg-type]
    assert all(0.0 <= score <= 1.0 for score in result)  # type: ignore[operator]
    for (x, mx), (y, my) in zip(zip(scores, result), zip(scores[1:], result[1:])):
        if x < y:
            assert mx <= my  # type: ignore[operator]
        elif x > y:
            assert mx >= my  # type: ignore[operator]
        else:
            assert mx == my


@given(st.lists(st.floats(min_value=0.0, max_value=1e6), min_size=1, max_size=30))
def test_scores_from_zero_up_keep_their_ratios(scores: list[float]) -> None:
    result = mapped(scores)  # type: ignore[arg-type]
    high = max(scores)
    if high > 1.0 + NOISE:
        assert result == [score / high for score in scores]


def test_the_options_are_checked() -> None:
    assert checked_scores("strict") == "strict"
    with pytest.raises(ValueError, match=r"^scores must be 'auto' or 'strict', got 'loose'"):
        checked_scores("loose")
    with pytest.raises(TypeError, match=r"^scores must be 'auto' or 'strict', got 1 \(int\)$"):
        checked_scores(1)
    assert checked_missing_score("rank") == "rank"
    assert checked_missing_score(1) == 1.0
    with pytest.raises(ValueError, match="'raise', 'rank' or a real number in \\[0, 1\\]"):
        checked_missing_score("skip")


# --- the stock retrievers that broke the strict check, in their frameworks


def words(text: str) -> int:
    return len(text.split())


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def test_llamaindex_default_vector_index_with_a_node_equal_to_the_query(backend: str) -> None:
    framework("llama_index.core")
    from llama_index.core import VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.schema import TextNode
    from skeleton_compressor.integrations.llamaindex import SkeletonNodePostprocessor

    # A vector whose cosine with itself, as LlamaIndex computes it, is 1.0000000000000002;
    # its opposite, and one at right angles-ish, give a negative and a small cosine.
    same = [-0.5228, 0.9351, 0.6064, -0.1041, -0.8391, -0.3599, 0.0159, 0.8657]
    table = {
        "refund policy": same,
        "refunds are paid in ten days": same,
        "the office is closed on sundays": [-x for x in same],
        "invoices carry a number": [0.3, 0.1, -0.2, 0.9, -0.4, 0.2, 0.5, -0.1],
    }

    class TableEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return table[query]

        def _get_text_embedding(self, text: str) -> list[float]:
            return table[text]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return table[query]

    embed = TableEmbedding()
    nodes = [TextNode(text=text, id_=f"n{i}") for i, text in enumerate(list(table)[1:])]
    index = VectorStoreIndex(nodes, embed_model=embed)
    retrieved = index.as_retriever(similarity_top_k=3).retrieve("refund policy")
    scores = sorted(node.score for node in retrieved)  # type: ignore[type-var]
    assert scores[-1] > 1.0 and scores[0] < 0.0  # the retriever's own scores, out of [0, 1]

    postprocessor = SkeletonNodePostprocessor(2000, words, backend=backend)
    engine = RetrieverQueryEngine.from_args(
        index.as_retriever(similarity_top_k=3),
        llm=MockLLM(),
        node_postprocessors=[postprocessor],
    )
    response = engine.query("refund policy")
    kept = [node.node.node_id for node in response.source_nodes]
    assert kept == ["n0", "n2", "n1"]  # the ranking the cosines give
    assert postprocessor.last_metadata is not None
    assert postprocessor.last_metadata.fragments_kept == 3
    strict = SkeletonNodePostprocessor(2000, words, backend=backend, scores="strict")
    with pytest.raises(FragmentValueError, match="relevance_score must be in"):
        strict.postprocess_nodes(retrieved)


def test_haystack_bm25_pipeline(backend: str) -> None:
    framework("haystack")
    from haystack import Document, Pipeline
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from skeleton_compressor.integrations.haystack import SkeletonDocumentPacker

    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(content="refunds are paid within ten days of a request", id="r"),
            Document(content="refund requests need the invoice number", id="i"),
            Document(content="the office is closed on sundays", id="o"),
        ]
    )
    retriever = InMemoryBM25Retriever(store, top_k=3, scale_score=False)
    raw = retriever.run(query="refund request invoice")["documents"]
    assert max(document.score for document in raw) > 1.0
    pipeline = Pipeline()
    pipeline.add_component("retriever", retriever)
    pipeline.add_component("packer", SkeletonDocumentPacker(2000, words, backend=backend))
    pipeline.connect("retriever.documents", "packer.documents")
    result = pipeline.run({"retriever": {"query": "refund request invoice"}})
    kept = result["packer"]["documents"]
    assert [document.id for document in kept] == [document.id for document in raw]
    metadata = result["packer"]["skeleton_metadata"]
    highest = max(document.score for document in raw)
    assert metadata["value_bound"] == pytest.approx(sum(d.score / highest for d in raw))


def test_langchain_in_memory_vector_store(backend: str) -> None:
    framework("langchain_core")
    framework("langchain_classic")
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore
    from skeleton_compressor.integrations.langchain import SkeletonDocumentCompressor

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    texts = [f"note {number}: " + " ".join(["word"] * number) for number in range(1, 9)]
    store.add_documents([Document(page_content=text, id=str(i)) for i, text in enumerate(texts)])

    # as_retriever() puts no score in the metadata: the documents score by rank.
    base = store.as_retriever(search_kwargs={"k": 6})
    retrieved = base.invoke("which note")
    assert all("relevance_score" not in document.metadata for document in retrieved)
    compressor = SkeletonDocumentCompressor(10_000, words, backend=backend)
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base)
    kept = retriever.invoke("which note")
    assert [document.id for document in kept] == [document.id for document in retrieved]

    # Its cosines, some negative, as the compressor reads them from the metadata.
    pairs = store.similarity_search_with_score("which note", k=8)
    cosines = [score for _, score in pairs]
    assert min(cosines) < 0.0
    scored = [
        Document(page_content=d.page_content, id=d.id, metadata={"relevance_score": score})
        for d, score in pairs
    ]
    kept, metadata = SkeletonDocumentCompressor(
        10_000, words, backend=backend
    ).compress_with_metadata(scored)
    assert [document.id for document in kept] == [document.id for document in scored]
    assert metadata.value_bound == pytest.approx(sum((score + 1) / 2 for score in cosines))


def test_every_adapter_reads_scores_alike(backend: str) -> None:
    """The three document adapters keep the same items for the same raw scores."""
    framework("langchain_core")
    framework("haystack")
    framework("llama_index.core")
    from haystack import Document as HaystackDocument
    from langchain_core.documents import Document as LangChainDocument
    from llama_index.core.schema import NodeWithScore, TextNode
    from skeleton_compressor.integrations.haystack import SkeletonDocumentPacker
    from skeleton_compressor.integrations.langchain import SkeletonDocumentCompressor
    from skeleton_compressor.integrations.llamaindex import SkeletonNodePostprocessor

    rng = random.Random(7)
    rows = [(f"d{i}", rng.randint(1, 9), rng.uniform(-3.0, 12.0)) for i in range(12)]
    rows[4] = ("d4", 3, None)  # type: ignore[assignment]

    def text(size: int) -> str:
        return " ".join(["w"] * size)

    options: dict[str, Any] = {"strategy": "optimal", "backend": backend}
    lc = SkeletonDocumentCompressor(20, words, **options).compress_documents(
        [
            LangChainDocument(
                page_content=text(size),
                id=i,
                metadata={} if score is None else {"relevance_score": score},
            )
            for i, size, score in rows
        ],
        "q",
    )
    hs = SkeletonDocumentPacker(20, words, **options).run(
        [HaystackDocument(content=text(size), id=i, score=score) for i, size, score in rows]
    )["documents"]
    li = SkeletonNodePostprocessor(20, words, **options).postprocess_nodes(
        [
            NodeWithScore(node=TextNode(text=text(size), id_=i), score=score)
            for i, size, score in rows
        ]
    )
    assert [d.id for d in lc] == [d.id for d in hs] == [n.node.node_id for n in li]


# --- every adapter alike: three frameworks' items for the same (id, words, score) rows

Row = tuple[str, int, object]


def every_adapter(
    rows: list[Row], budget: int, backend: str, **options: Any
) -> list[tuple[str, Callable[[], tuple[list[str], float]]]]:
    """Each adapter's container, and a call giving its kept ids and `value_kept` for the rows
    (a score None is no score); LangChain's and LlamaIndex's scores are set after
    construction, as a retriever's own code may set them, so that pydantic keeps them as
    they are."""
    framework("langchain_core")
    framework("haystack")
    framework("llama_index.core")
    from haystack import Document as HaystackDocument
    from langchain_core.documents import Document as LangChainDocument
    from llama_index.core.schema import NodeWithScore, TextNode
    from skeleton_compressor.integrations.haystack import SkeletonDocumentPacker
    from skeleton_compressor.integrations.langchain import SkeletonDocumentCompressor
    from skeleton_compressor.integrations.llamaindex import SkeletonNodePostprocessor

    def text(size: int) -> str:
        return " ".join(["w"] * size)

    options = {**options, "backend": backend}
    documents = [LangChainDocument(page_content=text(size), id=i) for i, size, _ in rows]
    stored = [
        HaystackDocument(content=text(size), id=i, score=score)  # type: ignore[arg-type]
        for i, size, score in rows
    ]
    nodes = [NodeWithScore(node=TextNode(text=text(size), id_=i)) for i, size, _ in rows]
    for document, node, (_, _, score) in zip(documents, nodes, rows):
        if score is not None:
            document.metadata = {"relevance_score": score}
        node.score = score  # type: ignore[assignment]

    def langchain() -> tuple[list[str], float]:
        compressor = SkeletonDocumentCompressor(budget, words, **options)
        kept, metadata = compressor.compress_with_metadata(documents)
        return [str(document.id) for document in kept], metadata.value_kept

    def haystack() -> tuple[list[str], float]:
        result = SkeletonDocumentPacker(budget, words, **options).run(stored)
        kept = [document.id for document in result["documents"]]
        return kept, result["skeleton_metadata"]["value_kept"]

    def llamaindex() -> tuple[list[str], float]:
        kept, metadata = SkeletonNodePostprocessor(budget, words, **options).pack(nodes)
        return [node.node.node_id for node in kept], metadata.value_kept

    return [("documents", langchain), ("documents", haystack), ("nodes", llamaindex)]


def kept_by_every_adapter(
    rows: list[Row], budget: int, backend: str, **options: Any
) -> list[tuple[list[str], float]]:
    return [run() for _, run in every_adapter(rows, budget, backend, **options)]


def test_a_missing_score_number_is_the_relevance_as_given(backend: str) -> None:
    # BM25 scores, divided by the highest (1.0, 0.5), and an unscored row given 0.3 as it is,
    # which does not join the batch (it would be divided by 3.04 too).
    bm25: list[Row] = [("refunds", 2, 3.04), ("invoices", 2, 1.52), ("new", 2, None)]
    for ids, value in kept_by_every_adapter(bm25, 100, backend, missing_score=0.3):
        assert ids == ["refunds", "invoices", "new"]
        assert value == pytest.approx(1.8)
    # Logits: 0.0 is the unscored row's relevance, not the top of a batch it joined.
    logits: list[Row] = [("a", 2, -5.0), ("b", 2, -6.0), ("unscored", 2, None)]
    for ids, value in kept_by_every_adapter(logits, 2, backend, missing_score=0.0):
        assert (ids, value) == (["a"], 1.0)
    assert mapped([3.04, 1.52, UNSCORED], missing=0.3) == [1.0, 0.5, 0.3]


def test_scores_a_rounding_apart_may_map_to_one_relevance_and_tie_by_input_order(
    backend: str,
) -> None:
    # Cosines, one negative: (s + 1) / 2 maps 0.3 and 0.30000000000000004 to one float.
    cosines: list[Row] = [("lower", 2, 0.3), ("higher", 2, 0.30000000000000004), ("neg", 2, -0.2)]
    assert mapped([0.3, 0.30000000000000004, -0.2])[:2] == [0.65, 0.65]
    for ids, _ in kept_by_every_adapter(cosines, 2, backend):
        assert ids == ["lower"]
    for ids, _ in kept_by_every_adapter(cosines, 100, backend):
        assert ids == ["lower", "higher", "neg"]


class PlainFloatOtherwise(float):
    """A float whose own `__float__` says another number than the one it holds."""

    def __float__(self) -> float:
        return 0.9


class PlainIntOtherwise(int):
    def __float__(self) -> float:
        return 0.0


@pytest.mark.parametrize("scores", ["auto", "strict"])
def test_an_int_or_float_subclass_scores_as_the_plain_value_it_holds(
    backend: str, scores: str
) -> None:
    rows: list[Row] = [("holds 0.5", 1, 0.5), ("holds 0.1", 1, PlainFloatOtherwise(0.1))]
    for ids, value in kept_by_every_adapter(rows, 1, backend, scores=scores):
        assert (ids, value) == (["holds 0.5"], 0.5)
    rows = [("holds 0.5", 1, 0.5), ("holds 1", 1, PlainIntOtherwise(1))]
    for ids, value in kept_by_every_adapter(rows, 1, backend, scores=scores):
        assert (ids, value) == (["holds 1"], 1.0)
    assert mapped([3.0, PlainFloatOtherwise(1.5)]) == [1.0, 0.5]


@pytest.mark.parametrize(
    ("score", "shown"), [(math.nan, "nan"), (-math.inf, "-inf"), (10**400, "1000")]
)
def test_under_auto_a_score_no_float_holds_is_not_asked_to_be_in_the_unit_interval(
    backend: str, score: object, shown: str
) -> None:
    rows: list[Row] = [("a", 1, 5.0), ("b", 1, score)]
    for container, run in every_adapter(rows, 10, backend):
        with pytest.raises(FragmentValueError) as raised:
            run()
        assert (raised.value.index, raised.value.kind) == (1, "relevance_range")
        expected = f"{container}[1] (id 'b'): relevance_score {FINITE}, got {shown}"
        assert str(raised.value).startswith(expected)
