"""What a large or long-running caller relies on: the GIL, memory, threads, leaks."""

from __future__ import annotations

import contextlib
import random
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from skeleton_compressor import ContextFragment, SkeletonCompressorService
from skeleton_compressor.cli.bench.fragments import make_fragments

# Millions of fragments, memory read from /proc, threads timed against each other.
pytestmark = pytest.mark.slow
linux_only = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="reads memory figures from /proc"
)


def resident_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def counting_during(call: Callable[[], object]) -> float:
    """How long a counting thread runs while `call` does, in seconds at its rate alone."""
    count = 0
    stop = threading.Event()

    def counter() -> None:
        nonlocal count
        while not stop.is_set():
            count += 1

    previous_interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    thread = threading.Thread(target=counter)
    thread.start()
    try:
        before = count
        time.sleep(0.2)  # the counter alone: its rate
        rate = (count - before) / 0.2
        before = count
        call()
        counted = count - before
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(previous_interval)
    return counted / rate


def tied_fragments(size: int) -> tuple[ContextFragment, ...]:
    """Equal scores, and ids whose first eight bytes take seven values: nearly every
    comparison is a tie settled on whole ids. In shuffled order, as real inputs come."""
    order = random.Random(0).sample(range(size), size)
    return tuple(ContextFragment(f"{k % 7}--------{k:08d}", 1 + k % 500, 0.5) for k in order)


@pytest.mark.parametrize("scores", ["random", "tied"])
def test_other_threads_run_while_rust_sorts(scores: str) -> None:
    size = 1_000_000
    fragments = make_fragments(size) if scores == "random" else tied_fragments(size)
    everything = sum(f.token_count for f in fragments)  # keeps all: the whole input is sorted
    rust = SkeletonCompressorService(backend="rust")
    rust.compress(fragments, everything)
    sorting, not_sorting = [], []
    for _ in range(3):  # in turns; a busy machine can shorten or lengthen any one of them
        sorting.append(counting_during(lambda: rust.compress(fragments, everything)))
        # The same call but for the sort (a budget of 0 ranks nothing): the counter runs
        # beside its duplicate check alone, and beside no more of the call above, were the
        # sort to hold the GIL.
        not_sorting.append(counting_during(lambda: rust.compress(fragments, 0)))
    # Holding the GIL throughout, the call would let the counter run for at most about one
    # switch interval (0.5 ms); released for the whole sort, it counts for tens of
    # milliseconds.
    assert max(sorting) > 0.015, (sorting, not_sorting)
    if scores == "tied":
        # Where the sort is most of the call (ties settled on whole ids), the counter runs
        # many times longer beside it than beside the call without it: the ties too are
        # settled without the GIL. (With random scores the sort is too short for a busy
        # machine to tell the two apart reliably.)
        assert max(sorting) > 2 * min(not_sorting), (sorting, not_sorting)


@linux_only
def test_peak_memory_per_fragment_at_a_million() -> None:
    script = textwrap.dedent(
        """
        import gc
        from skeleton_compressor import SkeletonCompressorService
        from skeleton_compressor.cli.bench.fragments import make_fragments, tenth_of_tokens

        def status(key):
            for line in open("/proc/self/status"):
                if line.startswith(key):
                    return int(line.split()[1]) * 1024

        fragments = make_fragments(1_000_000)
        budget = tenth_of_tokens(fragments)
        rust = SkeletonCompressorService(backend="rust")
        rust.compress(fragments[:1000], budget)
        gc.collect()
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # resets the peak (VmHWM) to the current size
        base = status("VmRSS:")
        result = rust.compress(fragments, budget)
        print((status("VmHWM:") - base) / len(fragments))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stderr
    bytes_per_fragment = float(completed.stdout)
    assert 0 < bytes_per_fragment < 100, bytes_per_fragment


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_threads_share_inputs_and_agree(backend: str) -> None:
    service = SkeletonCompressorService(backend=backend)
    inputs = [make_fragments(size, seed=size) for size in (0, 1, 50, 3_000, 40_000)]
    budgets = [0, 1, 500, 20_000, 10**9]
    expected = [[service.compress(f, b) for b in budgets] for f in inputs]

    def work(_: int) -> list[list[object]]:
        return [[service.compress(f, b) for b in budgets] for f in inputs]

    with ThreadPoolExecutor(max_workers=8) as pool:
        for answers in pool.map(work, range(8)):
            assert answers == expected


@linux_only
def test_no_leak_over_many_calls() -> None:
    rust = SkeletonCompressorService(backend="rust")
    fragments = make_fragments(12, seed=7)
    invalid = (*fragments[:3], ContextFragment("bad", -1, 0.5))

    def calls(times: int) -> None:
        for n in range(times):
            rust.compress(fragments, n % 4000)
            if n % 10 == 0:
                with contextlib.suppress(ValueError):
                    rust.compress(invalid, 100)

    calls(20_000)
    before = resident_bytes()
    calls(200_000)
    grown = resident_bytes() - before
    assert grown < 4 * 1024 * 1024, f"resident memory grew by {grown} bytes"
