"""The LangChain document compressor against the real langchain-core (and langchain-classic's
ContextualCompressionRetriever), on both backends."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.frameworks import framework
from support.panicking_tiktoken import make_tiktoken_panic

lc = framework("langchain_core")
classic = framework("langchain_classic")

from langchain_classic.retrievers import ContextualCompressionRetriever  # noqa: E402
from langchain_classic.retrievers.document_compressors import (  # noqa: E402
    DocumentCompressorPipeline,
)
from langchain_core.callbacks import (  # noqa: E402
    CallbackManagerForRetrieverRun,
    Callbacks,
)
from langchain_core.documents import BaseDocumentCompressor, Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from skeleton_compressor import (  # noqa: E402
    BudgetExceededError,
    ContextFragment,
    FragmentTypeError,
    FragmentValueError,
    SkeletonMetadata,
    TokenCounter,
    compress,
)
from skeleton_compressor.integrations.langchain import (  # noqa: E402
    SkeletonDocumentCompressor,
)


def words(text: str) -> int:
    return len(text.split())


def scored(
    doc_id: str | None, word_count: int, score: object, key: str = "relevance_score"
) -> Document:
    return Document(page_content=" ".join(["w"] * word_count), metadata={key: score}, id=doc_id)


# (id, words, relevance). By relevance: e, c, b, d, a. Budget 10 (in words):
# greedy keeps e (4) and c (6), then nothing fits; optimal keeps e, b, a (9 words, 1.8)
# over e, c (10 words, 1.7).
SPEC = [("a", 2, 0.2), ("b", 3, 0.7), ("c", 6, 0.8), ("d", 5, 0.4), ("e", 4, 0.9)]


def documents() -> list[Document]:
    return [scored(doc_id, count, score) for doc_id, count, score in SPEC]


def kept_ids(kept: Sequence[Document]) -> list[str | None]:
    return [document.id for document in kept]


@pytest.mark.parametrize(
    ("strategy", "order", "expected"),
    [
        ("greedy", "ranking", ["e", "c"]),
        ("greedy", "input", ["c", "e"]),
        ("greedy", "edges", ["e", "c"]),
        ("optimal", "ranking", ["e", "b", "a"]),
        ("optimal", "input", ["a", "b", "e"]),
        # Ranks 0 and 2 from the front, rank 1 at the end.
        ("optimal", "edges", ["e", "a", "b"]),
        ("prefix", "ranking", ["e", "c"]),
        ("density", "ranking", ["e", "b", "a"]),
    ],
)
def test_keeps_what_the_strategy_chooses_in_the_order_asked(
    backend: str, strategy: str, order: str, expected: list[str]
) -> None:
    compressor = SkeletonDocumentCompressor(
        10, words, strategy=strategy, order=order, backend=backend
    )
    assert kept_ids(compressor.compress_documents(documents(), "query")) == expected


def test_returns_the_very_documents_passed_in(backend: str) -> None:
    given_documents = documents()
    kept = SkeletonDocumentCompressor(10, words, backend=backend).compress_documents(
        given_documents, "query"
    )
    assert [id(document) for document in kept] == [id(given_documents[4]), id(given_documents[2])]
    assert given_documents[4].metadata == {"relevance_score": 0.9}


def test_min_relevance_leaves_out_the_less_relevant_even_with_room(backend: str) -> None:
    everything = SkeletonDocumentCompressor(20, words, backend=backend)
    assert kept_ids(everything.compress_documents(documents(), "q")) == ["e", "c", "b", "d", "a"]
    floor = SkeletonDocumentCompressor(20, words, min_relevance=0.5, backend=backend)
    assert kept_ids(floor.compress_documents(documents(), "q")) == ["e", "c", "b"]


def test_ties_in_relevance_keep_the_retrieved_order(backend: str) -> None:
    tied = [scored("z", 1, 0.5), scored("a", 1, 0.5), scored("m", 1, 0.5)]
    compressor = SkeletonDocumentCompressor(2, words, backend=backend)
    assert kept_ids(compressor.compress_documents(tied, "q")) == ["z", "a"]


@pytest.mark.parametrize(("on_overflow", "expected"), [("keep_top", ["e"]), ("strict", [])])
def test_when_nothing_fits(backend: str, on_overflow: str, expected: list[str]) -> None:
    compressor = SkeletonDocumentCompressor(1, words, on_overflow=on_overflow, backend=backend)
    assert kept_ids(compressor.compress_documents(documents(), "q")) == expected


def test_when_nothing_fits_under_raise(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(1, words, on_overflow="raise", backend=backend)
    with pytest.raises(BudgetExceededError) as raised:
        compressor.compress_documents(documents(), "q")
    assert (raised.value.skeleton_budget, raised.value.needed_tokens) == (1, 2)


def test_reports_the_library_metadata(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(10, words, backend=backend)
    kept, metadata = compressor.compress_with_metadata(documents())
    assert kept_ids(kept) == ["e", "c"]
    assert (
        metadata.original_tokens,
        metadata.compressed_tokens,
        metadata.skeleton_budget,
        metadata.fragments_total,
        metadata.fragments_kept,
        metadata.over_budget,
    ) == (20, 10, 10, 5, 2, False)
    assert metadata.ratio == 0.5
    assert metadata.value_kept == pytest.approx(1.7)


def test_metadata_key_returns_copies_carrying_the_metadata(backend: str) -> None:
    given_documents = documents()
    compressor = SkeletonDocumentCompressor(10, words, backend=backend, metadata_key="skeleton")
    kept, metadata = compressor.compress_with_metadata(given_documents)
    assert kept_ids(kept) == ["e", "c"]
    for copy, original in zip(kept, [given_documents[4], given_documents[2]]):
        assert copy is not original
        assert copy.page_content == original.page_content
        assert copy.metadata == {
            "relevance_score": original.metadata["relevance_score"],
            "skeleton": metadata.to_dict(),
        }
        assert original.metadata == {"relevance_score": original.metadata["relevance_score"]}
    assert kept[0].metadata["skeleton"] is not kept[1].metadata["skeleton"]
    assert kept_ids(compressor.compress_documents(given_documents, "q")) == ["e", "c"]


def test_callable_relevance(backend: str) -> None:
    # Relevance from the text itself: here, more words is more relevant.
    compressor = SkeletonDocumentCompressor(
        10, words, relevance=lambda document: words(document.page_content) / 10, backend=backend
    )
    unscored = [Document(page_content=" ".join(["w"] * count), id=i) for i, count, _ in SPEC]
    assert kept_ids(compressor.compress_documents(unscored, "q")) == ["c", "e"]


def test_another_metadata_key(backend: str) -> None:
    given_documents = [scored(i, count, score, key="score") for i, count, score in SPEC]
    compressor = SkeletonDocumentCompressor(10, words, relevance="score", backend=backend)
    assert kept_ids(compressor.compress_documents(given_documents, "q")) == ["e", "c"]


def test_token_counter_instance(backend: str) -> None:
    # o200k_base: "alpha beta gamma" is 3 tokens, "one two" 2, "x y z w" 4.
    texts = [("a", "alpha beta gamma", 0.9), ("b", "one two", 0.2), ("c", "x y z w", 0.5)]
    given_documents = [
        Document(page_content=text, metadata={"relevance_score": score}, id=doc_id)
        for doc_id, text, score in texts
    ]
    compressor = SkeletonDocumentCompressor(6, TokenCounter(), backend=backend)
    kept, metadata = compressor.compress_with_metadata(given_documents)
    assert kept_ids(kept) == ["a", "b"]
    assert (metadata.original_tokens, metadata.compressed_tokens) == (9, 5)


@pytest.mark.parametrize("encoding", [None, "o200k_base", "cl100k_base"])
def test_an_encoding_name_counts_alike_on_both_backends(backend: str, encoding: str | None) -> None:
    given_documents = [scored("a", 3, 0.9), scored("b", 2, 0.2), scored("c", 4, 0.5)]
    compressor = SkeletonDocumentCompressor(5, encoding, backend=backend)
    kept, metadata = compressor.compress_with_metadata(given_documents)
    # "w w w" is 3 tokens in both encodings: one per word.
    assert kept_ids(kept) == ["a", "b"]
    assert metadata.original_tokens == 9


def test_empty_list(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(10, words, backend=backend)
    kept, metadata = compressor.compress_with_metadata([])
    assert kept == []
    assert metadata == SkeletonMetadata(0, 0, 1.0, 10, 0, 0, 0.0, 0.0, 0, 1.0, True)


def test_budget_zero_keeps_nothing(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(0, words, backend=backend)
    kept, metadata = compressor.compress_with_metadata(documents())
    assert kept == []
    assert (metadata.original_tokens, metadata.fragments_kept) == (20, 0)


BAD_SCORES = [
    (None, FragmentTypeError, "relevance_type", "must be a real number, got None (NoneType)"),
    ("0.5", FragmentTypeError, "relevance_type", "must be a real number, got '0.5' (str)"),
    (True, FragmentTypeError, "relevance_type", "must be a real number, got True (bool)"),
    (math.nan, FragmentValueError, "relevance_range", "must be in [0, 1], got nan"),
    (1.5, FragmentValueError, "relevance_range", "must be in [0, 1], got 1.5"),
    (-0.1, FragmentValueError, "relevance_range", "must be in [0, 1], got -0.1"),
]


@pytest.mark.parametrize(("score", "error", "kind", "detail"), BAD_SCORES)
def test_a_bad_score_names_the_document(
    backend: str, score: object, error: type[Exception], kind: str, detail: str
) -> None:
    given_documents = documents()
    given_documents[3] = scored("d", 5, score)
    compressor = SkeletonDocumentCompressor(10, words, backend=backend, scores="strict")
    with pytest.raises(error) as raised:
        compressor.compress_documents(given_documents, "q")
    assert type(raised.value) is error
    assert (raised.value.index, raised.value.kind, raised.value.container) == (  # type: ignore[attr-defined]
        3,
        kind,
        "documents",
    )
    assert str(raised.value) == f"documents[3] (id 'd'): relevance_score {detail}"


def test_a_bad_score_from_a_callable_names_the_document(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(
        10,
        words,
        relevance=lambda document: 2 if document.id == "b" else 0.5,
        scores="strict",
        backend=backend,
    )
    with pytest.raises(FragmentValueError) as raised:
        compressor.compress_documents(documents(), "q")
    assert raised.value.index == 1
    assert str(raised.value) == "documents[1] (id 'b'): relevance_score must be in [0, 1], got 2"


MISSING = (
    "no relevance score: metadata['relevance_score'] is missing "
    "(give relevance= or missing_score= to score such items)"
)


def test_a_document_without_the_score(backend: str) -> None:
    given_documents = documents()
    given_documents[2] = Document(page_content="w w", metadata={"score": 0.5}, id="c")
    compressor = SkeletonDocumentCompressor(10, words, backend=backend, missing_score="raise")
    with pytest.raises(FragmentTypeError) as raised:
        compressor.compress_documents(given_documents, "q")
    assert (raised.value.index, raised.value.kind, raised.value.fragment_id) == (
        2,
        "relevance_type",
        "c",
    )
    assert str(raised.value) == f"documents[2] (id 'c'): {MISSING}"


def test_a_document_without_the_score_nor_an_id(backend: str) -> None:
    given_documents = [*documents(), Document(page_content="w")]
    compressor = SkeletonDocumentCompressor(10, words, backend=backend, missing_score="raise")
    with pytest.raises(FragmentTypeError) as raised:
        compressor.compress_documents(given_documents, "q")
    assert (raised.value.index, raised.value.fragment_id) == (5, None)
    assert str(raised.value) == f"documents[5]: {MISSING}"


def test_a_bad_count_from_a_callable_counter_names_the_document(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(
        10, lambda text: -1 if text == "w w w" else words(text), backend=backend
    )
    with pytest.raises(FragmentValueError) as raised:
        compressor.compress_documents(documents(), "q")
    assert (raised.value.index, raised.value.kind) == (1, "token_negative")
    assert str(raised.value) == "documents[1] (id 'b'): token_count must be >= 0, got -1"


def test_an_item_that_is_not_a_document(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(10, words, backend=backend)
    with pytest.raises(TypeError, match=r"^documents\[1\] must be a Document, got 'text' \(str\)$"):
        compressor.compress_documents([documents()[0], "text"], "q")  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("field", "value", "detail"),
    [
        ("metadata", None, "must have a mapping as metadata, got None (NoneType)"),
        (
            "metadata",
            ["relevance_score"],
            "must have a mapping as metadata, got ['relevance_score'] (list)",
        ),
        ("page_content", None, "must have a str page_content, got None (NoneType)"),
        ("page_content", b"w w", "must have a str page_content, got b'w w' (bytes)"),
    ],
)
def test_a_field_assigned_a_value_of_another_type_names_the_document(
    backend: str, field: str, value: object, detail: str
) -> None:
    # LangChain checks the fields when a Document is made, not when one is assigned.
    given_documents = documents()
    setattr(given_documents[1], field, value)
    compressor = SkeletonDocumentCompressor(10, words, backend=backend)
    with pytest.raises(FragmentTypeError) as raised:
        compressor.compress_documents(given_documents, "q")
    assert (raised.value.index, raised.value.kind, raised.value.fragment_id) == (
        1,
        "not_fragment",
        "b",
    )
    assert str(raised.value) == f"documents[1] (id 'b') {detail}"


def test_a_text_tiktoken_panics_on_names_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    # The Python backend counts through tiktoken.
    make_tiktoken_panic(monkeypatch)
    compressor = SkeletonDocumentCompressor(10, "o200k_base", backend="python")
    with pytest.raises(RuntimeError, match=r"^documents\[0\]: tiktoken cannot count this text"):
        compressor.compress_documents(documents(), "q")


def test_metadata_is_checked_only_where_it_is_read(backend: str) -> None:
    given_documents = documents()
    given_documents[0].metadata = MappingProxyType(dict(given_documents[0].metadata))
    given_documents[1].metadata = None  # type: ignore[assignment]
    by_callable = SkeletonDocumentCompressor(
        10, words, relevance=lambda document: 0.5, backend=backend
    )
    assert len(by_callable.compress_documents(given_documents, "q")) > 0
    del given_documents[1]
    # A mapping that is not a dict is read for the scores and copied for the metadata.
    by_key = SkeletonDocumentCompressor(10, words, metadata_key="packing", backend=backend)
    kept = by_key.compress_documents(given_documents, "q")
    assert all("packing" in document.metadata for document in kept)


class Text(str):
    def split(self, *args: object, **kwargs: object) -> list[str]:
        raise AssertionError("the counter is given the plain str")


def test_a_str_subclass_page_content_is_read_as_the_plain_str(backend: str) -> None:
    given_documents = documents()
    given_documents[4].page_content = Text("w w w w")
    kept = SkeletonDocumentCompressor(10, words, backend=backend).compress_documents(
        given_documents, "q"
    )
    assert kept_ids(kept) == ["e", "c"]
    assert kept[0] is given_documents[4]


def test_any_iterable_of_documents_is_read_once(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(10, words, backend=backend)
    assert kept_ids(compressor.compress_documents(iter(documents()), "q")) == ["e", "c"]
    with pytest.raises(TypeError) as raised:
        compressor.compress_documents(None, "q")  # type: ignore[arg-type]
    assert str(raised.value) == "documents must be an iterable of Document, got None (NoneType)"
    with pytest.raises(TypeError) as raised:
        compressor.compress_documents({"documents": []}, "q")  # type: ignore[arg-type]
    assert str(raised.value) == (
        "documents must be an iterable of Document, got {'documents': []} (dict)"
    )


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"skeleton_budget": -1}, ValueError, "skeleton_budget must be >= 0, got -1"),
        ({"skeleton_budget": True}, TypeError, "skeleton_budget must be an int, got True (bool)"),
        ({"skeleton_budget": 1.0}, TypeError, "skeleton_budget must be an int, got 1.0 (float)"),
        (
            {"strategy": "best"},
            ValueError,
            "strategy must be one of greedy, prefix, density, optimal, got 'best'",
        ),
        (
            {"order": "random"},
            ValueError,
            "order must be one of ranking, input, edges, got 'random'",
        ),
        ({"on_overflow": "drop"}, ValueError, "on_overflow must be one of"),
        ({"min_relevance": 2}, ValueError, "min_relevance must be in [0, 1], got 2"),
        ({"backend": "gpu"}, ValueError, "backend"),
        ({"token_counter": 5}, TypeError, "counter must be a TokenCounter"),
        ({"token_counter": "p50k_base"}, ValueError, "p50k_base"),
        ({"relevance": 5}, TypeError, "relevance must be a metadata key (str) or a callable"),
        ({"metadata_key": 3}, TypeError, "metadata_key must be a str or None, got 3 (int)"),
        (
            {"metadata_key": "relevance_score"},
            ValueError,
            "metadata_key must not be the key relevance is read from, 'relevance_score'",
        ),
        (
            {"relevance": "score", "metadata_key": "score"},
            ValueError,
            "metadata_key must not be the key relevance is read from, 'score'",
        ),
    ],
)
def test_bad_options_raise_when_the_compressor_is_made(
    backend: str, options: dict[str, object], error: type[Exception], message: str
) -> None:
    arguments: dict[str, object] = {
        "skeleton_budget": 10,
        "token_counter": words,
        "backend": backend,
        **options,
    }
    with pytest.raises(error) as raised:
        SkeletonDocumentCompressor(**arguments)  # type: ignore[arg-type]
    assert type(raised.value).__module__ != "pydantic_core._pydantic_core"
    assert message in str(raised.value)


def test_changed_options_take_effect(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(10, words, backend=backend)
    smaller = compressor.model_copy(update={"skeleton_budget": 4})
    assert kept_ids(smaller.compress_documents(documents(), "q")) == ["e"]
    compressor.strategy = "optimal"
    assert kept_ids(compressor.compress_documents(documents(), "q")) == ["e", "b", "a"]
    compressor.order = "sideways"
    with pytest.raises(ValueError, match="order must be one of"):
        compressor.compress_documents(documents(), "q")
    tagging = SkeletonDocumentCompressor(10, words, backend=backend)
    tagging.metadata_key = 3  # type: ignore[assignment]
    with pytest.raises(TypeError, match=r"metadata_key must be a str or None, got 3 \(int\)"):
        tagging.compress_documents(documents(), "q")
    tagging.metadata_key = "relevance_score"
    with pytest.raises(ValueError, match="must not be the key relevance is read from"):
        tagging.compress_documents(documents(), "q")


def test_acompress_documents(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(10, words, strategy="optimal", backend=backend)
    kept = asyncio.run(compressor.acompress_documents(documents(), "q"))
    assert kept_ids(kept) == ["e", "b", "a"]


class FixedRetriever(BaseRetriever):
    """Hands back the same documents for every query, as a search would."""

    found: list[Document]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return self.found


class WordOverlapScorer(BaseDocumentCompressor):
    """Stands in for a reranker: puts a relevance_score in each document's metadata (the share
    of the query's words the document holds)."""

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        asked = set(query.split())
        return [
            document.model_copy(
                update={
                    "metadata": {
                        **document.metadata,
                        "relevance_score": len(asked & set(document.page_content.split()))
                        / len(asked),
                    }
                }
            )
            for document in documents
        ]


