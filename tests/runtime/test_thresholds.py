"""Inputs sized to cross every threshold of the Rust core (its first sort, the second thread
that looks for duplicates, the GIL release, the counting of relevance keys and the setting apart
of the best, the hand-over of id hashes a chunk at a time), each with one answer, the same on
both backends."""

from __future__ import annotations

import pytest
from skeleton_compressor import (
    ContextFragment,
    FragmentValueError,
    SkeletonCompressorService,
    compress_arrays,
)

F = ContextFragment

# Below and above the size from which the Rust core releases the GIL and scans for
# duplicates on a second thread (20,000 fragments).
SIZES = (4_000, 30_000)
# Past the size from which relevance keys are counted (65,536 fragments), in three chunks of
# the id hashes handed to the second thread (65,536 each).
LARGE = 140_000


def skewed(size: int) -> tuple[ContextFragment, ...]:
    """Heavy fragments ranked above a thousand one-token ones: a small budget skips every heavy
    one, so the ranking must go beyond the part a budget's share of all tokens suggests."""
    heavy = size - 1_000
    return tuple(F(f"heavy-{i:06d}", 1_000, 0.9, "") for i in range(heavy)) + tuple(
        F(f"light-{i:06d}", 1, 0.5, "") for i in range(1_000)
    )


@pytest.mark.parametrize("size", SIZES)
def test_a_small_budget_ranks_past_the_first_sort(
    service: SkeletonCompressorService, size: int
) -> None:
    fragments = skewed(size)
    result = service.compress(fragments, 500)
    assert [f.fragment_id for f in result.fragments] == [f"light-{i:06d}" for i in range(500)]
    assert result.metadata.compressed_tokens == 500
    assert not result.metadata.over_budget
    many = service.compress_many(fragments, [0, 500, 999, 1_000])
    assert [r.metadata.fragments_kept for r in many] == [0, 500, 999, 1]
    assert many[1] == result


@pytest.mark.parametrize("size", SIZES)
def test_prefix_stops_at_the_first_heavy_fragment(backend: str, size: int) -> None:
    service = SkeletonCompressorService(backend=backend, strategy="prefix")
    result = service.compress(skewed(size), 2_500)
    assert [f.fragment_id for f in result.fragments] == ["heavy-000000", "heavy-000001"]


@pytest.mark.parametrize("size", (*SIZES, 30_001))
def test_a_late_duplicate_is_found(service: SkeletonCompressorService, size: int) -> None:
    ids = [f"id-{i:06d}" for i in range(size)]
    ids[-1] = ids[123]
    fragments = tuple(F(fid, 1, (i % 97) / 97) for i, fid in enumerate(ids))
    with pytest.raises(FragmentValueError) as caught:
        service.compress(fragments, 10)
    error = caught.value
    assert (error.kind, error.first_index, error.index) == ("duplicate", 123, size - 1)
    assert (
        str(error)
        == f"duplicate fragment_id 'id-000123' at fragments[123] and fragments[{size - 1}]"
    )
    with pytest.raises(FragmentValueError, match="at rows\\[123\\] and rows"):
        compress_arrays(ids, [1] * size, [0.5] * size, 10, backend=service.backend)


@pytest.mark.parametrize("levels", [1, 5])
def test_ties_rank_by_id_at_every_size(service: SkeletonCompressorService, levels: int) -> None:
    size = 45_000
    # Ids share a long prefix and differ late, in an order unrelated to the input's.
    fragments = tuple(
        F(f"src/module/shared/prefix/{(i * 7919) % size:07d}#chunk", 1 + i % 3, (i % levels) / 4)
        for i in range(size)
    )
    budget = sum(f.token_count for f in fragments) // 10
    result = service.compress(fragments, budget)
    expected = sorted(fragments, key=lambda f: (-f.relevance_score, f.fragment_id))
    kept = result.fragments
    assert list(kept) == expected[: len(kept)]
    assert result.metadata.compressed_tokens == sum(f.token_count for f in kept) == budget


@pytest.mark.parametrize("size", SIZES)
def test_groups_spread_over_many_buckets(service: SkeletonCompressorService, size: int) -> None:
    # Every fragment grouped, three to a group, the members a third of the input apart; two
    # members share one name string and the third has an equal copy of its own.
    third = size // 3
    score = [((p * 7919) % size) / size for p in range(size)]
    name = [f"group-{k:06d}" for k in range(third)]
    fragments = tuple(
        F(
            f"id-{p:06d}",
            1,
            score[p],
            group=name[p % third] if p < 2 * third else "".join(name[p % third]),
        )
        for p in range(size)
    )
    members = [[k, k + third, k + 2 * third] for k in range(third)]
    best = sorted(members, key=lambda group: (-max(score[p] for p in group), group[0]))
    result = service.compress(fragments, 30)
    assert [f.fragment_id for f in result.fragments] == [
        f"id-{p:06d}" for group in best[:10] for p in group
    ]


def greedy(fragments: tuple[ContextFragment, ...], budget: int) -> list[ContextFragment]:
    kept, left = [], budget
    for fragment in sorted(fragments, key=lambda f: (-f.relevance_score, f.fragment_id)):
        if fragment.token_count <= left:
            kept.append(fragment)
            left -= fragment.token_count
    return kept


@pytest.mark.parametrize("levels", [0, 5])
def test_counted_keys_guide_the_first_sort(service: SkeletonCompressorService, levels: int) -> None:
    # Distinct scores spread over many ranges of keys, or five levels (ranges of one key each);
    # budgets whose first sorts are below and above the size split over two threads.
    fragments = tuple(
        F(
            f"id-{(i * 7919) % LARGE:06d}",
            1 + i % 7,
            (i % levels) / 4 if levels else ((i * 104_729) % LARGE) / LARGE,
        )
        for i in range(LARGE)
    )
    total = sum(f.token_count for f in fragments)
    budgets = [total // 50, total // 5, total // 2]
    for budget, result in zip(budgets, service.compress_many(fragments, budgets)):
        assert list(result.fragments) == greedy(fragments, budget)


@pytest.mark.parametrize("order", ["unrelated", "best last", "best first"])
def test_the_first_fragments_guide_what_is_set_apart(
    service: SkeletonCompressorService, order: str
) -> None:
    # Past twice the sample (65,536 fragments) whose best ranges are set apart as the rest are
    # read: a fair sample; the best last, more of them than the sample suggests; the best
    # first, so that the first sort needs ranges that were not set apart.
    scores = [((i * 104_729) % LARGE) / LARGE for i in range(LARGE)]
    if order != "unrelated":
        scores.sort(reverse=order == "best first")
    fragments = tuple(
        F(f"id-{(i * 7919) % LARGE:06d}", 1 + i % 7, score) for i, score in enumerate(scores)
    )
    total = sum(f.token_count for f in fragments)
    for budget in (total // 50, total // 10):
        assert list(service.compress(fragments, budget).fragments) == greedy(fragments, budget)


def test_duplicates_across_hash_chunks_are_found(service: SkeletonCompressorService) -> None:
    ids = [f"id-{i:06d}" for i in range(LARGE)]
    ids[131_072] = ids[65_535]  # the first of the third chunk repeats the last of the first
    ids[-1] = ids[0]
    fragments = tuple(F(fid, 1, 0.5) for fid in ids)
    with pytest.raises(FragmentValueError) as caught:
        service.compress(fragments, 10)
    assert (caught.value.first_index, caught.value.index) == (65_535, 131_072)
