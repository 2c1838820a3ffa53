"""Variants on both backends: `greedy` at a million fragments of which a third render things
in sets of two or three, beside the same fragments without `variant_of` (the plain path) and
a list comprehension reading the four fields. Run on two builds, `--benchmark-save` on one
and `--benchmark-compare` on the other give what the variant column costs the plain path."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
from conftest import rounds_for
from skeleton_compressor import ContextFragment, SkeletonCompressorService
from skeleton_compressor.cli.bench.fragments import tenth_of_tokens
from skeleton_compressor.cli.bench.variants import make_variant_fragments, read_variant_floor


@functools.cache
def variant_fragments(size: int, variants: bool) -> tuple[ContextFragment, ...]:
    return make_variant_fragments(size, variants=variants)


@pytest.mark.parametrize(
    "implementation",
    ["rust", "rust, no variant_of", "python", "python, no variant_of", "read-four-fields"],
)
@pytest.mark.parametrize("size", [100_000, 1_000_000])
def test_greedy_with_variants(benchmark, size: int, implementation: str) -> None:  # type: ignore[no-untyped-def]
    plain = implementation.endswith("no variant_of")
    fragments = variant_fragments(size, not plain)
    budget = tenth_of_tokens(fragments)
    benchmark.group = f"variants {size:>9,} fragments: a third in sets of 2 or 3, greedy"
    call: Callable[[], object]
    if implementation == "read-four-fields":
        call = lambda: read_variant_floor(fragments)  # noqa: E731
    else:
        service = SkeletonCompressorService(backend=implementation.split(",")[0])
        call = lambda: service.compress(fragments, budget)  # noqa: E731
    benchmark.pedantic(call, rounds=rounds_for(size), warmup_rounds=1)
