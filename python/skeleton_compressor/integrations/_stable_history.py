"""The stable rule for chat histories: a packed history that each turn only appends to, until
the conversation outgrows the budget, when it starts later, at one of a few points the
conversation itself fixes. Providers cache the longest prefix a request repeats, so a history
that only grows is read back from the cache turn after turn.

Stateless: the points depend only on the history up to them, so a conversation that only
grows keeps them, and nothing is remembered between calls (or shared between conversations).

Cuts. A cut is a message the kept history may resume at: one that starts its tool unit (in no
tool group, or the first of its group) and, when a history must start on a turn, has a turn
at or before it. Its anchor is the latest message opening a turn at or before it (the cut
itself when it opens one). Cutting at u keeps the pinned messages before u that are in no
tool group, the anchor, and every message from u on but those of tool groups that begin
before u.

Marks. The tokens a cut leaves out before it grow along the history. The first cut is marked,
then each first cut that leaves out at least `step` tokens more than the last mark. The
history kept is that of the earliest mark that fits the budget (and leaves out no pinned tool
call). A mark only fits less as the conversation grows, so the choice only moves forward,
across marks a step of conversation apart: while it stays, each packing is the previous one
with the new messages appended, and it moves at most once per step of new conversation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from .. import _messages
from .._values import as_real, plain_real
from ..types import SkeletonMetadata
from ._history import History, MessageShape, of_whole_history, opens_turn
from ._packing import Packing

__all__ = ["DEFAULT_STEP", "StablePacking", "checked_step", "pack_chat_history"]

DEFAULT_STEP = 0.25
"""The step between marks, as a share of the budget (see docs/integrations/*.md for the
figures it was chosen by)."""


class StablePacking(NamedTuple):
    """The kept messages' indices (in input order), the metadata, and `stable_prefix`: how
    many of the kept messages the next packing starts with when the history grows only by
    messages that fit in the room this one leaves (`skeleton_budget - compressed_tokens`)."""

    kept: list[int]
    metadata: SkeletonMetadata
    stable_prefix: int


def checked_step(value: object) -> float:
    """`stable_step` as a float in (0, 1]; a TypeError or ValueError naming it otherwise."""
    step = as_real(value)
    if step is None:
        raise TypeError(f"stable_step must be a real number, got {_messages._typed(value)}")
    plain = plain_real(value)  # its own range, not its float's
    if 0 < plain <= 1:
        step = max(float(plain), _ABOVE_ZERO)
        if 0.0 < step <= 1.0:  # as a real number of another type says
            return step
    raise ValueError(f"stable_step must be in (0, 1], got {_messages.describe(value)}")


_ABOVE_ZERO = math.nextafter(0.0, 1.0)


def pack_chat_history(
    packing: Packing,
    shapes: Sequence[MessageShape],
    token_counts: Sequence[object],
    relevance_scores: Sequence[object],
    container: str,
    *,
    stable_step: float | None,
    start_on_turn: bool = True,
    ids: Sequence[str | None] | None = None,
    groups: Sequence[str | None] | None = None,
) -> StablePacking:
    """The history `pack_history` keeps when `stable_step` is None; else the stable rule's
    (the module's docstring), marks `stable_step` of the budget apart, and `pack_history`'s
    when no mark fits. Counts and scores are checked in every case, errors naming
    `<container>[i]`."""
    history = History.read(packing, shapes, token_counts, relevance_scores, container, ids, groups)
    whole = history.select_all()
    if stable_step is not None:
        budget = packing.skeleton_budget
        try:
            step = max(1, math.floor(stable_step * budget))
        except OverflowError:  # a budget past what a float holds: in integers
            numerator, denominator = stable_step.as_integer_ratio()
            step = max(1, numerator * budget // denominator)
        rows = _Cuts(history, start_on_turn).earliest_mark_fitting(step, budget)
        if rows is not None:
            return StablePacking(
                rows, of_whole_history(history.all_kept(rows), whole[1]), len(rows)
            )
    kept, metadata = history.by_relevance(whole, start_on_turn)
    return StablePacking(kept, metadata, _kept_for_good(kept, history))


def _kept_for_good(kept: Sequence[int], history: History) -> int:
    """How many of the conversation's first messages are pinned for good (its system prompts),
    which every packing of it starts with. A system prompt later on is kept too, but the
    messages before it may come back."""
    lead = 0
    for index in kept:
        if index != lead or not _pinned_for_good(history.shapes[index], history.groups[index]):
            break
        lead += 1
    return lead


def _pinned_for_good(shape: MessageShape, group: str | None) -> bool:
    # A pinned message that opens a turn (the latest user message), calls a tool or answers
    # one (the last message's partners), or is the last message is pinned only until the
    # conversation goes on.
    return shape.pinned and shape.system and not shape.opens_turn and group is None


class _Cuts:
    """The history's cuts, read in one pass up to the earliest mark that fits."""

    def __init__(self, history: History, start_on_turn: bool) -> None:
        self.shapes, self.groups, self.counts = history.shapes, history.groups, history.counts
        self.start_on_turn = start_on_turn
        first_of: dict[str, int] = {}
        for index, group in enumerate(self.groups):
            if group is not None:
                first_of.setdefault(group, index)
        self.first_of = first_of
        # A cut after this leaves out part of a pinned tool unit.
        self.latest_cut = min(
            (
                first_of[group]
                for shape, group in zip(self.shapes, self.groups)
                if shape.pinned and group is not None
            ),
            default=None,
        )

    def earliest_mark_fitting(self, step: int, budget: int) -> list[int] | None:
        """The rows the earliest mark that fits keeps; None when none does."""
        shapes, groups, counts, first_of = self.shapes, self.groups, self.counts, self.first_of
        remaining = sum(counts)  # tokens of the messages from `cut` on
        split_off = self._split_off_by_cut()
        kept_before = 0  # the pinned messages before the cut, in no tool group
        left_out = 0  # the other messages before the cut
        anchor: int | None = None
        last_mark: int | None = None
        for cut, (shape, group, count) in enumerate(zip(shapes, groups, counts)):
            if opens_turn(shape) and group is None:
                anchor = cut
            starts_unit = group is None or first_of[group] == cut
            if starts_unit and (anchor is not None or not self.start_on_turn):
                anchor_tokens = self._anchor_tokens(cut, anchor)
                measure = left_out - anchor_tokens
                if last_mark is None or measure >= last_mark + step:
                    last_mark = measure
                    tail = remaining - split_off[cut]
                    if kept_before + anchor_tokens + tail <= budget:
                        return self._rows(cut, anchor)
            if self.latest_cut is not None and cut >= self.latest_cut:
                return None
            remaining -= count
            if shape.pinned and group is None:
                kept_before += count
            else:
                left_out += count
        return None

    def _anchor_tokens(self, cut: int, anchor: int | None) -> int:
        """The tokens of the anchor a cut keeps beside the pinned messages before it."""
        if anchor is None or anchor == cut or self.shapes[anchor].pinned:
            return 0
        return self.counts[anchor]

    def _rows(self, cut: int, anchor: int | None) -> list[int]:
        shapes, groups, first_of = self.shapes, self.groups, self.first_of
        return [
            index
            for index, (shape, group) in enumerate(zip(shapes, groups))
            if (index >= cut and (group is None or first_of[group] >= cut))
            or (index < cut and ((shape.pinned and group is None) or index == anchor))
        ]

    def _split_off_by_cut(self) -> list[int]:
        """For each cut, the tokens of the messages from it on whose tool group begins before
        it (left out with their group)."""
        size = len(self.counts)
        changes = [0] * (size + 1)
        for index, (group, count) in enumerate(zip(self.groups, self.counts)):
            if group is not None and self.first_of[group] < index:
                changes[self.first_of[group] + 1] += count
                changes[index + 1] -= count
        split_off, running = [], 0
        for change in changes[:size]:
            running += change
            split_off.append(running)
        return split_off
