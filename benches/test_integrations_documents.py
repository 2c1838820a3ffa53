"""The LlamaIndex and Haystack adapters at 10,000 items, beside the cost of building the
framework objects they return: 10,000 `NodeWithScore(TextNode(...))`, 10,000
`Document(content=..., score=...)`. Texts are English prose of 20 to 60 words; the budget is
a tenth of all tokens. The target: the adapter costs at most twice the building.

Each group holds one framework and one counter, its rows side by side: `build` (making the
objects) and `pack` (the adapter on them), with the default counter (o200k_base, compiled)
and with a callable (words split on whitespace)."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

import pytest
from skeleton_compressor import TokenCounter
from support.frameworks import framework
from support.sample_text import PROSE

framework("llama_index.core")
framework("haystack")

from haystack import Document  # noqa: E402
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode  # noqa: E402
from skeleton_compressor.integrations.haystack import SkeletonDocumentPacker  # noqa: E402
from skeleton_compressor.integrations.llamaindex import SkeletonNodePostprocessor  # noqa: E402

ITEMS = 10_000
ROUNDS = 5


def words(text: str) -> int:
    return len(text.split())


COUNTERS: dict[str, Callable[[str], int] | None] = {"o200k_base": None, "callable": words}


@functools.cache
def texts_and_scores() -> tuple[list[str], list[float]]:
    chooser = random.Random(24)
    vocabulary = PROSE["english"].replace(",", "").replace(";", "").replace(".", "").split()
    texts = [
        " ".join(chooser.choice(vocabulary) for _ in range(chooser.randint(20, 60)))
        for _ in range(ITEMS)
    ]
    return texts, [chooser.random() for _ in range(ITEMS)]


def tenth_of_tokens(texts: list[str], counter: Callable[[str], int] | None) -> int:
    counts = TokenCounter().count_many(texts) if counter is None else map(counter, texts)
    return sum(counts) // 10


def build_nodes() -> list[NodeWithScore]:
    texts, scores = texts_and_scores()
    return [
        NodeWithScore(node=TextNode(text=text, id_=f"node-{index}"), score=score)
        for index, (text, score) in enumerate(zip(texts, scores))
    ]


def build_documents() -> list[Document]:
    texts, scores = texts_and_scores()
    return [
        Document(id=f"doc-{index}", content=text, score=score)
        for index, (text, score) in enumerate(zip(texts, scores))
    ]


def _run(benchmark: Any, work: Callable[[], object]) -> None:
    benchmark.pedantic(work, rounds=ROUNDS, warmup_rounds=1)


@pytest.mark.parametrize("row", ["build", "pack"])
@pytest.mark.parametrize("counter", list(COUNTERS))
def test_llamaindex_nodes(benchmark: Any, counter: str, row: str) -> None:
    benchmark.group = f"LlamaIndex, {ITEMS:,} NodeWithScore, counter {counter}"
    if row == "build":
        _run(benchmark, build_nodes)
        return
    nodes = build_nodes()
    # What the postprocessor counts: the text with the metadata the LLM sees (none here).
    texts = [node.get_content(MetadataMode.LLM) for node in nodes]
    budget = tenth_of_tokens(texts, COUNTERS[counter])
    postprocessor = SkeletonNodePostprocessor(budget, COUNTERS[counter])
    kept = postprocessor.postprocess_nodes(nodes)
    assert 0 < len(kept) < ITEMS
    _run(benchmark, lambda: postprocessor.postprocess_nodes(nodes))


@pytest.mark.parametrize("row", ["build", "pack"])
@pytest.mark.parametrize("counter", list(COUNTERS))
def test_haystack_documents(benchmark: Any, counter: str, row: str) -> None:
    benchmark.group = f"Haystack, {ITEMS:,} Document, counter {counter}"
    if row == "build":
        _run(benchmark, build_documents)
        return
    documents = build_documents()
    texts = [document.content or "" for document in documents]
    component = SkeletonDocumentPacker(tenth_of_tokens(texts, COUNTERS[counter]), COUNTERS[counter])
    kept = component.run(documents)["documents"]
    assert 0 < len(kept) < ITEMS
    _run(benchmark, lambda: component.run(documents))
