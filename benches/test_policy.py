"""The selection policy on both backends: compress at a million fragments with pins, groups
and a floor, beside a list comprehension reading the five fields; explain beside compress."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
from conftest import rounds_for
from skeleton_compressor import ContextFragment, SkeletonCompressorService
from skeleton_compressor.cli.bench.fragments import (
    POLICY_FLOOR,
    make_policy_fragments,
    read_policy_floor,
    tenth_of_tokens,
)


@functools.cache
def policy_fragments(size: int, shared_names: bool = False) -> tuple[ContextFragment, ...]:
    return make_policy_fragments(size, shared_names=shared_names)


@pytest.mark.parametrize("implementation", ["rust", "python", "read-five-fields"])
@pytest.mark.parametrize(
    ("size", "names"),
    [(100_000, "own"), (1_000_000, "own"), (1_000_000, "shared, made out of order")],
)
def test_compress_with_a_policy(benchmark, size: int, names: str, implementation: str) -> None:  # type: ignore[no-untyped-def]
    fragments = policy_fragments(size, shared_names=names != "own")
    budget = tenth_of_tokens(fragments) * 2
    benchmark.group = (
        f"policy {size:>9,} fragments: 10% required, half grouped, floor 0.2; group names: {names}"
    )
    call: Callable[[], object]
    if implementation == "read-five-fields":
        call = lambda: read_policy_floor(fragments)  # noqa: E731
    else:
        service = SkeletonCompressorService(backend=implementation, min_relevance=POLICY_FLOOR)
        call = lambda: service.compress(fragments, budget)  # noqa: E731
    benchmark.pedantic(call, rounds=rounds_for(size), warmup_rounds=1)


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("call", ["explain", "compress"])
def test_explain(benchmark, backend: str, call: str) -> None:  # type: ignore[no-untyped-def]
    fragments = policy_fragments(100_000)
    budget = tenth_of_tokens(fragments) * 2
    service = SkeletonCompressorService(backend=backend, min_relevance=POLICY_FLOOR)
    benchmark.group = "explain 100,000 fragments with a policy, beside compress"
    method = service.explain if call == "explain" else service.compress
    benchmark.pedantic(lambda: method(fragments, budget), rounds=3, warmup_rounds=1)
