"""`optimal` on the inputs that make every exact knapsack solver run away (Todd's and Avis's
subset sums, subset sums at scale, sets of strongly correlated variants): each call in a fresh
process, its time and the growth of the process's peak resident memory (`ru_maxrss`) across
the call, with the default work limit, on both backends. Targets: about a second, under 256
MiB, flagged `exact=False` where it did not finish (docs/performance.md#bounded-work)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TESTS = str(Path(__file__).resolve().parents[1] / "tests")

CALL = """
import resource, sys, time
sys.path.insert(0, {tests!r})
from support.adversarial import adversarial
from skeleton_compressor import SkeletonCompressorService
fragments, budget = adversarial({family!r}, {size})
optimal = SkeletonCompressorService(backend={backend!r}, strategy="optimal")
density = SkeletonCompressorService(backend={backend!r}, strategy="density")
by_density = density.compress(fragments, budget).metadata.value_kept
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
metadata = optimal.compress(fragments, budget).metadata
seconds = time.perf_counter() - start
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
share = metadata.value_kept / metadata.value_bound
print(seconds, grown, metadata.exact, metadata.value_kept >= by_density, share)
"""

CASES = [
    ("todd", 25),
    ("todd", 30),
    ("todd", 50),
    ("avis", 500),
    ("avis", 2000),
    ("subset_sum", 100_000),
    ("variants", 1500),
]


def measure(family: str, size: int, backend: str) -> tuple[float, float, str, str, float]:
    script = CALL.format(tests=TESTS, family=family, size=size, backend=backend)
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=600
    ).stdout.split()
    return float(output[0]), float(output[1]), output[2], output[3], float(output[4])


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize(("family", "size"), CASES)
def test_adversarial_families_within_the_default_limit(
    family: str, size: int, backend: str
) -> None:
    seconds, grown, exact, no_worse, share = measure(family, size, backend)
    print(
        f"\n{family} {size:,} on {backend}: {seconds:.3f}s, +{grown:.0f} MiB peak,"
        f" exact={exact}, {share:.6f} of the bound"
    )
    assert no_worse == "True"
    assert grown < 256, f"{grown:.0f} MiB"
    assert seconds < 3, f"{seconds:.2f}s"
