"""The Haystack component, run directly and in real pipelines (saved to YAML and loaded back),
on both backends."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.frameworks import framework

hs = framework("haystack")

from haystack import Document, Pipeline  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever  # noqa: E402
from haystack.core.errors import (  # noqa: E402
    PipelineRuntimeError,
    SerializationError,
)
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402
from skeleton_compressor import (  # noqa: E402
    BudgetExceededError,
    ContextFragment,
    FragmentTypeError,
    FragmentValueError,
    SkeletonMetadata,
    TokenCounter,
    compress,
)
from skeleton_compressor._messages import describe  # noqa: E402
from skeleton_compressor.integrations.haystack import SkeletonDocumentPacker  # noqa: E402

ALLOWED = ["skeleton_compressor"]


def words(text: str) -> int:
    return len(text.split())


def units(score: float) -> int:
    """A relevance in the library's exact value units."""
    return round(score * 2**32)


def document(document_id: str, size: int, score: object) -> Document:
    return Document(id=document_id, content=" ".join(["w"] * size), score=score)  # type: ignore[arg-type]


def retrieved() -> list[Document]:
    """Input order c, a, e, b, d; by relevance a, b, c, d, e; 19 words in all."""
    return [
        document("c", 3, 0.7),
        document("a", 6, 0.9),
        document("e", 5, 0.1),
        document("b", 3, 0.8),
        document("d", 2, 0.3),
    ]


def document_ids(documents: list[Document]) -> list[str]:
    return [document.id for document in documents]


def packer(budget: int, backend: str, **options: Any) -> SkeletonDocumentPacker:
    return SkeletonDocumentPacker(budget, words, backend=backend, **options)


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
def test_run_keeps_the_documents_passed_in_in_the_policys_order(
    backend: str, options: dict[str, Any], kept: list[str]
) -> None:
    documents = retrieved()
    by_id = {document.id: document for document in documents}
    result = packer(8, backend, **options).run(documents)
    assert set(result) == {"documents", "skeleton_metadata"}
    assert document_ids(result["documents"]) == kept
    assert all(document is by_id[document.id] for document in result["documents"])
    assert document_ids(documents) == ["c", "a", "e", "b", "d"]


def test_the_metadata_output_is_the_librarys_as_a_dict(backend: str) -> None:
    metadata = packer(8, backend).run(retrieved())["skeleton_metadata"]
    assert metadata == {
        "original_tokens": 19,
        "compressed_tokens": 8,
        "ratio": 8 / 19,
        "skeleton_budget": 8,
        "fragments_total": 5,
        "fragments_kept": 2,
        "value_kept": 0.9 + 0.3,
        "value_bound": metadata["value_bound"],
        "reused_tokens": 0,
        "kept_share": (units(0.9) + units(0.3)) / round(metadata["value_bound"] * 2**32),
        "exact": True,
        "over_budget": False,
    }
    # Fractionally: b and c whole (6 words), then 2 of a's 6 words or all of d: 0.3.
    assert math.isclose(metadata["value_bound"], 1.8, abs_tol=1e-9)


def test_budget_zero_and_empty_input_keep_nothing(backend: str) -> None:
    result = packer(0, backend).run(retrieved())
    assert result["documents"] == []
    assert (
        result["skeleton_metadata"]["original_tokens"],
        result["skeleton_metadata"]["fragments_kept"],
    ) == (19, 0)
    assert packer(8, backend).run([]) == {
        "documents": [],
        "skeleton_metadata": SkeletonMetadata(0, 0, 1.0, 8, 0, 0, 0.0, 0.0, 0, 1.0, True).to_dict(),
    }


