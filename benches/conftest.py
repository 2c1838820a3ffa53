"""Shared inputs for the benchmarks: generated once per size and reused."""

from __future__ import annotations

import functools
import os

import pytest
from skeleton_compressor import ContextFragment
from skeleton_compressor.bench import DEFAULT_SIZES, make_fragments, tenth_of_tokens

SIZES = tuple(
    int(size)
    for size in os.environ.get("BENCH_SIZES", ",".join(map(str, DEFAULT_SIZES))).split(",")
)


@functools.cache
def fragments_of(size: int) -> tuple[ContextFragment, ...]:
    return make_fragments(size)


@functools.cache
def budget_of(size: int) -> int:
    return tenth_of_tokens(fragments_of(size))


def rounds_for(size: int) -> int:
    """Large inputs take seconds on the Python backend; a few rounds are enough there."""
    return 3 if size >= 100_000 else 20 if size >= 1_000 else 200


@pytest.fixture(params=SIZES, ids=lambda size: f"{size}")
def size(request: pytest.FixtureRequest) -> int:
    return int(request.param)
