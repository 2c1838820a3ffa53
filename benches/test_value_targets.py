"""The value strategies' targets, measured side by side in one run (best of several calls).

`density` and `optimal` against `greedy` on the set they are judged on (token counts
log-uniform 1..2,000, relevance uniform, a tenth of the tokens as the budget), each against
its own fallback, `optimal` on Pisinger's instance classes, and how soon Ctrl-C stops a long
`optimal` call.
"""

from __future__ import annotations

import functools
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from skeleton_compressor import ContextFragment, SkeletonCompressorService
from skeleton_compressor.cli.bench.fragments import (
    make_knapsack_fragments,
    make_value_fragments,
    tenth_of_tokens,
)
from skeleton_compressor.cli.bench.timing import best_times
from support.ctrl_c import as_a_terminal_delivers

MILLION = 1_000_000
RUST = {
    s: SkeletonCompressorService(backend="rust", strategy=s)
    for s in ("greedy", "density", "optimal")
}
PYTHON = {
    s: SkeletonCompressorService(backend="python", strategy=s) for s in ("density", "optimal")
}


@functools.cache
def value_set(size: int) -> tuple[tuple[ContextFragment, ...], int]:
    fragments = make_value_fragments(size)
    return fragments, tenth_of_tokens(fragments)


def test_value_strategies_against_greedy_at_a_million() -> None:
    fragments, budget = value_set(MILLION)
    greedy, density, optimal = best_times(
        *(lambda s=s: RUST[s].compress(fragments, budget) for s in ("greedy", "density", "optimal"))
    )
    kept = {
        s: RUST[s].compress(fragments, budget).metadata for s in ("greedy", "density", "optimal")
    }
    print(
        f"\n1M: greedy {greedy:.4f}s density {density:.4f}s ({density / greedy:.2f}x)"
        f" optimal {optimal:.4f}s ({optimal / greedy:.2f}x); value kept of the bound: "
        + ", ".join(f"{s} {m.value_kept / m.value_bound:.4f}" for s, m in kept.items())
    )
    assert density / greedy <= 1.5, f"density {density / greedy:.2f}x greedy"
    assert optimal / greedy <= 3, f"optimal {optimal / greedy:.2f}x greedy"


@pytest.mark.parametrize("strategy", ["density", "optimal"])
def test_value_strategies_against_their_fallback(strategy: str) -> None:
    fragments, budget = value_set(MILLION)
    rust, python = best_times(
        lambda: RUST[strategy].compress(fragments, budget),
        lambda: PYTHON[strategy].compress(fragments, budget),
    )
    print(f"\n1M {strategy}: rust {rust:.4f}s python {python:.3f}s ({python / rust:.1f}x)")
    assert python / rust >= 15, f"only {python / rust:.1f}x faster than the fallback"


def test_fallback_optimal_at_ten_thousand() -> None:
    fragments, budget = make_knapsack_fragments(10_000, "uncorrelated")
    start = time.perf_counter()
    PYTHON["optimal"].compress(fragments, budget)
    seconds = time.perf_counter() - start
    print(f"\nfallback optimal, 10k uncorrelated: {seconds:.3f}s")
    assert seconds <= 5


@pytest.mark.parametrize(
    ("kind", "size", "limit"),
    [("uncorrelated", 100_000, 0.1), ("weakly", 100_000, 0.1), ("strongly", 10_000, 1.0)],
)
def test_optimal_on_knapsack_classes(kind: str, size: int, limit: float) -> None:
    fragments, budget = make_knapsack_fragments(size, kind)
    optimal = RUST["optimal"]
    start = time.perf_counter()
    result = optimal.compress(fragments, budget)
    seconds = time.perf_counter() - start
    metadata = result.metadata
    print(
        f"\noptimal, {size:,} {kind}: {seconds:.3f}s,"
        f" {metadata.value_kept / metadata.value_bound:.6f} of the bound"
    )
    assert seconds <= limit


INTERRUPTED_CALL = Path(__file__).resolve().parents[1] / "tests" / "support" / "interrupted_call.py"


def answer_to_ctrl_c(backend: str, size: int) -> float:
    """Seconds from SIGINT to the child's word that the call stopped."""
    command = [sys.executable, str(INTERRUPTED_CALL), backend, str(size)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, preexec_fn=as_a_terminal_delivers
    ) as child:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(0.5)
        start = time.perf_counter()
        child.send_signal(signal.SIGINT)
        answer = child.stdout.readline()
        seconds = time.perf_counter() - start
        assert answer == "interrupted\n"
    return seconds


# 15,000 fragments run with the GIL held, 30,000 with it released.
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.parametrize("size", [15_000, 30_000])
@pytest.mark.parametrize("backend", ["rust", "python"])
def test_ctrl_c_is_answered_within_a_tenth_of_a_second(backend: str, size: int) -> None:
    answers = [answer_to_ctrl_c(backend, size) for _ in range(3)]
    print(f"\n{backend} {size:,}: Ctrl-C answered in " + ", ".join(f"{s:.4f}s" for s in answers))
    assert max(answers) <= 0.1
