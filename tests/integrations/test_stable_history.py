"""The stable rule for chat histories on message shapes, framework-free: hand-worked
conversations growing turn by turn (marks, cuts inside a turn keeping its question, the
relevance packing when no mark fits), and the rule beside `pack_history` without it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import pytest
from skeleton_compressor.integrations._history import MessageShape, pack_history
from skeleton_compressor.integrations._packing import Packing
from skeleton_compressor.integrations._stable_history import (
    StablePacking,
    checked_step,
    pack_chat_history,
)


class _LyingFloat(float):
    """A float whose comparisons all say yes: its range is read on the float it holds."""

    def __lt__(self, other: object) -> bool:
        return True

    __le__ = __gt__ = __ge__ = __lt__


SYSTEM = MessageShape(pinned=True, system=True)
USER = MessageShape(opens_turn=True)
REPLY = MessageShape()


def call(*ids: str) -> MessageShape:
    return MessageShape(calls=ids)


def answer(*ids: str) -> MessageShape:
    return MessageShape(answers=ids)


def with_latest_user_pinned(shapes: Sequence[MessageShape]) -> list[MessageShape]:
    """The shapes a chat adapter gives: its latest user message pinned."""
    pinned = list(shapes)
    users = [index for index, shape in enumerate(shapes) if shape.opens_turn]
    if users:
        pinned[users[-1]] = shapes[users[-1]]._replace(pinned=True)
    return pinned


def pack(
    backend: str,
    shapes: Sequence[MessageShape],
    counts: Sequence[int],
    budget: int,
    step: float | None,
    **options: bool,
) -> StablePacking:
    return pack_chat_history(
        Packing(budget, len, backend=backend),  # type: ignore[arg-type]
        with_latest_user_pinned(shapes),
        counts,
        [(index + 1) / len(shapes) for index in range(len(shapes))],
        "messages",
        stable_step=step,
        **options,
    )


# A chat of short turns: the system prompt, then a question and a reply a turn.
CHAT = [SYSTEM, USER, REPLY, USER, REPLY, USER, REPLY, USER, REPLY, USER]
CHAT_TOKENS = [2, 3, 5, 3, 5, 3, 5, 3, 5, 3]


def test_a_conversation_that_fits_is_kept_whole(backend: str) -> None:
    packed = pack(backend, CHAT[:4], CHAT_TOKENS[:4], 20, 0.4)
    assert packed.kept == [0, 1, 2, 3]
    assert packed.stable_prefix == 4
    assert (packed.metadata.compressed_tokens, packed.metadata.original_tokens) == (13, 13)


def test_the_cut_moves_only_from_mark_to_mark(backend: str) -> None:
    # Budget 20, step 8. What the cuts leave out before them (the system prompt is kept, a
    # reply's question too): 0 at the first question, 8 at the second, 16 at the third, 24
    # at the fourth; those are the marks (a reply leaves out as much as its question).
    kept = [pack(backend, CHAT[:size], CHAT_TOKENS[:size], 20, 0.4).kept for size in (8, 9, 10)]
    # Eight messages (29 tokens): from the second question, 21; from the third, 13.
    assert kept[0] == [0, 5, 6, 7]
    # A reply appended (18 tokens): the same start, the history only grows.
    assert kept[1] == [0, 5, 6, 7, 8]
    # A question appended (21 tokens from the third question): on to the fourth.
    assert kept[2] == [0, 7, 8, 9]


def test_without_the_rule_the_start_moves_with_every_message(backend: str) -> None:
    kept = [pack(backend, CHAT[:size], CHAT_TOKENS[:size], 20, None).kept for size in (8, 9, 10)]
    # Greedy by recency, started again on the turn it begins in.
    assert kept == [[0, 3, 5, 6, 7], [0, 5, 6, 7, 8], [0, 5, 7, 8, 9]]
    assert pack(backend, CHAT[:8], CHAT_TOKENS[:8], 20, None).stable_prefix == 1


def test_the_rule_reports_the_relevance_packings_metadata_fields(backend: str) -> None:
    packed = pack(backend, CHAT[:8], CHAT_TOKENS[:8], 20, 0.4)
    metadata = packed.metadata
    assert (metadata.original_tokens, metadata.compressed_tokens) == (29, 13)
    assert (metadata.fragments_total, metadata.fragments_kept) == (8, 4)
    assert metadata.ratio == 13 / 29 and metadata.skeleton_budget == 20
    assert metadata.value_kept == pytest.approx((1 + 6 + 7 + 8) / 8)
    assert metadata.value_bound is not None and metadata.value_bound >= metadata.value_kept


# An agent's long turn: one question, then tool calls with outputs of 10 tokens.
AGENT = [SYSTEM, USER, call("a"), answer("a"), call("b"), answer("b"), call("c"), answer("c")]
AGENT_TOKENS = [2, 3, 2, 10, 2, 10, 2, 10]


def test_a_cut_inside_a_turn_keeps_its_question(backend: str) -> None:
    # Budget 30, step 12: marks at the question (0 left out), at the call "b" (12), at "c".
    packed = pack(backend, AGENT, AGENT_TOKENS, 30, 0.4)
    assert packed.kept == [0, 1, 4, 5, 6, 7]
    assert packed.metadata.compressed_tokens == 29
    grown = pack(backend, [*AGENT, call("d"), answer("d")], [*AGENT_TOKENS, 2, 10], 30, 0.4)
    assert grown.kept == [0, 1, 6, 7, 8, 9]


def test_when_no_mark_fits_the_relevance_packing_takes_over(backend: str) -> None:
    shapes = [SYSTEM, USER, REPLY, USER, call("a"), answer("a")]
    counts = [2, 3, 3, 3, 2, 40]  # the tool output alone is over the budget
    packed = pack(backend, shapes, counts, 20, 0.25)
    assert (packed.kept, packed.stable_prefix) == ([0, 1, 2, 3], 1)
    reference = pack_history(
        Packing(20, len, backend=backend),  # type: ignore[arg-type]
        with_latest_user_pinned(shapes),
        counts,
        [(index + 1) / 6 for index in range(6)],
        "messages",
    )
    assert (packed.kept, packed.metadata) == reference


def test_no_cut_leaves_part_of_a_pinned_tool_call_out(backend: str) -> None:
    # The pinned answer's call comes before the second question: from that question the
    # history would fit (7 tokens) without the call, and from the first it is over budget.
    shapes = [USER, call("a"), USER, REPLY, MessageShape(pinned=True, answers=("a",))]
    counts = [2, 2, 2, 3, 2]
    packed = pack(backend, shapes, counts, 10, 0.1)
    # The relevance packing's: the call with its answer, the questions, the reply left out.
    assert (packed.kept, packed.stable_prefix) == ([0, 1, 2, 4], 0)


def test_without_start_on_turn_a_history_may_start_on_a_reply(backend: str) -> None:
    shapes = [SYSTEM, REPLY, REPLY, USER, REPLY]
    counts = [2, 5, 5, 3, 5]
    # Step 5: marks at the first reply (0 left out), the second (5), the question (10).
    packed = pack(backend, shapes, counts, 16, 0.3125, start_on_turn=False)
    assert packed.kept == [0, 2, 3, 4]
    on_turn = pack(backend, shapes, counts, 16, 0.3125)
    assert on_turn.kept == [0, 3, 4]


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (True, TypeError, "stable_step must be a real number, got True (bool)"),
        ("0.5", TypeError, "stable_step must be a real number, got '0.5' (str)"),
        (0, ValueError, "stable_step must be in (0, 1], got 0"),
        (1.5, ValueError, "stable_step must be in (0, 1], got 1.5"),
        (float("nan"), ValueError, "stable_step must be in (0, 1], got nan"),
        # Above 1, though its float is 1.0.
        (Fraction(2**60 + 1, 2**60), ValueError, "stable_step must be in (0, 1], got Fraction("),
        (_LyingFloat(1.5), ValueError, "stable_step must be in (0, 1], got 1.5"),
    ],
)
def test_a_bad_step_is_named(value: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        checked_step(value)
    assert str(raised.value).startswith(message)


def test_a_step_is_read_as_a_float() -> None:
    assert checked_step(1) == 1.0 and type(checked_step(1)) is float
    # Above 0, though its float is 0.0: the smallest float above 0.
    assert checked_step(Fraction(1, 10**400)) == math.nextafter(0.0, 1.0)
