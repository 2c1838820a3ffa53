"""Token counting beside tiktoken, in groups that sit the implementations side by side:
many texts (20 M characters of mixed text), one 1,000-character text of each kind, and
fragments made from 100,000 texts."""

from __future__ import annotations

import pytest
from skeleton_compressor import TokenCounter, fragments_from_texts
from token_inputs import (
    ENCODINGS,
    KINDS,
    hundred_thousand,
    one_kilobyte,
    tiktoken_encoding,
    tiktoken_ways,
    twenty_megabytes,
)

MANY = ["count_many", "tiktoken encode_ordinary loop", "tiktoken encode_ordinary_batch"]


@pytest.mark.parametrize("implementation", MANY)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_count_many(benchmark, encoding: str, implementation: str) -> None:  # type: ignore[no-untyped-def]
    texts = twenty_megabytes()
    benchmark.group = f"count 20,000 mixed texts (20 M characters), {encoding}"
    ways = tiktoken_ways(encoding, texts)
    counter = TokenCounter(encoding)
    ways["count_many"] = lambda: counter.count_many(texts)
    benchmark.pedantic(ways[implementation], rounds=3, warmup_rounds=1)


@pytest.mark.parametrize("implementation", ["count", "tiktoken len(encode_ordinary)"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_count_one_kilobyte(benchmark, encoding: str, kind: str, implementation: str) -> None:  # type: ignore[no-untyped-def]
    text = one_kilobyte(kind)
    benchmark.group = f"count one 1,000-character text, {kind}, {encoding}"
    if implementation == "count":
        counter = TokenCounter(encoding)
        counter.count(text)  # loads the table before timing starts
        benchmark(counter.count, text)
    else:
        tiktoken = tiktoken_encoding(encoding)
        benchmark(lambda: len(tiktoken.encode_ordinary(text)))


@pytest.mark.parametrize("implementation", ["fragments_from_texts", "count_many"])
def test_fragments_from_texts(benchmark, implementation: str) -> None:  # type: ignore[no-untyped-def]
    texts = hundred_thousand()
    ids = [f"text-{i}" for i in range(len(texts))]
    scores = [i / len(texts) for i in range(len(texts))]
    counter = TokenCounter()
    benchmark.group = "100,000 texts of about 1,000 characters, o200k_base"
    if implementation == "count_many":
        benchmark.pedantic(lambda: counter.count_many(texts), rounds=3, warmup_rounds=1)
    else:
        benchmark.pedantic(
            lambda: fragments_from_texts(ids, texts, scores, counter=counter),
            rounds=3,
            warmup_rounds=1,
        )
