"""`optimal` never runs away: on the adversarial families it returns within its work limit
(`max_work`), with `metadata.exact` telling whether it finished and never less value than
`density`'s; the limit is checked, passed through turns and siblings, and deterministic."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from skeleton_compressor import (
    DEFAULT_MAX_WORK,
    Child,
    ContextFragment,
    SkeletonCompressorService,
    compress,
    compress_arrays,
    explain,
)
from support.adversarial import adversarial

# Large enough that no exact solver finishes within the default limit.
LARGE = {"todd": 40, "avis": 400, "subset_sum": 20_000, "variants": 3000}
# Small enough that `optimal` finishes.
SMALL = {"todd": 8, "avis": 12, "subset_sum": 12, "variants": 4}


def _value(service: SkeletonCompressorService, fragments: tuple, budget: int) -> float:
    value = service.compress(fragments, budget).metadata.value_kept
    assert value is not None
    return value


@pytest.mark.parametrize("family", sorted(LARGE))
def test_adversarial_inputs_return_within_the_limit_flagged_and_no_worse_than_density(
    backend: str, family: str
) -> None:
    fragments, budget = adversarial(family, LARGE[family])
    optimal = SkeletonCompressorService(backend=backend, strategy="optimal")
    start = time.perf_counter()
    result = optimal.compress(fragments, budget)
    seconds = time.perf_counter() - start
    metadata = result.metadata
    density = SkeletonCompressorService(backend=backend, strategy="density")
    assert metadata.exact is False, f"{family} finished within the default limit"
    assert seconds < 10, f"{family}: {seconds:.1f}s"
    assert metadata.compressed_tokens <= budget
    assert metadata.value_kept is not None and metadata.value_bound is not None
    assert metadata.value_kept >= _value(density, fragments, budget)
    assert metadata.value_kept <= metadata.value_bound
    assert metadata.to_dict()["exact"] is False
    # Deterministic: the same call, the same selection.
    again = optimal.compress(fragments, budget)
    assert [f.fragment_id for f in again.fragments] == [f.fragment_id for f in result.fragments]


@pytest.mark.parametrize("family", sorted(SMALL))
def test_small_adversarial_inputs_finish_exact_as_without_a_limit(
    backend: str, family: str
) -> None:
    fragments, budget = adversarial(family, SMALL[family])
    limited = compress(fragments, budget, strategy="optimal", backend=backend)
    unlimited = compress(fragments, budget, strategy="optimal", backend=backend, max_work=None)
    assert limited.metadata.exact is True
    assert unlimited.metadata.exact is True
    assert limited == unlimited
    # Exact results are the same on both backends.
    other = "python" if backend == "rust" else "rust"
    assert compress(fragments, budget, strategy="optimal", backend=other) == limited


@pytest.mark.parametrize("family", sorted(LARGE))
def test_a_small_limit_stops_early_deterministically(backend: str, family: str) -> None:
    fragments, budget = adversarial(family, min(LARGE[family], 200))
    found = [
        compress(fragments, budget, strategy="optimal", backend=backend, max_work=5_000)
        for _ in range(2)
    ]
    assert found[0] == found[1]
    metadata = found[0].metadata
    assert metadata.exact is False
    density = compress(fragments, budget, strategy="density", backend=backend).metadata
    assert metadata.value_kept is not None and density.value_kept is not None
    assert metadata.value_kept >= density.value_kept
    assert metadata.compressed_tokens <= budget


def test_variants_stopped_short_keep_the_climbs_set_not_only_densitys(backend: str) -> None:
    # Sets of three strongly correlated renderings: `density` keeps the smallest of each
    # set (0.73 of the bound); the set found first, each set climbing its hull while a step
    # fits, is within a few units of the bound, and stands when the states stop short.
    fragments, budget = adversarial("variants", 1500)
    metadata = compress(
        fragments, budget, strategy="optimal", backend=backend, max_work=1_000
    ).metadata
    density = compress(fragments, budget, strategy="density", backend=backend).metadata
    assert metadata.exact is False
    assert metadata.value_kept is not None and metadata.value_bound is not None
    assert density.value_kept is not None
    assert density.value_kept < 0.75 * metadata.value_bound
    assert metadata.value_kept > 0.9999 * metadata.value_bound
    assert metadata.compressed_tokens <= budget


def test_every_other_strategy_and_a_finished_optimal_are_exact(backend: str) -> None:
    fragments = tuple(ContextFragment(f"f{i}", 10 + i, i / 10) for i in range(10))
    for strategy in ("greedy", "prefix", "density", "optimal"):
        result = compress(fragments, 40, strategy=strategy, backend=backend, max_work=1)
        assert result.metadata.exact is True or strategy == "optimal"
        assert result.metadata.to_dict()["exact"] is result.metadata.exact
    # Everything fits: no dynamic program, exact whatever the limit.
    everything = compress(fragments, 10_000, strategy="optimal", backend=backend, max_work=1)
    assert everything.metadata.exact is True


def test_the_limit_reaches_every_call(backend: str) -> None:
    fragments, budget = adversarial("subset_sum", 300)
    service = SkeletonCompressorService(backend=backend, strategy="optimal", max_work=2_000)
    assert service.max_work == 2_000
    assert "max_work=2000" in repr(service)
    assert service.compress(fragments, budget).metadata.exact is False
    assert service.explain(fragments, budget).result.metadata.exact is False
    [many] = service.compress_many(fragments, [budget])
    assert many.metadata.exact is False
    ids = [f.fragment_id for f in fragments]
    tokens = [f.token_count for f in fragments]
    scores = [f.relevance_score for f in fragments]
    arrays = compress_arrays(
        ids, tokens, scores, budget, strategy="optimal", backend=backend, max_work=2_000
    )
    assert arrays.metadata.exact is False
    assert explain(fragments, budget, strategy="optimal", backend=backend, max_work=2_000).result
    # A turn passes the limit through to each of its fills.
    turned = service.compress(fragments, budget, previous=fragments[:5], max_value_loss=0.1)
    assert turned.metadata.exact is False
    # Siblings too.
    siblings = service.compress_siblings(fragments, [Child(budget), Child(budget // 2)])
    assert all(child.metadata.exact is False for child in siblings.children)
    unlimited = SkeletonCompressorService(backend=backend, strategy="optimal", max_work=None)
    assert unlimited.max_work is None
    default = SkeletonCompressorService(backend=backend, strategy="optimal")
    assert default.max_work is not None and default.max_work > 2_000


@pytest.mark.parametrize(
    ("max_work", "error", "words"),
    [
        (0, ValueError, "max_work must be >= 1 or None, got 0"),
        (-5, ValueError, "max_work must be >= 1 or None, got -5"),
        (True, TypeError, "max_work must be an int or None, got bool"),
        (1.5, TypeError, "max_work must be an int or None, got float"),
        ("10", TypeError, "max_work must be an int or None, got str"),
    ],
)
def test_a_bad_limit_is_refused_naming_it(
    backend: str, max_work: object, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        SkeletonCompressorService(backend=backend, max_work=max_work)  # type: ignore[arg-type]
    fragments = (ContextFragment("a", 1, 0.5),)
    with pytest.raises(error, match=words):
        compress(fragments, 1, backend=backend, max_work=max_work)  # type: ignore[arg-type]


def test_the_default_limit_is_exported(backend: str) -> None:
    assert DEFAULT_MAX_WORK == 2**26
    assert SkeletonCompressorService(backend=backend).max_work == DEFAULT_MAX_WORK


def test_a_huge_limit_is_no_limit(backend: str) -> None:
    fragments, budget = adversarial("todd", 8)
    huge = compress(fragments, budget, strategy="optimal", backend=backend, max_work=10**30)
    assert huge == compress(fragments, budget, strategy="optimal", backend=backend, max_work=None)


MEMORY = """
import resource, sys, time
sys.path.insert(0, {tests!r})
from support.adversarial import adversarial
from skeleton_compressor import SkeletonCompressorService
fragments, budget = adversarial({family!r}, {size})
service = SkeletonCompressorService(backend={backend!r}, strategy="optimal")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
result = service.compress(fragments, budget)
seconds = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(seconds, (after - before) // 1024, result.metadata.exact)
"""


@pytest.mark.parametrize(
    ("family", "size"),
    [
        ("todd", 30),
        ("avis", 500),
        # A core of every item: a mask per item or per class count would take gigabytes.
        pytest.param("subset_sum", 100_000, marks=pytest.mark.slow),
    ],
)
def test_peak_memory_stays_bounded(backend: str, family: str, size: int) -> None:
    tests = str(Path(__file__).resolve().parents[1])
    script = MEMORY.format(tests=tests, family=family, size=size, backend=backend)
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    seconds, grown_mib, exact = float(output[0]), int(output[1]), output[2]
    assert exact == "False"
    assert grown_mib < 256, f"{family} {size} on {backend}: {grown_mib} MiB"
    assert seconds < 10
