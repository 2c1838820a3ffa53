"""The LangChain document compressor at 10,000 documents, beside building those 10,000
`Document` objects: the adapter should cost at most twice what building them costs.

Each document is a short English text of 20 to 60 words with a relevance score in its
metadata; the budget is a tenth of all tokens. One group per token counter: the built-in
o200k_base, and a callable (a quarter of the characters, as a rough estimate)."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

import pytest
from support.frameworks import framework
from support.sample_text import PROSE

lc = framework("langchain_core")

from langchain_core.documents import Document  # noqa: E402
from skeleton_compressor import TokenCounter  # noqa: E402
from skeleton_compressor.integrations.langchain import (  # noqa: E402
    SkeletonDocumentCompressor,
)

SIZE = 10_000
WORDS = PROSE["english"].split()


@functools.cache
def inputs() -> tuple[list[str], list[float], list[str]]:
    rng = random.Random(24)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) for _ in range(SIZE)]
    return texts, [rng.random() for _ in range(SIZE)], [f"doc-{i}" for i in range(SIZE)]


def build_documents() -> list[Document]:
    texts, scores, ids = inputs()
    return [
        Document(page_content=text, metadata={"relevance_score": score}, id=doc_id)
        for text, score, doc_id in zip(texts, scores, ids)
    ]


def quarter_of_characters(text: str) -> int:
    return len(text) // 4


COUNTERS: dict[str, Callable[[], TokenCounter | Callable[[str], int]]] = {
    "o200k_base": TokenCounter,
    "callable len(text) // 4": lambda: quarter_of_characters,
}


@pytest.mark.parametrize(
    "implementation",
    ["build the Documents", "compress_documents", "compress_documents, metadata_key"],
)
@pytest.mark.parametrize("counter_name", list(COUNTERS))
def test_compress_documents_beside_building_them(  # type: ignore[no-untyped-def]
    benchmark, counter_name: str, implementation: str
) -> None:
    benchmark.group = f"10,000 LangChain documents of 20-60 words, {counter_name}"
    counter = COUNTERS[counter_name]()
    texts, _, _ = inputs()
    count = counter.count if isinstance(counter, TokenCounter) else counter
    budget = sum(count(text) for text in texts) // 10  # also loads the encoding's table
    documents = build_documents()
    compressor = SkeletonDocumentCompressor(
        budget,
        counter,
        metadata_key="skeleton" if implementation.endswith("metadata_key") else None,
    )
    if implementation == "build the Documents":
        run = build_documents
    else:
        kept = compressor.compress_documents(documents, "query")
        assert 0 < len(kept) < SIZE
        run = functools.partial(compressor.compress_documents, documents, "query")
    benchmark.pedantic(run, rounds=7, warmup_rounds=1)
