"""How the benchmarks time calls side by side, on a clock that only the calls move."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest
from skeleton_compressor.cli.bench import timing as bench


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=clock.perf_counter))
    return clock


def taking(clock: Clock, seconds: float, calls: list[int]) -> Callable[[], None]:
    def call() -> None:
        clock.now += seconds
        calls.append(1)

    return call


def test_a_fast_call_is_timed_as_often_as_a_turn_of_the_slowest_allows(clock: Clock) -> None:
    fast, slow = [], []
    best = bench.best_times(taking(clock, 0.01, fast), taking(clock, 0.1, slow))
    assert best == [pytest.approx(0.01), pytest.approx(0.1)]
    # A first call of each, then three rounds: ten of the fast call to one of the slow.
    assert (len(fast), len(slow)) == (1 + 3 * 10, 1 + 3)


def test_turns_last_at_most_a_quarter_second_and_rounds_are_at_least_three(
    clock: Clock,
) -> None:
    fast, slow = [], []
    best = bench.best_times(taking(clock, 0.05, fast), taking(clock, 2.0, slow))
    assert best == [pytest.approx(0.05), pytest.approx(2.0)]
    assert (len(fast), len(slow)) == (1 + 3 * 5, 1 + 3)


def test_tiny_calls_are_timed_in_batches_of_two_milliseconds(clock: Clock) -> None:
    # Powers of two, so that the clock adds up exactly.
    tiny, other = [], []
    best = bench.best_times(taking(clock, 2**-13, tiny), taking(clock, 2**-10, other))
    assert best == [2**-13, 2**-10]
    # Batches of 16 and 2 calls (2**-9 s each), one batch a turn, until 0.2 s are spent.
    rounds = 52
    assert (len(tiny), len(other)) == (1 + rounds * 16, 1 + rounds * 2)
