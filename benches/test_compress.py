"""compress on both backends, beside the floor any code taking Python objects must pay.

One group per size and score shape, so the table compares rust, python and the read floor
side by side, with random scores and with tied ones (five levels, or all equal).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import SCORES, budget_of, fragments_of, rounds_for
from skeleton_compressor import SkeletonCompressorService
from skeleton_compressor.cli.bench.fragments import read_floor


@pytest.mark.parametrize("implementation", ["rust", "python", "read-floor"])
@pytest.mark.parametrize("scores", SCORES)
def test_compress(benchmark, size: int, scores: str, implementation: str) -> None:  # type: ignore[no-untyped-def]
    fragments, budget = fragments_of(size, scores), budget_of(size, scores)
    benchmark.group = f"compress {size:>9,} fragments, {scores} scores"
    call: Callable[[], object]
    if implementation == "read-floor":
        call = lambda: read_floor(fragments)  # noqa: E731
    else:
        service = SkeletonCompressorService(backend=implementation)
        call = lambda: service.compress(fragments, budget)  # noqa: E731
    benchmark.pedantic(call, rounds=rounds_for(size), warmup_rounds=1)


BUDGETS = 20


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("call", ["compress_many x20", "compress x1"])
def test_compress_many(benchmark, size: int, backend: str, call: str) -> None:  # type: ignore[no-untyped-def]
    fragments = fragments_of(size)
    total = budget_of(size) * 10
    budgets = [total * k // 100 for k in range(1, BUDGETS + 1)]  # 1% to 20% of all tokens
    service = SkeletonCompressorService(backend=backend)
    benchmark.group = f"compress_many {size:>9,} fragments: {BUDGETS} budgets vs one at 10%"
    call_once: Callable[[], object]
    if call == "compress x1":
        call_once = lambda: service.compress(fragments, total // 10)  # noqa: E731
    else:
        call_once = lambda: service.compress_many(fragments, budgets)  # noqa: E731
    benchmark.pedantic(call_once, rounds=rounds_for(size), warmup_rounds=1)
