"""Turns of an agent loop repacked with `previous=` (docs/turns.md), against the same calls
without it.

The loop: 200 turns; each adds one to three fragments (tokens log-normal around 250,
relevance uniform in [0.2, 1)), and every fragment's relevance decays 1.5% a turn; each turn
packs the whole context to the budget (8,000 or 16,000 tokens), `order="input"` or
`order="ranking"` (the order docs/turns.md advises for a loop). Priced with
`estimate_cost` at `CachePricing()` (write 1.25, read 0.1, 1,024 tokens at least). The
append-only limit prices the selections made without `previous` as if each turn appended
what it adds to the last turn's request: what it keeps of the last turn read, wherever it
stood, what it adds written.

`python benches/test_turns.py` prints the whole grid of `max_value_loss` and `headroom`.
"""

from __future__ import annotations

import functools
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import pytest
from skeleton_compressor import (
    CachePricing,
    ContextFragment,
    SkeletonCompressorService,
    estimate_cost,
)

BUDGETS = (8_000, 16_000)
LOSSES = (0.0, 0.01, 0.02, 0.05)
HEADROOMS = (0.0, 0.1, 0.2, 0.3)
ORDERS = ("input", "ranking")
# The targets: (cost ratio at most, value lost at most) at the best point of the grid.
TARGETS = {"greedy": (0.25, 0.01), "optimal": (0.45, 0.02)}
PRICING = CachePricing()


@functools.cache
def agent_loop(turns: int = 200, seed: int = 0) -> tuple[tuple[ContextFragment, ...], ...]:
    """Each turn's context: every fragment so far, rescored by its age."""
    rng = random.Random(seed)
    born: list[tuple[str, int, float, int]] = []
    contexts = []
    for turn in range(turns):
        for _ in range(rng.randint(1, 3)):
            tokens = max(1, round(rng.lognormvariate(math.log(250), 0.5)))
            born.append((f"t{turn:03}-{len(born):04}", tokens, rng.uniform(0.2, 1.0), turn))
        contexts.append(
            tuple(
                ContextFragment(id_, tokens, score * 0.985 ** (turn - at), f"text of {id_}")
                for id_, tokens, score, at in born
            )
        )
    return tuple(contexts)


class Run(NamedTuple):
    outputs: list[tuple[ContextFragment, ...]]
    value: float

    @property
    def cost(self) -> float:
        return estimate_cost(self.outputs, PRICING).ratio


def run_loop(
    strategy: str,
    budget: int,
    loss: float | None,
    headroom: float = 0.0,
    backend: str = "rust",
    order: str = "input",
) -> Run:
    """The loop's outputs and the value they kept; `loss` None: calls without `previous`."""
    service = SkeletonCompressorService(backend=backend, strategy=strategy, order=order)
    outputs: list[tuple[ContextFragment, ...]] = []
    value = 0.0
    for context in agent_loop():
        if loss is None or not outputs:
            result = service.compress(context, budget)
        else:
            result = service.compress(
                context, budget, previous=outputs[-1], max_value_loss=loss, headroom=headroom
            )
        outputs.append(result.fragments)
        value += result.metadata.value_kept or 0.0
    return Run(outputs, value)


def append_only_limit(outputs: Sequence[Sequence[ContextFragment]]) -> float:
    """Each turn's selection as if appended to the last turn's request: what it keeps of
    that request read from the cache, what it adds written."""
    billed, total = 0.0, 0
    before: set[tuple[str, int, str]] = set()
    for output in outputs:
        now = {(f.fragment_id, f.token_count, f.content): f.token_count for f in output}
        tokens = sum(now.values())
        added = sum(count for key, count in now.items() if key not in before)
        billed += PRICING.read * (tokens - added) + PRICING.write * added
        total += tokens
        before = set(now)
    return billed / total


class Point(NamedTuple):
    loss: float
    headroom: float
    cost: float
    value_lost: float


@functools.cache
def grid(strategy: str, budget: int, order: str) -> tuple[Run, tuple[Point, ...]]:
    without = run_loop(strategy, budget, None, order=order)
    points = []
    for loss in LOSSES:
        for headroom in HEADROOMS:
            run = run_loop(strategy, budget, loss, headroom, order=order)
            points.append(Point(loss, headroom, run.cost, 1 - run.value / without.value))
    return without, tuple(points)