def test_a_run_may_give_its_own_budget(backend: str) -> None:
    component = packer(8, backend)
    # a (6) leaves 6: b (3) and c (3) fit.
    result = component.run(retrieved(), skeleton_budget=12)
    assert document_ids(result["documents"]) == ["a", "b", "c"]
    assert result["skeleton_metadata"]["skeleton_budget"] == 12
    assert document_ids(component.run(retrieved())["documents"]) == ["a", "d"]
    with pytest.raises(ValueError, match=r"^skeleton_budget must be >= 0, got -1$"):
        component.run(retrieved(), skeleton_budget=-1)
    with pytest.raises(TypeError, match=r"^skeleton_budget must be an int, got True \(bool\)$"):
        component.run(retrieved(), skeleton_budget=True)


def test_when_nothing_fits_the_overflow_policy_decides(backend: str) -> None:
    # The smallest document, d, takes 2 words; the budget is 1.
    assert document_ids(packer(1, backend).run(retrieved())["documents"]) == ["a"]
    assert packer(1, backend, on_overflow="strict").run(retrieved())["documents"] == []
    with pytest.raises(BudgetExceededError) as raised:
        packer(1, backend, on_overflow="raise").run(retrieved())
    assert (raised.value.skeleton_budget, raised.value.needed_tokens) == (1, 2)


def test_an_encoding_counts_alike_on_both_backends(backend: str) -> None:
    documents = retrieved()
    cl100k = TokenCounter("cl100k_base")
    o200k = TokenCounter("o200k_base")
    texts = [document.content or "" for document in documents]
    for counter, reference in ((None, o200k), ("o200k_base", o200k), (cl100k, cl100k)):
        metadata = SkeletonDocumentPacker(1000, counter, backend=backend).run(documents)
        assert metadata["skeleton_metadata"]["original_tokens"] == sum(reference.count_many(texts))


def test_documents_without_a_score_raise_or_get_the_missing_score(backend: str) -> None:
    documents = retrieved()
    documents[2] = document("e", 5, None)
    with pytest.raises(FragmentTypeError) as raised:
        packer(8, backend, missing_score="raise").run(documents)
    assert (raised.value.index, raised.value.kind, raised.value.fragment_id) == (
        2,
        "relevance_type",
        "e",
    )
    assert raised.value.container == "documents"
    assert str(raised.value) == (
        "documents[2] (id 'e'): no relevance score: Document.score is None (give "
        "missing_score= 'rank' or a number in [0, 1] to score such items)"
    )
    # By default e scores by its place, the third of five: (5 - 2) / 5 = 0.6, below c's 0.7:
    # a (6) is kept first, and only d (2) fits after it.
    kept = packer(8, backend).run(documents)["documents"]
    assert document_ids(kept) == ["a", "d"]
    # Scored 0.95, e ranks first: e (5) leaves 3 for b (3).
    kept = packer(8, backend, missing_score=0.95).run(documents)["documents"]
    assert document_ids(kept) == ["e", "b"]
    assert kept[0] is documents[2]
    assert kept[0].score is None


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
def test_a_bad_score_names_the_document(
    backend: str, score: object, error: type[Exception], kind: str, detail: str
) -> None:
    documents = retrieved()
    documents[3] = document("b", 3, score)
    with pytest.raises(error) as raised:
        packer(8, backend, scores="strict").run(documents)
    assert type(raised.value) is error
    assert (raised.value.index, raised.value.kind) == (3, kind)  # type: ignore[attr-defined]
    assert str(raised.value) == f"documents[3] (id 'b'): relevance_score {detail}"


@pytest.mark.parametrize(
    ("item", "shown"),
    [
        ("oops", "'oops' (str)"),
        (None, "None (NoneType)"),
        ({"content": "x"}, "{'content': 'x'} (dict)"),
    ],
)
def test_an_item_that_is_not_a_document_is_named(backend: str, item: object, shown: str) -> None:
    documents: list[Any] = retrieved()
    documents[1] = item
    with pytest.raises(FragmentTypeError) as raised:
        packer(8, backend).run(documents)
    assert (raised.value.index, raised.value.kind) == (1, "not_fragment")
    assert str(raised.value) == f"documents[1] must be a Document, got {shown}"