def test_inside_a_contextual_compression_retriever(backend: str) -> None:
    found = documents()
    retriever = ContextualCompressionRetriever(
        base_compressor=SkeletonDocumentCompressor(10, words, backend=backend),
        base_retriever=FixedRetriever(found=found),
    )
    kept = retriever.invoke("query")
    assert kept_ids(kept) == ["e", "c"]
    assert kept[0] is found[4]
    assert kept_ids(asyncio.run(retriever.ainvoke("query"))) == ["e", "c"]


def test_after_a_reranker_in_a_pipeline(backend: str) -> None:
    found = [
        Document(page_content="rust core with python bindings", id="bindings"),
        Document(page_content="a recipe for bread", id="bread"),
        Document(page_content="python packaging with maturin", id="packaging"),
        Document(page_content="the rust borrow checker explained in depth", id="borrow"),
    ]
    # Query words: rust, python, maturin. Scores 2/3, 0, 2/3, 1/3; budget 9 words keeps the
    # two best (5 and 4 words), in the order they were found.
    pipeline = DocumentCompressorPipeline(
        transformers=[
            WordOverlapScorer(),
            SkeletonDocumentCompressor(9, words, order="input", backend=backend),
        ]
    )
    retriever = ContextualCompressionRetriever(
        base_compressor=pipeline, base_retriever=FixedRetriever(found=found)
    )
    assert kept_ids(retriever.invoke("rust python maturin")) == ["bindings", "packaging"]
    assert kept_ids(asyncio.run(retriever.ainvoke("rust python maturin"))) == [
        "bindings",
        "packaging",
    ]


