"""A library call long enough to be interrupted midway: `python interrupted_midway.py KIND BACKEND`.

KIND is `count` (one long text), `count_many` (many texts, on several threads), `explain`
(three hundred thousand fragments, a decision for each), or a strategy (`greedy`,
`density`, `optimal`) run by `compress_arrays` on two million rows (two hundred thousand on
the Python backend) with a budget that keeps a third of the tokens; `variants` is `greedy`
on those rows with a third of them in variant sets of three.

Runs the call twice uninterrupted and prints `took SECONDS` (the quicker run), then `ready`,
and runs it again: when Ctrl-C stops it, prints `interrupted SECONDS` (how long the call ran)
and `at MONOTONIC` (`time.monotonic()` just after, a clock the parent shares); `finished` if
nothing did.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from skeleton_compressor import ContextFragment, SkeletonCompressorService, TokenCounter

WORDS = "alpha beta gamma delta () x1\n"


def long_call(kind: str, backend: str) -> Callable[[], Any]:
    if kind == "count":
        text = WORDS * 1_500_000
        counter = TokenCounter()
        return lambda: counter.count(text)
    if kind == "count_many":
        texts = [WORDS * 40] * 40_000
        counter = TokenCounter()
        return lambda: counter.count_many(texts)
    if kind == "explain":
        fragments = tuple(
            ContextFragment(f"src/module_{row:07d}.py", row % 2000 + 1, row % 997 / 997)
            for row in range(300_000)
        )
        explaining = SkeletonCompressorService(backend=backend)
        return lambda: explaining.explain(fragments, 100_000_000)
    rows = 2_000_000 if backend == "rust" else 200_000
    ids = [f"src/module_{row:07d}.py" for row in range(rows)]
    tokens = [row * 7919 % 2000 + 1 for row in range(rows)]
    scores = [row * 104_729 % 1_000_003 / 1_000_003 for row in range(rows)]
    budget = sum(tokens) // 3
    if kind == "variants":
        variants = [f"thing-{row // 9}" if row % 9 < 3 else None for row in range(rows)]
        greedy = SkeletonCompressorService(backend=backend)
        return lambda: greedy.compress_arrays(ids, tokens, scores, budget, variants=variants)
    service = SkeletonCompressorService(backend=backend, strategy=kind, max_work=None)
    return lambda: service.compress_arrays(ids, tokens, scores, budget)


def timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main(kind: str, backend: str) -> int:
    call = long_call(kind, backend)
    print(f"took {min(timed(call), timed(call))}", flush=True)
    print("ready", flush=True)
    started = time.perf_counter()
    try:
        call()
    except KeyboardInterrupt:
        ran = time.perf_counter() - started
        print(f"interrupted {ran}\nat {time.monotonic()}", flush=True)
        return 0
    print("finished", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