def test_a_document_without_text_is_named(backend: str) -> None:
    documents = retrieved()
    documents[4] = Document(id="blob", score=0.5)
    with pytest.raises(FragmentTypeError) as raised:
        packer(8, backend).run(documents)
    assert (raised.value.index, raised.value.kind, raised.value.fragment_id) == (
        4,
        "not_fragment",
        "blob",
    )
    assert str(raised.value) == (
        "documents[4] (id 'blob') must have text content, got content None (only text is counted)"
    )


class Text(str):
    """A str subclass, as Haystack's `Document` keeps it."""

    def split(self, *args: Any, **kwargs: Any) -> list[str]:
        raise AssertionError("the counter is given the plain str")


def test_a_str_subclass_content_is_read_as_the_plain_str(backend: str) -> None:
    documents = retrieved()
    documents[1] = Document(id="a", content=Text(" ".join(["w"] * 6)), score=0.9)
    kept = packer(8, backend).run(documents)
    assert document_ids(kept["documents"]) == ["a", "d"]
    assert kept["documents"][0] is documents[1]
    assert kept["skeleton_metadata"]["compressed_tokens"] == 8


def test_any_iterable_of_documents_is_read_once(backend: str) -> None:
    documents = retrieved()
    kept = packer(8, backend).run(document for document in documents)  # type: ignore[arg-type]
    assert document_ids(kept["documents"]) == ["a", "d"]
    assert kept["documents"][0] is documents[1]
    assert packer(8, backend).run(iter([]))["documents"] == []  # type: ignore[arg-type]
    with pytest.raises(TypeError) as raised:
        packer(8, backend).run(5)  # type: ignore[arg-type]
    assert str(raised.value) == "documents must be an iterable of Document, got 5 (int)"


@pytest.mark.parametrize(
    ("count", "error", "message"),
    [
        (-1, FragmentValueError, "documents[0] (id 'c'): token_count must be >= 0, got -1"),
        (
            2.0,
            FragmentTypeError,
            "documents[0] (id 'c'): token_count must be an int, got 2.0 (float)",
        ),
    ],
)
def test_a_counters_bad_count_names_the_document(
    backend: str, count: object, error: type[Exception], message: str
) -> None:
    component = SkeletonDocumentPacker(8, lambda text: count, backend=backend)
    with pytest.raises(error) as raised:
        component.run(retrieved())
    assert type(raised.value) is error
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"skeleton_budget": -1}, ValueError, "skeleton_budget must be >= 0, got -1"),
        ({"skeleton_budget": True}, TypeError, "skeleton_budget must be an int, got True (bool)"),
        ({"skeleton_budget": "8"}, TypeError, "skeleton_budget must be an int, got '8' (str)"),
        ({"strategy": "best"}, ValueError, "strategy"),
        ({"min_relevance": -0.5}, ValueError, "min_relevance must be in [0, 1], got -0.5"),
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
            {"missing_score": math.nan},
            ValueError,
            "missing_score must be 'raise', 'rank' or a real number in [0, 1], got nan",
        ),
        (
            {"missing_score": [0.5]},
            TypeError,
            "missing_score must be 'raise', 'rank' or a real number in [0, 1], got [0.5] (list)",
        ),
    ],
)
def test_bad_options_fail_at_construction(
    backend: str, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"skeleton_budget": 8, "token_counter": words, "backend": backend}
    arguments.update(options)
    with pytest.raises(error) as raised:
        SkeletonDocumentPacker(**arguments)
    assert type(raised.value) is error
    assert message in str(raised.value)


