"""The timer: calls timed side by side, and a duration written in the unit that reads best."""

from __future__ import annotations

import time
from collections.abc import Callable

_MIN_TOTAL_SECONDS = 0.2
_BATCH_SECONDS = 0.002
_MAX_TURN_SECONDS = 0.25
_MAX_ROUNDS = 200


def best_times(*calls: Callable[[], object]) -> list[float]:
    """Seconds per call of each of `calls`, timed side by side.

    The calls take turns, round after round, so that a slow moment of the machine falls on
    all of them alike. Each turn lasts about as long as the slowest call (at most 0.25 s) and
    times batches of about 2 ms (one call, for slower calls) one by one, so that a fast call
    is timed as many times as fit and a slow one once; the best batch counts. At least 3
    rounds and about 0.2 s in all.
    """
    estimates = []
    for call in calls:
        start = time.perf_counter()
        call()
        estimates.append(time.perf_counter() - start)
    batches = [max(1, int(_BATCH_SECONDS / max(estimate, 1e-9))) for estimate in estimates]
    turn = min(max(estimates), _MAX_TURN_SECONDS)
    best = [float("inf")] * len(calls)
    spent = 0.0
    rounds = 0
    while rounds < _MAX_ROUNDS and (rounds < 3 or spent < _MIN_TOTAL_SECONDS):
        for position, (call, batch) in enumerate(zip(calls, batches)):
            turn_start = time.perf_counter()
            while True:
                start = time.perf_counter()
                for _ in range(batch):
                    call()
                end = time.perf_counter()
                best[position] = min(best[position], (end - start) / batch)
                if end - turn_start >= turn - best[position] * batch / 2:
                    break
            spent += time.perf_counter() - turn_start
        rounds += 1
    return best


def duration(seconds: float) -> str:
    """Seconds in the unit that reads best: `1.23 s`, `456 ms`, `7.8 us`, `90 ns`."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
