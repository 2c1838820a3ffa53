"""Siblings packed together (`compress_siblings`) on generated families: a parent whose
token counts are log-normal (median 250) and relevance Beta(2, 3), and children that rescore
it with Gaussian noise (spread 0.05, 0.1 or 0.2), each with a quarter of the context as its
budget, `optimal`, priced with `CachePricing()`.

Timed beside the N solo calls they stand on. `python benches/test_siblings.py` prints the
cost ratios (billed / uncached) at `max_value_loss` 0 and 0.01 and the mean value lost.
"""

from __future__ import annotations

import functools
import math
import random
import statistics
import sys
import time

import pytest
from skeleton_compressor import (
    CachePricing,
    Child,
    ContextFragment,
    Plan,
    SkeletonCompressorService,
)

SPREADS = (0.05, 0.1, 0.2)


@functools.cache
def family(
    size: int, spread: float, children: int = 5, seed: int = 0
) -> tuple[tuple[ContextFragment, ...], tuple[Child, ...]]:
    rng = random.Random(f"{size}-{spread}-{children}-{seed}")
    parent = tuple(
        ContextFragment(
            f"chunk-{i:06}",
            max(1, round(rng.lognormvariate(math.log(250), 0.75))),
            rng.betavariate(2, 3),
            f"chunk {i}",
        )
        for i in range(size)
    )
    budget = sum(f.token_count for f in parent) // 4
    kids = tuple(
        Child(
            budget,
            {
                f.fragment_id: min(1.0, max(0.0, f.relevance_score + rng.gauss(0.0, spread)))
                for f in parent
            },
        )
        for _ in range(children)
    )
    return parent, kids


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize(
    "call", ["solo calls", "rescoring and solo calls", "max_value_loss 0", "max_value_loss 0.01"]
)
@pytest.mark.parametrize("spread", SPREADS)
def test_siblings(benchmark, backend: str, call: str, spread: float) -> None:  # type: ignore[no-untyped-def]
    parent, children = family(1_000, spread)
    service = SkeletonCompressorService(backend=backend, strategy="optimal")
    benchmark.group = f"siblings: 1,000 fragments, 5 children, spread {spread}, {backend}"
    if call == "solo calls":
        contexts = [_rescored(parent, child) for child in children]

        def run() -> object:
            return [service.compress(c, k.skeleton_budget) for c, k in zip(contexts, children)]

    elif call == "rescoring and solo calls":
        # What a planner does without compress_siblings: each child's context made from the
        # parent's (as spawn_subplan makes it), then compressed.
        plan = Plan("parent", "", context=parent)

        def run() -> object:
            return [
                service.compress(plan.rescored(k.relevance), k.skeleton_budget) for k in children
            ]

    else:
        loss = float(call.split()[-1])

        def run() -> object:
            return service.compress_siblings(parent, children, max_value_loss=loss)

    benchmark.pedantic(run, rounds=5, warmup_rounds=1)


def _rescored(parent: tuple[ContextFragment, ...], child: Child) -> tuple[ContextFragment, ...]:
    from dataclasses import replace

    scores = child.relevance or {}
    return tuple(replace(f, relevance_score=scores[f.fragment_id]) for f in parent)


def figures(size: int = 200, seeds: int = 10) -> None:
    """The cost ratios and the value lost, over `seeds` families per spread."""
    service = SkeletonCompressorService(strategy="optimal")
    pricing = CachePricing()
    limit = (pricing.write + 4 * pricing.read) / 5
    print(f"{size} fragments, 5 children, optimal, CachePricing(); limit {limit:.3f}x")
    for spread in SPREADS:
        alone, exact, grown, lost = [], [], [], []
        for seed in range(seeds):
            parent, children = family(size, spread, seed=seed)
            zero = service.compress_siblings(parent, children, pricing=pricing)
            some = service.compress_siblings(parent, children, max_value_loss=0.01, pricing=pricing)
            alone.append(zero.independent_cost.ratio)
            exact.append(zero.cost.ratio)
            grown.append(some.cost.ratio)
            lost.extend(
                1 - (g.metadata.value_kept or 0) / (z.metadata.value_kept or 1)
                for g, z in zip(some.children, zero.children)
            )
        print(
            f"spread {spread}: alone {statistics.mean(alone):.3f}x, shared first "
            f"{statistics.mean(exact):.3f}x, max_value_loss 0.01 {statistics.mean(grown):.3f}x "
            f"(range {min(grown):.3f}-{max(grown):.3f}), mean value lost "
            f"{statistics.mean(lost):.4%} (most {max(lost):.4%})"
        )


def timings(size: int = 1_000, repeats: int = 5) -> None:
    """compress_siblings against the N solo calls it makes, best of `repeats`."""
    for backend in ("rust", "python"):
        service = SkeletonCompressorService(backend=backend, strategy="optimal")
        for spread in SPREADS:
            parent, children = family(size, spread)
            contexts = [_rescored(parent, child) for child in children]
            solo = _best(functools.partial(_solo_calls, service, contexts, children), repeats)
            zero = _best(functools.partial(service.compress_siblings, parent, children), repeats)
            some = _best(
                functools.partial(service.compress_siblings, parent, children, max_value_loss=0.01),
                repeats,
            )
            print(
                f"{backend} {size} fragments spread {spread}: solo calls {solo * 1e3:.1f} ms, "
                f"max_value_loss 0 {zero * 1e3:.1f} ms ({zero / solo:.1f}x), "
                f"0.01 {some * 1e3:.1f} ms ({some / solo:.1f}x)"
            )


def _solo_calls(
    service: SkeletonCompressorService,
    contexts: list[tuple[ContextFragment, ...]],
    children: tuple[Child, ...],
) -> object:
    return [service.compress(c, k.skeleton_budget) for c, k in zip(contexts, children)]


def _best(call, repeats: int) -> float:  # type: ignore[no-untyped-def]
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


if __name__ == "__main__":
    figures()
    if "--time" in sys.argv:
        timings()