def test_it_runs_in_a_pipeline_after_a_real_retriever(backend: str) -> None:
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(id="owl", content="owls hunt at night in the woods"),
            Document(id="lion", content="lions hunt at night on the plains"),
            Document(id="bat", content="bats sleep all day and hunt insects at dusk"),
            Document(id="cow", content="cows graze by day"),
        ]
    )
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(store, scale_score=True))
    pipeline.add_component("packer", packer(14, backend, order="input"))
    pipeline.connect("retriever.documents", "packer.documents")
    result = pipeline.run(
        {"retriever": {"query": "who hunts at night"}}, include_outputs_from={"retriever"}
    )
    found = result["retriever"]["documents"]
    # BM25 scaled to [0, 1] (numpy floats): owl and lion 0.54 each, bat 0.51, cow 0 (left out).
    assert sorted(document.id for document in found) == ["bat", "lion", "owl"]
    kept = result["packer"]["documents"]
    # 14 words hold owl's 7 and lion's 7, not bat's 9; in the order they were retrieved.
    assert [document.id for document in kept] == [
        document.id for document in found if document.id in ("owl", "lion")
    ]
    fragments = tuple(
        ContextFragment(f"{index}", words(document.content), document.score)
        for index, document in enumerate(found)
    )
    expected = compress(fragments, 14, order="input", backend=backend)
    assert [document.id for document in kept] == [
        found[int(fragment.fragment_id)].id for fragment in expected.fragments
    ]
    assert result["packer"]["skeleton_metadata"] == expected.metadata.to_dict()


@pytest.mark.parametrize("options", [{}, {"strategy": "optimal", "order": "edges"}])
def test_a_pipeline_saved_to_yaml_loads_back_and_gives_the_same_result(
    backend: str, options: dict[str, Any]
) -> None:
    pipeline = Pipeline()
    pipeline.add_component("packer", packer(8, backend, **options))
    saved = pipeline.dumps()
    assert "skeleton_compressor.integrations.haystack.SkeletonDocumentPacker" in saved
    assert f"callable: {words.__module__}.words" in saved
    loaded = Pipeline.loads(saved, allowed_modules=[*ALLOWED, words.__module__])
    assert loaded.dumps() == saved
    for budget in (None, 1, 4, 30):
        inputs: dict[str, Any] = {"documents": retrieved()}
        if budget is not None:
            inputs["skeleton_budget"] = budget
        first = pipeline.run({"packer": inputs})["packer"]
        again = loaded.run({"packer": inputs})["packer"]
        assert first == again
    kept = loaded.run({"packer": {"documents": retrieved()}})["packer"]["documents"]
    assert document_ids(kept) == (["b", "d", "c"] if options else ["a", "d"])


def test_a_pipeline_counting_by_encoding_saves_its_name(backend: str) -> None:
    pipeline = Pipeline()
    pipeline.add_component(
        "packer", SkeletonDocumentPacker(8, TokenCounter("cl100k_base"), backend=backend)
    )
    # "w w w" is one token per word in cl100k_base too.
    kept = pipeline.run({"packer": {"documents": retrieved()}})["packer"]["documents"]
    assert document_ids(kept) == ["a", "d"]
    saved = pipeline.dumps()
    assert "token_counter: cl100k_base" in saved
    loaded = Pipeline.loads(saved, allowed_modules=ALLOWED)
    assert loaded.run({"packer": {"documents": retrieved()}}) == pipeline.run(
        {"packer": {"documents": retrieved()}}
    )


def nested_counter() -> Any:
    def count(text: str) -> int:
        return len(text)

    return count


@pytest.mark.parametrize(
    ("counter", "reason"),
    [
        (lambda text: 1, "Serialization of lambdas is not supported."),
        (nested_counter(), "Serialization of nested functions is not supported."),
        (TokenCounter("o200k_base").count, "it is not a function defined in a module."),
    ],
)
def test_a_counter_without_an_import_path_cannot_be_saved(
    backend: str, counter: Any, reason: str
) -> None:
    component = SkeletonDocumentPacker(8, counter, backend=backend)
    with pytest.raises(SerializationError) as raised:
        component.to_dict()
    assert str(raised.value) == (
        f"SkeletonDocumentPacker cannot save token_counter={describe(counter)}: {reason} "
        f"Give an encoding's name (o200k_base, cl100k_base), a TokenCounter or a "
        f"module-level function to save the pipeline"
    )
    pipeline = Pipeline()
    pipeline.add_component("packer", component)
    with pytest.raises(SerializationError):
        pipeline.dumps()


