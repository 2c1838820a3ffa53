"""Selection rules the scenarios leave open, on both backends."""

from __future__ import annotations

from array import array
from dataclasses import replace

import pytest
from skeleton_compressor import (
    ContextFragment,
    SkeletonCompressorService,
    compress,
    compress_arrays,
)

F = ContextFragment


@pytest.fixture
def ranked() -> tuple[ContextFragment, ...]:
    # Ranking order: a(0.9, 50) b(0.8, 80) c(0.7, 30) d(0.6, 20)
    return (F("c", 30, 0.7), F("a", 50, 0.9), F("d", 20, 0.6), F("b", 80, 0.8))


def ids(result: object) -> list[str]:
    return [f.fragment_id for f in result.fragments]  # type: ignore[attr-defined]


def test_greedy_skips_what_does_not_fit(service: SkeletonCompressorService, ranked: tuple) -> None:
    result = service.compress(ranked, 100)
    assert ids(result) == ["a", "c", "d"]
    assert result.metadata.compressed_tokens == 100


def test_prefix_stops_at_first_misfit(
    prefix_service: SkeletonCompressorService, ranked: tuple
) -> None:
    result = prefix_service.compress(ranked, 100)
    assert ids(result) == ["a"]
    assert result.metadata.compressed_tokens == 50


def test_module_level_compress(backend: str, ranked: tuple) -> None:
    assert ids(compress(ranked, 100, backend=backend)) == ["a", "c", "d"]
    assert ids(compress(ranked, 100, strategy="prefix", backend=backend)) == ["a"]


@pytest.mark.parametrize("strategy", ["greedy", "prefix"])
def test_over_budget_when_nothing_fits(backend: str, strategy: str) -> None:
    fragments = (F("small-but-low", 300, 0.1), F("big-top", 400, 0.9))
    result = SkeletonCompressorService(backend=backend, strategy=strategy).compress(fragments, 250)
    assert result.fragments == (fragments[1],)
    assert result.metadata.over_budget
    assert result.metadata.to_dict()["over_budget"] is True
    assert result.metadata.compressed_tokens == 400


def test_within_budget_is_not_over(service: SkeletonCompressorService, ranked: tuple) -> None:
    assert not service.compress(ranked, 100).metadata.over_budget


def test_returns_the_very_objects(service: SkeletonCompressorService, ranked: tuple) -> None:
    result = service.compress(ranked, 10_000)
    by_id = {f.fragment_id: f for f in ranked}
    assert all(f is by_id[f.fragment_id] for f in result.fragments)


def test_metadata_fields(service: SkeletonCompressorService, ranked: tuple) -> None:
    metadata = service.compress(ranked, 100).metadata
    assert metadata.to_dict() == {
        "original_tokens": 180,
        "compressed_tokens": 100,
        "ratio": 100 / 180,
        "skeleton_budget": 100,
        "fragments_total": 4,
        "fragments_kept": 3,
        # a, c and d, their relevance added up as written; the fractional optimum keeps the
        # same three whole, so the share kept is exactly 1.0 of the bound, which is counted
        # in units of 2**-32 as the strategies count value.
        "value_kept": 2.2,
        "value_bound": sum(round(r * 2**32) for r in (0.9, 0.7, 0.6)) / 2**32,
        "reused_tokens": 0,
        "kept_share": 1.0,
        "exact": True,
        "over_budget": False,
    }


def test_ratio_is_one_when_there_are_no_tokens(service: SkeletonCompressorService) -> None:
    for fragments in [(), (F("zero", 0, 0.5), F("none", 0, 0.1))]:
        metadata = service.compress(fragments, 10).metadata
        assert metadata.original_tokens == 0
        assert metadata.ratio == 1.0
    result = service.compress((F("zero", 0, 0.5), F("none", 0, 0.1)), 10)
    assert ids(result) == ["zero", "none"]