ROW = st.tuples(
    st.integers(0, 8),
    st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.25, 0.5, 1.0])),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(ROW, max_size=12),
    budget=st.one_of(st.integers(0, 4), st.integers(0, 40)),
    strategy=st.sampled_from(["greedy", "prefix", "density", "optimal"]),
    order=st.sampled_from(["ranking", "input", "edges"]),
    min_relevance=st.sampled_from([0.0, 0.3]),
    on_overflow=st.sampled_from(["keep_top", "strict", "raise"]),
)
def test_keeps_what_compress_keeps_of_the_same_fragments(
    backend: str,
    rows: list[tuple[int, float]],
    budget: int,
    strategy: str,
    order: str,
    min_relevance: float,
    on_overflow: str,
) -> None:
    options = {
        "strategy": strategy,
        "order": order,
        "min_relevance": min_relevance,
        "on_overflow": on_overflow,
        "backend": backend,
    }
    # Document ids run against input order, so a tie broken by id would show.
    given_documents = [
        scored(f"doc-{len(rows) - index:03d}", count, score)
        for index, (count, score) in enumerate(rows)
    ]
    # Fragment ids in input order: the library breaks ties by id, the compressor by input order.
    fragments = tuple(
        ContextFragment(f"{index:03d}", count, score) for index, (count, score) in enumerate(rows)
    )
    compressor = SkeletonDocumentCompressor(budget, words, **options)  # type: ignore[arg-type]
    try:
        expected = compress(fragments, budget, **options)  # type: ignore[arg-type]
    except BudgetExceededError as refused:
        with pytest.raises(BudgetExceededError) as raised:
            compressor.compress_with_metadata(given_documents)
        assert (raised.value.needed_tokens, str(raised.value)) == (
            refused.needed_tokens,
            str(refused),
        )
        return
    kept, metadata = compressor.compress_with_metadata(given_documents)
    place = {id(document): index for index, document in enumerate(given_documents)}
    assert [place[id(document)] for document in kept] == [
        int(fragment.fragment_id) for fragment in expected.fragments
    ]
    assert metadata == expected.metadata