def test_to_dict_names_every_option_and_from_dict_rebuilds_it(backend: str) -> None:
    component = SkeletonDocumentPacker(
        20,
        len,
        strategy="density",
        min_relevance=0.25,
        on_overflow="strict",
        order="input",
        backend=backend,
        missing_score=0.5,
    )
    data = component.to_dict()
    assert data == {
        "type": "skeleton_compressor.integrations.haystack.SkeletonDocumentPacker",
        "init_parameters": {
            "skeleton_budget": 20,
            "token_counter": {"callable": "builtins.len"},
            "strategy": "density",
            "min_relevance": 0.25,
            "on_overflow": "strict",
            "order": "input",
            "backend": backend,
            "scores": "auto",
            "missing_score": 0.5,
        },
    }
    rebuilt = SkeletonDocumentPacker.from_dict(data)
    assert rebuilt.token_counter is len
    assert rebuilt.to_dict() == data
    assert data["init_parameters"]["token_counter"] == {"callable": "builtins.len"}
    defaults = SkeletonDocumentPacker(5, words, backend=backend).to_dict()["init_parameters"]
    assert {key: value for key, value in defaults.items() if key != "token_counter"} == {
        "skeleton_budget": 5,
        "strategy": "greedy",
        "min_relevance": 0.0,
        "on_overflow": "keep_top",
        "order": "ranking",
        "backend": backend,
        "scores": "auto",
        "missing_score": "rank",
    }


def test_a_pipeline_reports_the_error_naming_the_document(backend: str) -> None:
    pipeline = Pipeline()
    pipeline.add_component("packer", packer(8, backend, scores="strict"))
    documents = retrieved()
    documents[0] = document("c", 3, 2.0)
    with pytest.raises(PipelineRuntimeError) as raised:
        pipeline.run({"packer": {"documents": documents}})
    cause = raised.value.__cause__
    assert type(cause) is FragmentValueError
    assert str(cause) == "documents[0] (id 'c'): relevance_score must be in [0, 1], got 2.0"


scores = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)


# The backend fixture is a constant name: nothing to reset between examples.
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    items=st.lists(st.tuples(st.integers(0, 9), st.one_of(st.none(), scores)), max_size=12),
    budget=st.integers(0, 40),
    strategy=st.sampled_from(["greedy", "prefix", "density", "optimal"]),
    order=st.sampled_from(["ranking", "input", "edges"]),
    on_overflow=st.sampled_from(["keep_top", "strict", "raise"]),
    missing_score=st.sampled_from([0.0, 0.6]),
)
def test_it_keeps_what_compress_keeps_of_the_same_fragments(
    backend: str,
    items: list[tuple[int, float | None]],
    budget: int,
    strategy: str,
    order: str,
    on_overflow: str,
    missing_score: float,
) -> None:
    options: dict[str, Any] = {
        "strategy": strategy,
        "order": order,
        "on_overflow": on_overflow,
        "backend": backend,
    }
    documents = [document(f"d{index}", size, score) for index, (size, score) in enumerate(items)]
    # Ids in input order, so that ties in relevance rank as the adapter ranks them.
    fragments = tuple(
        ContextFragment(f"{index:02d}", size, missing_score if score is None else score)
        for index, (size, score) in enumerate(items)
    )
    component = SkeletonDocumentPacker(budget, words, missing_score=missing_score, **options)
    try:
        expected = compress(fragments, budget, **options)
    except BudgetExceededError as error:
        with pytest.raises(BudgetExceededError) as raised:
            component.run(documents)
        assert raised.value.needed_tokens == error.needed_tokens
        return
    result = component.run(documents)
    assert [documents.index(kept) for kept in result["documents"]] == [
        int(fragment.fragment_id) for fragment in expected.fragments
    ]
    assert result["skeleton_metadata"] == expected.metadata.to_dict()
