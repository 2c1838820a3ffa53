"""A long agent loop of turns (docs/turns.md), on both backends: each turn adds one to three
messages (sometimes a tool call and its result as a group), every fourth turn the scores
decay, and the oldest messages are dropped now and then; the budget binds. Every turn's
`compress(..., previous=<the last turn's fragments>)` equals the reference, and a turn that
only adds fragments fitting the room the last output left never breaks its prefix.

Why the last promise holds, and where: take `optimal` and no headroom. Every output keeps at
least (1 - eps) x V* (k >= 1 by the value test, or k = 0 and it is the call without
`previous`). A turn that only adds fragments N, fitting the room left and changing no score,
finds the whole last output reusable (matched, whole units in member order, eligible, within
budget), and its fill can keep N: worth at least (1 - eps) x V*_last + value(N), while V*
grew by at most value(N). So k = |R|. Under `greedy`, `prefix` or `density` V* can grow by
more (a new fragment reroutes the walk), and after a headroom fill the last output may keep
less than (1 - eps) x V*: there a turn may break the prefix, and only the reference holds.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest
from skeleton_compressor import ContextFragment, SkeletonResult, compress
from support.turns_reference import UNITS, TurnOutcome, reference_turn

F = ContextFragment
TURNS = 200
BUDGET = 400
FLOOR = 0.05
SCORES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _new_messages(rng: random.Random, turn: int, room: int) -> list[ContextFragment]:
    """One to three messages: half the time small enough to fit `room` together."""
    count = rng.randint(1, 3)
    if rng.random() < 0.5:
        cuts = sorted(rng.randint(0, room) for _ in range(count - 1))
        sizes = [rng.randint(0, b - a) for a, b in zip([0, *cuts], [*cuts, room])]
    else:
        sizes = [rng.randint(5, 120) for _ in range(count)]
    group = f"tool{turn}" if count >= 2 and rng.random() < 0.4 else None
    return [
        F(
            f"m{turn}.{j}",
            size,
            rng.choice(SCORES),
            f"message {turn}.{j}",
            group=group if j < 2 else None,
        )
        for j, size in enumerate(sizes)
    ]


def _check(
    got: SkeletonResult, context: tuple[ContextFragment, ...], expected: TurnOutcome
) -> None:
    assert [f.fragment_id for f in got.fragments] == [f.fragment_id for f in expected.fragments]
    assert all(a is b for a, b in zip(got.fragments, expected.fragments))
    metadata = got.metadata
    assert metadata.reused_tokens == expected.reused_tokens
    assert metadata.compressed_tokens == expected.compressed_tokens
    assert metadata.value_kept == math.fsum(f.relevance_score for f in expected.fragments)
    assert metadata.value_bound == expected.value_bound_units / UNITS
    bound = expected.value_bound_units
    assert metadata.kept_share == (expected.value_kept_units / bound if bound else 1.0)
    assert metadata.fragments_total == len(context)


@pytest.mark.parametrize(
    ("strategy", "order", "loss", "headroom"),
    [
        ("optimal", "ranking", 0.0, 0.0),
        ("optimal", "input", 0.01, 0.0),
        ("optimal", "edges", 0.3, 0.0),
        ("greedy", "ranking", 0.01, 0.1),
    ],
)
def test_a_long_loop_of_turns(
    backend: str, strategy: str, order: str, loss: float, headroom: float
) -> None:
    rng = random.Random(f"{strategy} {order}")
    context: list[ContextFragment] = [F("task", 40, 0.3, "the task", required=True)]
    last: tuple[ContextFragment, ...] = ()
    promised = strategy == "optimal" and headroom == 0.0
    kept_whole = cut = 0
    for turn in range(TURNS):
        changed = False
        if turn and turn % 4 == 0:
            context = [
                f if f.required else replace(f, relevance_score=round(f.relevance_score * 0.8, 4))
                for f in context
            ]
            changed = True
        if len(context) > 28:
            # The eight oldest messages go (the context is in arrival order).
            oldest = [f for f in context if not f.required][:8]
            context = [f for f in context if all(f is not old for old in oldest)]
            changed = True
        room = BUDGET - sum(f.token_count for f in last)
        new = _new_messages(rng, turn, room)
        context = [*context, *new]
        fits = sum(f.token_count for f in new) <= room
        fragments = tuple(context)
        got = compress(
            fragments,
            BUDGET,
            strategy=strategy,
            order=order,
            min_relevance=FLOOR,
            backend=backend,
            previous=last,
            max_value_loss=loss,
            headroom=headroom,
        )
        expected = reference_turn(
            fragments,
            BUDGET,
            last,
            max_value_loss=loss,
            headroom=headroom,
            strategy=strategy,
            order=order,
            min_relevance=FLOOR,
            backend=backend,
        )
        _check(got, fragments, expected)
        metadata = got.metadata
        assert metadata.compressed_tokens <= BUDGET
        assert metadata.reused_tokens is not None
        assert metadata.reused_tokens <= metadata.compressed_tokens
        if last and not changed and fits:
            if promised:
                assert got.fragments[: len(last)] == last
                assert all(a is b for a, b in zip(got.fragments, last))
                assert metadata.reused_tokens == sum(f.token_count for f in last)
            kept_whole += 1
        elif last and metadata.reused_tokens < sum(f.token_count for f in last):
            cut += 1
        last = got.fragments
    # The loop is what it says: many turns of only fitting additions, and others that cut.
    assert kept_whole >= 30
    assert cut >= 10
