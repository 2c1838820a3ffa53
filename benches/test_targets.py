"""The performance targets, measured side by side in one run (best of several calls each).

These are ratios between implementations on the same machine, so they hold on slow and fast
machines alike; they are benchmarks, not part of the default test run.
"""

from __future__ import annotations

import sys

import pytest
from conftest import SCORES, budget_of, fragments_of
from skeleton_compressor import ContextFragment, SkeletonCompressorService, compress_arrays
from skeleton_compressor.cli.bench.fragments import (
    POLICY_FLOOR,
    make_policy_fragments,
    read_floor,
    read_policy_floor,
    tenth_of_tokens,
)
from skeleton_compressor.cli.bench.timing import best_times
from skeleton_compressor.cli.bench.variants import measure_variants

RUST = SkeletonCompressorService(backend="rust")
PYTHON = SkeletonCompressorService(backend="python")
MILLION = 1_000_000


@pytest.mark.parametrize("scores", SCORES)
def test_million_fragments_against_fallback_and_read_floor(scores: str) -> None:
    # random: no ties; levels: a fifth of the fragments at each of five scores; equal: all tie.
    fragments, budget = fragments_of(MILLION, scores), budget_of(MILLION, scores)
    rust, python, floor = best_times(
        lambda: RUST.compress(fragments, budget),
        lambda: PYTHON.compress(fragments, budget),
        lambda: read_floor(fragments),
    )
    print(
        f"\n1M, {scores} scores: rust {rust:.4f}s python {python:.4f}s floor {floor:.4f}s"
        f" ({python / rust:.1f}x faster, {rust / floor:.2f}x the floor)"
    )
    assert python / rust >= 15, f"only {python / rust:.1f}x faster than the fallback"
    assert rust / floor <= 0.5, f"{rust / floor:.2f}x the read floor"


@pytest.mark.parametrize("size", [1, 10, 100, 1_000, 100_000, MILLION])
def test_rust_faster_than_fallback_at_every_size(size: int) -> None:
    fragments, budget = fragments_of(size), budget_of(size)
    rust, python = best_times(
        lambda: RUST.compress(fragments, budget), lambda: PYTHON.compress(fragments, budget)
    )
    print(f"\n{size}: rust {rust:.3g}s python {python:.3g}s ({python / rust:.1f}x)")
    assert rust < python