def test_zero_token_fragments_fit_a_spent_budget(service: SkeletonCompressorService) -> None:
    fragments = (F("a", 10, 0.9), F("b", 5, 0.8), F("c", 0, 0.1), F("d", 0, 0.05))
    assert ids(service.compress(fragments, 10)) == ["a", "c", "d"]
    assert ids(service.compress(fragments, 0)) == []


def test_ids_order_by_code_point_and_negative_zero_ties(service: SkeletonCompressorService) -> None:
    fragments = (F("\U0001f600", 1, 0.0), F("\xff", 1, -0.0), F("z", 1, 0), F("Z", 1, 0.0))
    assert ids(service.compress(fragments, 100)) == ["Z", "z", "\xff", "\U0001f600"]


def test_int_relevance_zero_and_one(service: SkeletonCompressorService) -> None:
    fragments = (F("low", 1, 0), F("high", 1, 1), F("mid", 1, 0.5))
    assert ids(service.compress(fragments, 100)) == ["high", "mid", "low"]


def test_huge_budget_and_sums(service: SkeletonCompressorService) -> None:
    big = 2**63 - 1
    fragments = tuple(F(f"big{i}", big, 0.5) for i in range(3))
    result = service.compress(fragments, 10**30)
    assert len(result.fragments) == 3
    assert result.metadata.original_tokens == 3 * big
    assert result.metadata.skeleton_budget == 10**30
    two = service.compress(fragments, 2 * big + 1)
    assert ids(two) == ["big0", "big1"]


def test_compress_many_equals_compress_per_budget(
    service: SkeletonCompressorService, ranked: tuple
) -> None:
    budgets = [0, 1, 20, 50, 100, 179, 180, 10**20]
    many = service.compress_many(ranked, budgets)
    assert many == tuple(service.compress(ranked, b) for b in budgets)
    assert service.compress_many(ranked, []) == ()
    assert service.compress_many(ranked, iter([100])) == (service.compress(ranked, 100),)


def test_compress_many_checks_every_budget(
    service: SkeletonCompressorService, ranked: tuple
) -> None:
    with pytest.raises(ValueError, match="skeleton_budget must be >= 0"):
        service.compress_many(ranked, [10, -1])
    with pytest.raises(TypeError, match="skeleton_budget must be an int"):
        service.compress_many(ranked, [10, 2.5])
    with pytest.raises(TypeError, match="skeleton_budgets must be an iterable"):
        service.compress_many(ranked, 100)  # type: ignore[arg-type]
    # The results come in the budgets' order, which a set does not have.
    with pytest.raises(TypeError) as unordered:
        service.compress_many(ranked, {10, 20})
    assert str(unordered.value) == (
        "skeleton_budgets must be an iterable of int, got set (a set has no order)"
    )


def test_duplicate_ids(service: SkeletonCompressorService) -> None:
    fragments = (F("a", 1, 0.5), F("b", 1, 0.5), F("c", 1, 0.1), F("b", 2, 0.9), F("a", 1, 0.5))
    with pytest.raises(ValueError) as caught:
        service.compress(fragments, 10)
    assert str(caught.value) == "duplicate fragment_id 'b' at fragments[1] and fragments[3]"
    same_object = F("x", 1, 0.5)
    with pytest.raises(ValueError, match=r"fragments\[0\] and fragments\[1\]"):
        service.compress((same_object, same_object), 10)


def test_fragment_checks_come_before_duplicates(service: SkeletonCompressorService) -> None:
    fragments = (F("a", 1, 0.5), F("a", 1, 0.5), F("c", -1, 0.5))
    with pytest.raises(ValueError, match="token_count must be >= 0"):
        service.compress(fragments, 10)


def test_numpy_integer_budget_and_values(service: SkeletonCompressorService, ranked: tuple) -> None:
    np = pytest.importorskip("numpy")
    assert service.compress(ranked, np.int64(100)) == service.compress(ranked, 100)
    assert service.compress(ranked, np.uint8(100)).metadata.skeleton_budget == 100
    fragments = (F("a", np.int32(5), np.float32(0.5)), F("b", np.uint64(3), np.float64(0.25)))
    result = service.compress(fragments, 100)
    assert ids(result) == ["a", "b"]
    assert result.metadata.original_tokens == 8


