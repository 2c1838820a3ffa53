"""`optimal` against a peer: entroly-core's `py_knapsack_optimize` (best of several calls).

On the set the value strategies are judged on (token counts log-uniform 1..2,000, relevance
uniform, a tenth of the tokens as the budget), at 100, 1,000 and 2,000 fragments and five
seeds each, `optimal` keeps at least the peer's value on every instance, in no more of its
time. The peer's fragments carry the relevance as `semantic_score` and 0 as each other score.

entroly-core is no dependency: the module skips unless it is installed (in a virtualenv of
its own, say, one that also sees this package).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import pytest
from skeleton_compressor import ContextFragment, SkeletonCompressorService
from skeleton_compressor.cli.bench.fragments import make_value_fragments, tenth_of_tokens
from skeleton_compressor.cli.bench.timing import best_times

entroly_core = pytest.importorskip("entroly_core")

SIZES = (100, 1_000, 2_000)
SEEDS = range(5)
OPTIMAL = SkeletonCompressorService(backend="rust", strategy="optimal")
# The contract's value unit: each relevance counts as round(relevance * 2**32) of them.
UNITS = 2**32


@functools.cache
def value_set(size: int, seed: int) -> tuple[tuple[ContextFragment, ...], int]:
    fragments = make_value_fragments(size, seed)
    return fragments, tenth_of_tokens(fragments)


@functools.cache
def peer_set(size: int, seed: int) -> list[Any]:
    """The same fragments as the peer's objects: `ContextFragment(id, content, token_count)`
    with the relevance as `semantic_score`; its constructor sets recency 1.0 and entropy 0.5,
    so those are set to 0 here, as is frequency. Made once, outside the timed calls."""
    peer_fragments = []
    for fragment in value_set(size, seed)[0]:
        peer = entroly_core.ContextFragment(fragment.fragment_id, "", fragment.token_count)
        peer.semantic_score = fragment.relevance_score
        peer.recency_score = 0.0
        peer.frequency_score = 0.0
        peer.entropy_score = 0.0
        peer_fragments.append(peer)
    return peer_fragments


def units(fragments: list[ContextFragment]) -> int:
    return sum(round(fragment.relevance_score * UNITS) for fragment in fragments)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", SIZES)
def test_optimal_against_entroly(size: int, seed: int) -> None:
    fragments, budget = value_set(size, seed)
    peer_fragments = peer_set(size, seed)

    # py_knapsack_optimize(fragments, token_budget) -> (selected fragments, stats dict).
    selected, stats = entroly_core.py_knapsack_optimize(peer_fragments, budget)
    by_id = {fragment.fragment_id: fragment for fragment in fragments}
    kept_by_peer = [by_id[peer.fragment_id] for peer in selected]
    assert len({fragment.fragment_id for fragment in kept_by_peer}) == len(kept_by_peer)
    peer_tokens = sum(fragment.token_count for fragment in kept_by_peer)
    assert peer_tokens == stats["total_tokens"]
    assert peer_tokens <= budget, f"entroly kept {peer_tokens} tokens of a budget of {budget}"
    peer_value = math.fsum(fragment.relevance_score for fragment in kept_by_peer)

    result = OPTIMAL.compress(fragments, budget)
    metadata = result.metadata
    assert metadata.value_kept is not None and metadata.value_bound is not None
    assert metadata.compressed_tokens <= budget
    our_value = math.fsum(fragment.relevance_score for fragment in result.fragments)
    assert math.isclose(metadata.value_kept, our_value, rel_tol=1e-9)

    peer_seconds, our_seconds = best_times(
        lambda: entroly_core.py_knapsack_optimize(peer_fragments, budget),
        lambda: OPTIMAL.compress(fragments, budget),
    )
    bound = metadata.value_bound
    print(
        f"\n{size:,} seed {seed}, budget {budget}: value entroly {peer_value:.6f}"
        f" ({peer_value / bound:.6f} of the bound), optimal {metadata.value_kept:.6f}"
        f" ({metadata.value_kept / bound:.6f}), bound {bound:.6f};"
        f" entroly {peer_seconds * 1e3:.3f} ms, optimal {our_seconds * 1e3:.3f} ms"
        f" ({our_seconds / peer_seconds:.2f}x)"
    )
    # `optimal` is exact in the contract's units, so it keeps at least as many of them...
    assert round(metadata.value_kept * UNITS) >= units(kept_by_peer)
    # ...and, as plain float sums, at least the peer's value up to rounding.
    assert our_value >= peer_value * (1 - 1e-9), f"optimal {our_value} < entroly {peer_value}"
    assert our_seconds <= peer_seconds, f"optimal {our_seconds / peer_seconds:.2f}x entroly"