def test_compress_many_ranks_once() -> None:
    fragments = fragments_of(100_000)
    total = budget_of(100_000) * 10
    budgets = [total * k // 100 for k in range(1, 21)]  # 1% to 20% of all tokens
    one, many = best_times(
        lambda: RUST.compress(fragments, total // 10),
        lambda: RUST.compress_many(fragments, budgets),
    )
    print(f"\ncompress_many x20 {many:.4f}s, compress x1 {one:.4f}s ({many / one:.2f}x)")
    assert many < 3 * one


def test_compress_arrays_against_lexsort() -> None:
    np = pytest.importorskip("numpy")
    fragments, budget = fragments_of(MILLION), budget_of(MILLION)
    ids = [f.fragment_id for f in fragments]
    tokens = np.array([f.token_count for f in fragments], dtype=np.int64)
    scores = np.array([f.relevance_score for f in fragments], dtype=np.float64)
    id_array = np.array(ids)
    ours, lexsort = best_times(
        lambda: compress_arrays(ids, tokens, scores, budget, backend="rust"),
        lambda: np.lexsort((id_array, -scores)),
    )
    print(f"\ncompress_arrays {ours:.4f}s, numpy.lexsort {lexsort:.4f}s ({lexsort / ours:.1f}x)")
    assert lexsort / ours >= 5


def test_a_million_fragments_with_a_policy() -> None:
    # A tenth required, half in groups of 1 to 5, a floor of 0.2; the budget a fifth of all
    # tokens, so the required tenth fits and the walk has room.
    fragments = make_policy_fragments(MILLION)
    budget = tenth_of_tokens(fragments) * 2
    rust = SkeletonCompressorService(backend="rust", min_relevance=POLICY_FLOOR)
    python = SkeletonCompressorService(backend="python", min_relevance=POLICY_FLOOR)
    assert rust.compress(fragments, budget) == python.compress(fragments, budget)
    ours, fallback, floor = best_times(
        lambda: rust.compress(fragments, budget),
        lambda: python.compress(fragments, budget),
        lambda: read_policy_floor(fragments),
    )
    print(
        f"\n1M with a policy: rust {ours:.4f}s python {fallback:.4f}s five-field read "
        f"{floor:.4f}s ({fallback / ours:.1f}x faster, {ours / floor:.2f}x the read)"
    )
    assert fallback / ours >= 15, f"only {fallback / ours:.1f}x faster than the fallback"
    assert ours / floor <= 1.5, f"{ours / floor:.2f}x the five-field read"


def test_explain_at_100_000() -> None:
    fragments = make_policy_fragments(100_000)
    budget = tenth_of_tokens(fragments) * 2
    rust = SkeletonCompressorService(backend="rust", min_relevance=POLICY_FLOOR)
    python = SkeletonCompressorService(backend="python", min_relevance=POLICY_FLOOR)
    assert rust.explain(fragments, budget) == python.explain(fragments, budget)
    ours, fallback = best_times(
        lambda: rust.explain(fragments, budget), lambda: python.explain(fragments, budget)
    )
    print(f"\nexplain 100k: rust {ours:.4f}s python {fallback:.4f}s ({fallback / ours:.1f}x)")
    assert fallback / ours >= 5, f"only {fallback / ours:.1f}x faster than the fallback"


def test_a_million_fragments_with_variants() -> None:
    # A third of the fragments in variant sets of two or three; against the same fragments
    # with no variant_of anywhere, and against reading the four fields. Both backends agree
    # first (measure_variants checks).
    row = measure_variants(MILLION, sys.stderr)
    print(
        f"\n1M with variants: rust {row['rust_seconds']:.4f}s, without variant_of "
        f"{row['plain_seconds']:.4f}s ({row['over_plain']:.2f}x), python "
        f"{row['python_seconds']:.4f}s, four-field read {row['read_floor_seconds']:.4f}s "
        f"({row['rust_over_floor']:.2f}x the read)"
    )
    assert row["over_plain"] <= 1.3, f"{row['over_plain']:.2f}x greedy without variants"
    assert row["rust_over_floor"] <= 1.5, f"{row['rust_over_floor']:.2f}x the four-field read"


def _sort_and_walk(fragments: tuple[ContextFragment, ...], budget: int) -> list[ContextFragment]:
    """What a planner writes without the library: most relevant first, each that fits."""
    kept = []
    for fragment in sorted(fragments, key=lambda f: (-f.relevance_score, f.fragment_id)):
        if fragment.token_count <= budget:
            kept.append(fragment)
            budget -= fragment.token_count
    return kept


def test_a_one_fragment_call_within_2_5_us() -> None:
    fragments = fragments_of(1)
    budget = budget_of(1)
    (seconds,) = best_times(lambda: RUST.compress(fragments, budget))
    print(f"\n1 fragment: {seconds * 1e6:.2f} us")
    assert seconds <= 2.5e-6, f"{seconds * 1e6:.2f} us"


def test_ten_fragments_no_slower_than_a_plain_python_sort_and_walk() -> None:
    fragments = fragments_of(10)
    budget = budget_of(10)
    rust, plain = best_times(
        lambda: RUST.compress(fragments, budget), lambda: _sort_and_walk(fragments, budget)
    )
    print(f"\n10 fragments: {rust * 1e6:.2f} us, a plain sort-and-walk {plain * 1e6:.2f} us")
    assert rust <= plain, f"{rust / plain:.2f}x the plain walk"
