"""Both backends timed on generated fragment sets: the sets, the timer and the figures of
`skeleton-compressor bench` (whose options are in `bench_command`)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, TextIO

from ..service import SkeletonCompressorService
from ..types import ContextFragment

DEFAULT_SIZES = (1, 10, 100, 1_000, 100_000, 1_000_000)
_MIN_TOTAL_SECONDS = 0.2
_BATCH_SECONDS = 0.002
_MAX_TURN_SECONDS = 0.25
_MAX_ROUNDS = 200


# How the generated relevance scores look, and what the table says about each.
SCORE_SHAPES = {
    "random": "uniform in [0, 1)",
    "levels": "0, 0.25, 0.5, 0.75 or 1.0 at random",
    "equal": "all 0.5",
}


def make_fragments(
    size: int, seed: int = 0, *, scores: str = "random"
) -> tuple[ContextFragment, ...]:
    """Token counts 1 to 500, unique ids in shuffled order, relevance shaped by `scores`.

    `random`: uniform in [0, 1), so scores never tie. `levels`: one of five levels (0, 0.25,
    0.5, 0.75, 1.0) at random, as LLM-rated scores look. `equal`: every score 0.5. For a
    given size and seed the shapes share ids, token counts and order: the level is taken from
    the same random draw the `random` score is, so only the score differs. Every score is its
    own float object, as scores read from JSON are.
    """
    if scores not in SCORE_SHAPES:
        raise ValueError(f"scores must be one of {', '.join(SCORE_SHAPES)}, got {scores!r}")
    rng = random.Random(seed)
    numbers = list(range(size))
    rng.shuffle(numbers)
    fragments = []
    for number in numbers:
        tokens, draw = rng.randint(1, 500), rng.random()
        if scores == "levels":
            score = int(draw * 5) / 4  # a new float object each time
        elif scores == "equal":
            score = draw * 0.0 + 0.5  # 0.5, a new float object each time
        else:
            score = draw
        fragments.append(ContextFragment(f"fragment-{number:08d}", tokens, score))
    return tuple(fragments)


def make_value_fragments(size: int, seed: int = 0) -> tuple[ContextFragment, ...]:
    """The set the value strategies are judged on: token counts log-uniform from 1 to 2,000
    (many small fragments, a few large ones), relevance uniform in [0, 1) and unrelated to
    size."""
    rng = random.Random(seed)
    return tuple(
        ContextFragment(f"fragment-{number:08d}", round(2000 ** rng.random()), rng.random())
        for number in range(size)
    )


KNAPSACK_CLASSES = ("uncorrelated", "weakly", "strongly")


def make_knapsack_fragments(
    size: int, kind: str, seed: int = 0, spread: int = 1000
) -> tuple[tuple[ContextFragment, ...], int]:
    """Pisinger's classic instance classes as fragments, with a budget of half the tokens:
    token counts uniform in 1..spread; profit uniform in 1..spread (`uncorrelated`), within
    spread/10 of the tokens (`weakly`), or the tokens plus spread/10 (`strongly`); relevance
    is the profit over the largest possible one."""
    if kind not in KNAPSACK_CLASSES:
        raise ValueError(f"kind must be one of {', '.join(KNAPSACK_CLASSES)}, got {kind!r}")
    rng = random.Random(seed)
    tenth = spread // 10
    fragments = []
    for number in range(size):
        tokens = rng.randint(1, spread)
        if kind == "uncorrelated":
            profit = rng.randint(1, spread)
        elif kind == "weakly":
            profit = max(1, rng.randint(tokens - tenth, tokens + tenth))
        else:
            profit = tokens + tenth
        fragments.append(ContextFragment(f"item-{number:08d}", tokens, profit / (spread + tenth)))
    return tuple(fragments), sum(f.token_count for f in fragments) // 2


POLICY_FLOOR = 0.2


def make_policy_fragments(
    size: int, seed: int = 0, *, shared_names: bool = False
) -> tuple[ContextFragment, ...]:
    """`make_fragments` with a selection policy's fields: a tenth of the fragments required,
    and half of them in groups of 1 to 5 members, spread over the input. Made in input order,
    as a reader of JSON Lines would make them: each fragment with its own group-name string,
    made with it (so they sit in memory in that order).

    With `shared_names`, the members of a group share one name string, and the names are
    made group by group, before the fragments and in no order of theirs: reading them then
    jumps all over memory."""
    rng = random.Random(seed + 1)
    positions = list(range(size))
    rng.shuffle(positions)
    group_of: list[int | None] = [None] * size
    grouped = positions[: size // 2]
    names: dict[int, str] = {}
    at = 0
    while at < len(grouped):
        members = grouped[at : at + rng.randint(1, 5)]
        for position in members:
            group_of[position] = at
        if shared_names:
            names[at] = f"group-{at}"
        at += len(members)
    required = [False] * size
    for position in positions[size // 2 : size // 2 + size // 10]:
        required[position] = True
    return tuple(
        ContextFragment(
            fragment.fragment_id,
            fragment.token_count,
            fragment.relevance_score,
            required=pinned,
            group=None if group is None else names.get(group) or f"group-{group}",
        )
        for fragment, pinned, group in zip(make_fragments(size, seed), required, group_of)
    )


def read_policy_floor(
    fragments: tuple[ContextFragment, ...],
) -> list[tuple[str, int, float, bool, str | None]]:
    """The least any code taking fragments with a policy must do: read five fields of each."""
    return [
        (f.fragment_id, f.token_count, f.relevance_score, f.required, f.group) for f in fragments
    ]


def tenth_of_tokens(fragments: tuple[ContextFragment, ...]) -> int:
    return sum(fragment.token_count for fragment in fragments) // 10


def read_floor(fragments: tuple[ContextFragment, ...]) -> list[tuple[str, int, float]]:
    """The least any code taking Python objects must do: read three fields of each."""
    return [(f.fragment_id, f.token_count, f.relevance_score) for f in fragments]


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


def measure(
    size: int, progress: TextIO, scores: str = "random", strategy: str = "greedy"
) -> dict[str, Any]:
    label = f"bench: {size:,} fragments, {scores} scores, {strategy}"
    progress.write(f"{label}: generating\n")
    fragments = make_fragments(size, scores=scores)
    budget = tenth_of_tokens(fragments)
    rust = SkeletonCompressorService(backend="rust", strategy=strategy)
    python = SkeletonCompressorService(backend="python", strategy=strategy)
    progress.write(f"{label}: checking both backends agree\n")
    expected = python.compress(fragments, budget)
    got = rust.compress(fragments, budget)
    if got != expected or any(a is not b for a, b in zip(got.fragments, expected.fragments)):
        raise AssertionError(f"backends disagree on {size} fragments, {scores} scores")
    progress.write(f"{label}: timing\n")
    rust_seconds, python_seconds, floor_seconds = best_times(
        lambda: rust.compress(fragments, budget),
        lambda: python.compress(fragments, budget),
        lambda: read_floor(fragments),
    )
    kept, bound = got.metadata.value_kept or 0.0, got.metadata.value_bound or 0.0
    return {
        "size": size,
        "scores": scores,
        "strategy": strategy,
        "value_kept_of_bound": kept / bound if bound else 1.0,
        "rust_seconds": rust_seconds,
        "python_seconds": python_seconds,
        "read_floor_seconds": floor_seconds,
        "speedup": python_seconds / rust_seconds,
        "rust_over_floor": rust_seconds / floor_seconds,
    }


def duration(seconds: float) -> str:
    """Seconds in the unit that reads best: `1.23 s`, `456 ms`, `7.8 us`, `90 ns`."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_table(rows: list[dict[str, Any]]) -> str:
    """The figures as a table, under a line naming the score shape(s) measured."""
    shapes = dict.fromkeys(row.get("scores", "random") for row in rows)
    title = "scores: " + "; ".join(f"{shape} ({SCORE_SHAPES[shape]})" for shape in shapes)
    header = (
        "fragments",
        "strategy",
        "value / bound",
        "rust",
        "python",
        "speed-up",
        "rust / read floor",
    )
    lines = [
        (
            f"{row['size']:,}",
            row.get("strategy", "greedy"),
            f"{row.get('value_kept_of_bound', 1.0):.4f}",
            duration(row["rust_seconds"]),
            duration(row["python_seconds"]),
            f"{row['speedup']:.1f}x",
            f"{row['rust_over_floor']:.2f}",
        )
        for row in rows
    ]
    widths = [max(len(cell) for cell in column) for column in zip(header, *lines)]
    return "\n".join(
        [
            title,
            *(
                "  ".join(cell.rjust(width) for cell, width in zip(line, widths))
                for line in (header, *lines)
            ),
        ]
    )
