"""The token-counting speed targets, as ratios measured side by side in one run (best of
several calls each, taking turns): they hold on slow and fast machines alike."""

from __future__ import annotations

import pytest
from skeleton_compressor import TokenCounter, fragments_from_texts
from skeleton_compressor.cli.bench.timing import best_times
from token_inputs import (
    ENCODINGS,
    KINDS,
    hundred_thousand,
    one_kilobyte,
    tiktoken_encoding,
    tiktoken_ways,
    twenty_megabytes,
)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_count_many_twice_as_fast_as_tiktokens_fastest_way(encoding: str) -> None:
    texts = twenty_megabytes()
    counter = TokenCounter(encoding)
    loop, batch = tiktoken_ways(encoding, texts).values()
    assert counter.count_many(texts) == loop()
    ours, looped, batched = best_times(lambda: counter.count_many(texts), loop, batch)
    fastest = min(looped, batched)
    print(
        f"\n20 M characters, {encoding}: count_many {ours:.3f}s, tiktoken loop {looped:.3f}s,"
        f" batch {batched:.3f}s ({fastest / ours:.2f}x the faster)"
    )
    assert fastest / ours >= 2, f"only {fastest / ours:.2f}x faster than tiktoken"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_count_one_kilobyte_half_again_as_fast(encoding: str, kind: str) -> None:
    text = one_kilobyte(kind)
    counter = TokenCounter(encoding)
    tiktoken = tiktoken_encoding(encoding)
    assert counter.count(text) == len(tiktoken.encode_ordinary(text))
    ours, theirs = best_times(
        lambda: counter.count(text), lambda: len(tiktoken.encode_ordinary(text))
    )
    print(
        f"\n1,000 characters of {kind}, {encoding}: count {ours * 1e6:.1f}us, tiktoken"
        f" {theirs * 1e6:.1f}us ({theirs / ours:.2f}x)"
    )
    assert theirs / ours >= 1.5, f"only {theirs / ours:.2f}x faster than tiktoken"


def test_fragments_from_texts_costs_little_more_than_counting() -> None:
    texts = hundred_thousand()
    ids = [f"text-{i}" for i in range(len(texts))]
    scores = [i / len(texts) for i in range(len(texts))]
    counter = TokenCounter()
    fragments, counting = best_times(
        lambda: fragments_from_texts(ids, texts, scores, counter=counter),
        lambda: counter.count_many(texts),
    )
    print(
        f"\n100,000 texts: fragments_from_texts {fragments:.3f}s, count_many {counting:.3f}s"
        f" ({fragments / counting:.2f}x)"
    )
    assert fragments / counting <= 1.5, f"{fragments / counting:.2f}x count_many"
