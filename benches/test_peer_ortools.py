"""`optimal` against OR-Tools' knapsack solver on Pisinger's instance classes.

Uncorrelated, weakly, strongly, inverse strongly and almost strongly correlated, and subset
sum (`make_knapsack_fragments`), R = 1,000 and 10,000, capacity half the tokens, five seeds,
at 1,000 and 10,000 fragments. OR-Tools gets the same instance as the contract sees it: each
relevance as `round(relevance * 2**32)` value units, so that where both finish exact their
values must agree. Its branch-and-bound solver, the fastest of its knapsack solvers at these
sizes (its dynamic programs fill a table of one cell per fragment and token of the budget:
30 s and more at 1,000 fragments), runs with a 10 s limit. Each call in turn in one process,
best of three where a call takes under a tenth of a second. Each is timed from the lists it
takes: ours reads the fragments, OR-Tools' is made and given its lists (its solve alone took
0.1 to 1.3 ms of 2.3 to 3.6 ms at 1,000 uncorrelated fragments).

Targets (issue: `optimal` never runs away): exact at 10,000 within 50 ms on every class and
seed but subset sum, which within 0.2 s; never slower than OR-Tools where both finish exact.

OR-Tools is no dependency: the module skips unless it is installed (in a virtualenv of its
own, say, one that also sees this package).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from skeleton_compressor import ContextFragment, SkeletonCompressorService
from skeleton_compressor.cli.bench.fragments import KNAPSACK_CLASSES, make_knapsack_fragments

knapsack_solver = pytest.importorskip("ortools.algorithms.python.knapsack_solver")

OPTIMAL = SkeletonCompressorService(backend="rust", strategy="optimal")
UNITS = 2**32
SEEDS = range(5)
PEER_SECONDS = 10.0


def value_units(fragments: tuple[ContextFragment, ...]) -> list[int]:
    return [round(fragment.relevance_score * UNITS) for fragment in fragments]


def best_of_three(call: Callable[[], tuple[float, Any]]) -> tuple[float, Any]:
    """The fewest seconds of up to three calls (one where the first takes a tenth of a second
    or more), and what the last returned; each call gives its own seconds."""
    best = float("inf")
    for _ in range(3):
        seconds, answer = call()
        best = min(best, seconds)
        if best >= 0.1:
            break
    return best, answer


def ours(fragments: tuple[ContextFragment, ...], budget: int) -> tuple[float, Any]:
    start = time.perf_counter()
    result = OPTIMAL.compress(fragments, budget)
    return time.perf_counter() - start, result


def branch_and_bound(
    values: list[int], tokens: list[int], budget: int
) -> tuple[float, tuple[int, bool]]:
    """OR-Tools' branch and bound, timed from its lists as ours is from its fragments: the
    value it found, and whether it proved it optimal."""
    start = time.perf_counter()
    solver = knapsack_solver.KnapsackSolver(
        knapsack_solver.SolverType.KNAPSACK_MULTIDIMENSION_BRANCH_AND_BOUND_SOLVER, "peer"
    )
    solver.init(values, [tokens], [budget])
    solver.set_time_limit(PEER_SECONDS)
    value = solver.solve()
    return time.perf_counter() - start, (value, solver.is_solution_optimal())


@pytest.mark.parametrize("spread", [1_000, 10_000])
@pytest.mark.parametrize("kind", KNAPSACK_CLASSES)
@pytest.mark.parametrize("size", [1_000, 10_000])
def test_optimal_against_ortools(size: int, kind: str, spread: int) -> None:
    missed = []
    rows = []
    for seed in SEEDS:
        fragments, budget = make_knapsack_fragments(size, kind, seed, spread)
        values, tokens = value_units(fragments), [f.token_count for f in fragments]
        mine, result = best_of_three(partial(ours, fragments, budget))
        theirs, (value, proved) = best_of_three(partial(branch_and_bound, values, tokens, budget))
        exact = result.metadata.exact
        rows.append(
            f"seed {seed}: ours {mine:.4f}s{'' if exact else ' (not exact)'},"
            f" OR-Tools {theirs:.4f}s{'' if proved else ' (not proved)'}"
        )
        if exact and proved:
            kept = sum(value_units(result.fragments))
            assert kept == value, f"seed {seed}: OR-Tools found {value}, we kept {kept}"
            if mine > theirs:
                missed.append(f"seed {seed}: {mine:.4f}s, slower than OR-Tools' {theirs:.4f}s")
        limit = 0.2 if kind == "subset_sum" else 0.05
        if size == 10_000 and not (exact and mine <= limit):
            missed.append(f"seed {seed}: {mine:.3f}s, exact {exact} (target {limit}s)")
    print(f"\n{size:,} {kind}, R = {spread:,}:\n  " + "\n  ".join(rows))
    assert not missed, "; ".join(missed)