def test_compress_arrays_matches_compress(
    service: SkeletonCompressorService, ranked: tuple
) -> None:
    fid = [f.fragment_id for f in ranked]
    tokens = [f.token_count for f in ranked]
    scores = [f.relevance_score for f in ranked]
    expected = service.compress(ranked, 100)
    for columns in [
        (tokens, scores),
        (array("q", tokens), array("d", scores)),
        (tuple(tokens), array("f", scores)),
    ]:
        got = service.compress_arrays(fid, *columns, 100)
        assert isinstance(got.indices, array) and got.indices.typecode == "q"
        assert [ranked[i] for i in got.indices] == list(expected.fragments)
        scores_column = columns[1]
        if isinstance(scores_column, array) and scores_column.typecode == "f":
            # Scores read as float32 are other relevances, worth other values.
            values = {"value_kept": None, "value_bound": None}
            assert replace(got.metadata, **values) == replace(expected.metadata, **values)
        else:
            assert got.metadata == expected.metadata


def test_compress_arrays_with_numpy(backend: str) -> None:
    np = pytest.importorskip("numpy")
    fid = ["a", "b", "c", "d"]
    got = compress_arrays(
        np.array(fid),
        np.array([50, 80, 30, 20]),
        np.array([0.9, 0.8, 0.7, 0.6]),
        100,
        backend=backend,
    )
    assert np.frombuffer(got.indices, dtype=np.int64).tolist() == [0, 2, 3]
    strided = np.array([0.9, 0.0, 0.8, 0.0, 0.7, 0.0, 0.6, 0.0])[::2]
    again = compress_arrays(
        fid, np.array([50, 80, 30, 20], dtype=np.uint16), strided, 100, backend=backend
    )
    assert list(again.indices) == [0, 2, 3]


def test_compress_arrays_errors(service: SkeletonCompressorService) -> None:
    with pytest.raises(ValueError, match="one length"):
        service.compress_arrays(["a", "b"], [1], [0.5, 0.5], 10)
    with pytest.raises(ValueError, match=r"^rows\[1\] \(id 'b'\): token_count must be >= 0"):
        service.compress_arrays(["a", "b"], array("i", [1, -3]), [0.5, 0.5], 10)
    with pytest.raises(TypeError, match=r"^rows\[0\] \(id 'a'\): token_count must be an int"):
        service.compress_arrays(["a", "b"], array("d", [1.0, 2.0]), [0.5, 0.5], 10)
    with pytest.raises(ValueError, match=r"^rows\[0\] \(id 'a'\): token_count must be <= 2\*\*63"):
        service.compress_arrays(["a"], array("Q", [2**64 - 1]), [0.5], 10)
    with pytest.raises(ValueError, match=r"relevance_score must be in \[0, 1\], got nan"):
        service.compress_arrays(["a"], [1], array("d", [float("nan")]), 10)
    with pytest.raises(ValueError, match=r"duplicate fragment_id 'a' at rows\[0\] and rows\[1\]"):
        service.compress_arrays(["a", "a"], [1, 1], [0.5, 0.5], 10)
    with pytest.raises(
        TypeError,
        match=r"^token_counts must hold integers or floats, got a buffer of format 'c' \(bytes\)$",
    ):
        service.compress_arrays(["a"], memoryview(b"x").cast("c"), [0.5], 10)
    with pytest.raises(
        TypeError,
        match=r"^relevance_scores must be one-dimensional, got a buffer with 2 dimensions$",
    ):
        service.compress_arrays(["a"], [1], memoryview(b"xy").cast("B", (1, 2)), 10)
    with pytest.raises(TypeError, match=r"^rows\[0\]: fragment_id must be a str"):
        service.compress_arrays([b"a"], [1], [0.5], 10)