def best_point(strategy: str, budget: int, order: str) -> Point:
    """The cheapest point within the value the target allows."""
    _, points = grid(strategy, budget, order)
    allowed = TARGETS[strategy][1]
    return min((p for p in points if p.value_lost <= allowed), key=lambda p: p.cost)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("strategy", sorted(TARGETS))
def test_turns_cost_target(strategy: str, budget: int, order: str) -> None:
    without, _ = grid(strategy, budget, order)
    best = best_point(strategy, budget, order)
    limit = append_only_limit(without.outputs)
    print(
        f"\n{strategy} budget {budget} order {order}: without previous {without.cost:.3f}x; best "
        f"{best.cost:.3f}x at max_value_loss {best.loss} headroom {best.headroom} "
        f"({best.value_lost:.2%} value lost); append-only limit {limit:.3f}x"
    )
    ceiling, _ = TARGETS[strategy]
    assert best.cost <= ceiling, f"{best.cost:.3f}x > {ceiling}x"


def test_both_backends_agree_on_the_loop() -> None:
    """The figures stand for both backends: the Python one keeps the same, turn by turn."""
    for strategy in ("greedy", "optimal"):
        rust = run_loop(strategy, 8_000, 0.02, 0.2)
        python = run_loop(strategy, 8_000, 0.02, 0.2, backend="python")
        assert [[f.fragment_id for f in o] for o in rust.outputs] == [
            [f.fragment_id for f in o] for o in python.outputs
        ]


@functools.cache
def timed_turn(size: int) -> tuple[tuple[ContextFragment, ...], tuple[ContextFragment, ...], int]:
    """A context of `size` fragments, the previous turn's output on it, and the budget: a
    tenth of the tokens, so that the run is long."""
    rng = random.Random(size)
    before = tuple(
        ContextFragment(
            f"f{i:07}", max(1, round(rng.lognormvariate(math.log(250), 0.5))), rng.random(), ""
        )
        for i in range(size)
    )
    budget = sum(f.token_count for f in before) // 10
    previous = SkeletonCompressorService(order="input").compress(before, budget).fragments
    # The next turn: relevance drifts, and a few new fragments arrive.
    now = tuple(
        ContextFragment(f.fragment_id, f.token_count, f.relevance_score * 0.985, f.content)
        for f in before
    ) + tuple(ContextFragment(f"new{i}", 250, 0.99, "") for i in range(3))
    return now, previous, budget


def best_of(call: Callable[[], object], repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(("size", "ceiling"), [(1_000, 3.0), (100_000, 5.0)])
@pytest.mark.parametrize("strategy", ["greedy", "optimal"])
def test_turns_time_target(strategy: str, size: int, ceiling: float) -> None:
    context, previous, budget = timed_turn(size)
    service = SkeletonCompressorService(backend="rust", strategy=strategy, order="input")
    repeats = 50 if size <= 1_000 else 5
    plain = best_of(lambda: service.compress(context, budget), repeats)
    reusing = best_of(
        lambda: service.compress(context, budget, previous=previous, max_value_loss=0.01),
        repeats,
    )
    print(
        f"\n{strategy} {size:,}: without previous {plain * 1e6:.0f} us, with "
        f"{reusing * 1e6:.0f} us ({reusing / plain:.2f}x)"
    )
    assert reusing / plain <= ceiling


def print_grid() -> None:
    for order in ORDERS:
        for strategy in sorted(TARGETS):
            for budget in BUDGETS:
                without, points = grid(strategy, budget, order)
                limit = append_only_limit(without.outputs)
                print(
                    f"order {order}, {strategy}, budget {budget}: without previous "
                    f"{without.cost:.3f}x, append-only limit {limit:.3f}x"
                )
                print("  max_value_loss headroom   cost  value lost  cost / limit")
                for p in points:
                    print(
                        f"  {p.loss:>14} {p.headroom:>8} {p.cost:6.3f}x {p.value_lost:10.2%}"
                        f" {p.cost / limit:12.2f}"
                    )


if __name__ == "__main__":
    print_grid()
    if "--time" in sys.argv:
        for size in (1_000, 100_000):
            for strategy in ("greedy", "optimal"):
                test_turns_time_target(strategy, size, math.inf)
