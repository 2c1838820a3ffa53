"""The generated fragment sets the benchmarks time, and the least any caller must do to read
them (the read floors)."""

from __future__ import annotations

import random

from ...types import ContextFragment

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


KNAPSACK_CLASSES = ("uncorrelated", "weakly", "strongly", "inverse", "almost", "subset_sum")


def make_knapsack_fragments(
    size: int, kind: str, seed: int = 0, spread: int = 1000
) -> tuple[tuple[ContextFragment, ...], int]:
    """Pisinger's classic instance classes as fragments, with a budget of half the tokens.

    Token counts uniform in 1..spread, and the profit: uniform in 1..spread (`uncorrelated`),
    within spread/10 of the tokens (`weakly`), the tokens plus spread/10 (`strongly`), within
    spread/500 of that (`almost` strongly correlated), or the tokens themselves
    (`subset_sum`). `inverse` strongly correlated draws the profit uniform in 1..spread and
    makes the tokens the profit plus spread/10. Relevance is the profit over the largest the
    class can draw, as a user would scale it."""
    if kind not in KNAPSACK_CLASSES:
        raise ValueError(f"kind must be one of {', '.join(KNAPSACK_CLASSES)}, got {kind!r}")
    rng = random.Random(seed)
    tenth, five_hundredth = spread // 10, spread // 500
    largest = spread if kind in ("uncorrelated", "inverse", "subset_sum") else spread + tenth
    largest += five_hundredth if kind == "almost" else 0
    fragments = []
    for number in range(size):
        tokens = rng.randint(1, spread)
        if kind == "uncorrelated":
            profit = rng.randint(1, spread)
        elif kind == "weakly":
            profit = max(1, rng.randint(tokens - tenth, tokens + tenth))
        elif kind == "almost":
            profit = rng.randint(tokens + tenth - five_hundredth, tokens + tenth + five_hundredth)
        elif kind == "subset_sum":
            profit = tokens
        elif kind == "inverse":
            profit, tokens = tokens, tokens + tenth
        else:
            profit = tokens + tenth
        fragments.append(ContextFragment(f"item-{number:08d}", tokens, profit / largest))
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
