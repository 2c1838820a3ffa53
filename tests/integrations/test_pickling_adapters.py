"""Every adapter pickles and deep-copies, and through its framework's own copy where it has
one (pydantic's `model_copy(deep=True)`, a Haystack pipeline deep-copied), and the copy packs
as the original does; one is sent to a spawned `multiprocessing` pool. On both backends."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
from typing import Any

import pytest
from support.frameworks import framework

framework("langchain_core")
framework("haystack")
framework("llama_index.core")
framework("pydantic_ai")

from haystack import Document as HaystackDocument  # noqa: E402
from haystack import Pipeline  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage  # noqa: E402
from llama_index.core.schema import NodeWithScore, TextNode  # noqa: E402
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart  # noqa: E402
from skeleton_compressor.integrations.haystack import SkeletonDocumentPacker  # noqa: E402
from skeleton_compressor.integrations.langchain import (  # noqa: E402
    SkeletonDocumentCompressor,
    pack_messages,
)
from skeleton_compressor.integrations.llamaindex import SkeletonNodePostprocessor  # noqa: E402
from skeleton_compressor.integrations.pydantic_ai import (  # noqa: E402
    SkeletonHistoryProcessor,
    message_text,
)

# (id, characters, score): `len` counts the characters, and pickles by name.
SPEC = [("c", 30, 0.7), ("a", 60, 0.9), ("e", 50, 0.1), ("b", 30, 0.8), ("d", 20, 0.3)]
BUDGET = 100


def copies(value: Any) -> list[Any]:
    """`value` pickled, deep-copied and copied."""
    return [pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)]


def langchain_documents() -> list[Document]:
    return [
        Document(page_content="w" * size, metadata={"relevance_score": score}, id=key)
        for key, size, score in SPEC
    ]


def langchain_kept(compressor: SkeletonDocumentCompressor) -> list[Any]:
    return [d.id for d in compressor.compress_documents(langchain_documents(), "query")]


def test_the_langchain_compressor_copies(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(BUDGET, len, strategy="optimal", backend=backend)
    expected = langchain_kept(compressor)
    assert expected == ["b", "c", "d"]  # 1.8 of relevance in 80 characters; a and b: 1.7
    for again in [*copies(compressor), compressor.model_copy(deep=True)]:
        assert repr(again) == repr(compressor)
        assert langchain_kept(again) == expected


def chat() -> list[Any]:
    return [
        SystemMessage("w" * 40),
        HumanMessage("w" * 400),
        AIMessage("w" * 300),
        HumanMessage("w" * 30),
        AIMessage("w" * 20),
        HumanMessage("w" * 40),
    ]


def content_length(message: Any) -> int:
    return len(message.content)


@pytest.mark.parametrize("options", [{}, {"stable": True, "with_metadata": True}])
def test_the_langchain_message_packer_copies(backend: str, options: dict[str, Any]) -> None:
    for counter in [None, content_length] if backend == "rust" else [content_length]:
        runnable = pack_messages(
            skeleton_budget=150, token_counter=counter, backend=backend, **options
        )
        before = len(pickle.dumps(runnable))
        expected = runnable.invoke(chat())  # and remembers the counts, by the messages' ids
        # What it remembers, the texts of a whole history, is not sent with it.
        assert len(pickle.dumps(runnable)) == before
        for again in copies(runnable):
            assert again.invoke(chat()) == expected


def haystack_documents() -> list[HaystackDocument]:
    return [HaystackDocument(id=key, content="w" * size, score=score) for key, size, score in SPEC]


def test_the_haystack_packer_copies(backend: str) -> None:
    packer = SkeletonDocumentPacker(BUDGET, len, order="input", backend=backend)
    expected = packer.run(haystack_documents())
    for again in copies(packer):
        assert again.to_dict() == packer.to_dict()
        assert again.run(haystack_documents()) == expected
    pipeline = Pipeline()
    pipeline.add_component("packer", packer)
    copied = copy.deepcopy(pipeline)
    assert copied.run({"packer": {"documents": haystack_documents()}})["packer"] == expected


def llamaindex_nodes() -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(text="w" * size, id_=key), score=score)
        for key, size, score in SPEC
    ]


def llamaindex_kept(postprocessor: SkeletonNodePostprocessor) -> list[str]:
    return [n.node.node_id for n in postprocessor.postprocess_nodes(llamaindex_nodes())]


def test_the_llamaindex_postprocessor_copies(backend: str) -> None:
    postprocessor = SkeletonNodePostprocessor(BUDGET, len, metadata_mode="none", backend=backend)
    expected = llamaindex_kept(postprocessor)
    assert expected == ["a", "b"]
    for again in [*copies(postprocessor), postprocessor.model_copy(deep=True)]:
        assert again.to_dict() == postprocessor.to_dict()
        assert llamaindex_kept(again) == expected
        assert again.last_metadata == postprocessor.last_metadata


def history() -> list[Any]:
    return [
        ModelRequest(parts=[UserPromptPart("w" * 80)]),
        ModelResponse(parts=[TextPart("w" * 40)]),
        ModelRequest(parts=[UserPromptPart("w" * 30)]),
    ]


def characters(message: Any) -> int:
    return len(message_text(message))


def test_the_pydantic_ai_processor_copies(backend: str) -> None:
    # The built-in encodings count on the compiled backend only; a callable anywhere.
    counter = None if backend == "rust" else characters
    processor = SkeletonHistoryProcessor(60, counter, strategy="prefix", backend=backend)
    messages = history()
    expected = processor.pack(messages)
    assert len(expected.messages) < len(messages)
    for again in copies(processor):
        assert again.pack(messages) == expected
        assert again.last_metadata == expected.metadata


def _pack_in_worker(compressor: SkeletonDocumentCompressor) -> list[Any]:
    return langchain_kept(compressor)


def test_an_adapter_works_in_a_spawned_pool(backend: str) -> None:
    compressor = SkeletonDocumentCompressor(BUDGET, len, backend=backend)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_pack_in_worker, (compressor,)) == langchain_kept(compressor)


@pytest.mark.parametrize("counter", [None, "cl100k_base"])
def test_a_built_in_counter_is_pickled_as_its_name(counter: Any) -> None:
    compressor = SkeletonDocumentCompressor(BUDGET, counter, backend="rust")
    again = pickle.loads(pickle.dumps(compressor))
    assert langchain_kept(again) == langchain_kept(compressor)
