"""Shared inputs for the benchmarks: generated once per size and score shape, and reused."""

from __future__ import annotations

import functools
import os

import pytest
from skeleton_compressor import ContextFragment
from skeleton_compressor.cli.bench.figures import DEFAULT_SIZES
from skeleton_compressor.cli.bench.fragments import SCORE_SHAPES, make_fragments, tenth_of_tokens

SIZES = tuple(
    int(size)
    for size in os.environ.get("BENCH_SIZES", ",".join(map(str, DEFAULT_SIZES))).split(",")
)


# random (uniform in [0, 1), no ties), levels (five levels at random), equal (all 0.5).
SCORES = tuple(SCORE_SHAPES)


@functools.cache
def fragments_of(size: int, scores: str = "random") -> tuple[ContextFragment, ...]:
    return make_fragments(size, scores=scores)


@functools.cache
def budget_of(size: int, scores: str = "random") -> int:
    """A tenth of all tokens (the same for every score shape: only the scores differ)."""
    return tenth_of_tokens(fragments_of(size, scores))


def rounds_for(size: int) -> int:
    """Large inputs take seconds on the Python backend; a few rounds are enough there."""
    return 3 if size >= 100_000 else 20 if size >= 1_000 else 200


@pytest.fixture(params=SIZES, ids=lambda size: f"{size}")
def size(request: pytest.FixtureRequest) -> int:
    return int(request.param)
