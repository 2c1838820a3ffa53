"""Packing a chat history so that it stays valid: the pinned messages kept, every tool call
kept or dropped together with the messages answering it, the rest chosen by the library.

Framework-free: an adapter describes each message as a `MessageShape` and maps the kept
indices back to its own objects."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from ..types import SkeletonMetadata
from ._packing import Packing, checked_token_counts

__all__ = [
    "History",
    "MessageShape",
    "ToolLinks",
    "of_whole_history",
    "opens_turn",
    "pack_history",
    "tool_groups",
]


class MessageShape(NamedTuple):
    """What the packer needs to know of one message.

    pinned: always kept (the system message, the latest human message).
    opens_turn: a human (user) message a history may start with.
    calls: the ids of the tool calls the message makes.
    answers: the ids of the tool calls the message answers.
    system: a system prompt, pinned in every packing of the conversation (where other
    pinned messages are pinned only while they are the latest of their kind).
    """

    pinned: bool = False
    opens_turn: bool = False
    calls: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    system: bool = False


def tool_groups(shapes: Sequence[MessageShape], container: str) -> list[str | None]:
    """A group name per message: a message making a tool call shares one with every message
    answering it (and, through them, with other calls they answer). None for the others.

    An answer goes with the latest earlier call of its id: some models reuse ids across turns.
    Raises ValueError naming `<container>[i]` for an answer to a call that no earlier message
    makes."""
    links = ToolLinks(len(shapes))
    caller: dict[str, int] = {}
    for index, shape in enumerate(shapes):
        for call_id in shape.answers:
            made_by = caller.get(call_id)
            if made_by is None:
                raise ValueError(
                    f"{container}[{index}] answers tool call {call_id!r}, "
                    "which no earlier message makes"
                )
            links.join(index, made_by)
        for call_id in shape.calls:
            caller[call_id] = index
            links.mark(index)
    return links.groups()


class ToolLinks:
    """Messages joined into tool groups by position as calls are answered (a union-find), for
    an adapter that pairs calls with their answers as it reads."""

    __slots__ = ("_linked", "_parent")

    def __init__(self, size: int) -> None:
        self._parent = list(range(size))
        self._linked = [False] * size

    def mark(self, index: int) -> None:
        """Message `index` makes a call: it has a group, of its own until answered."""
        self._linked[index] = True

    def join(self, answer: int, caller: int) -> None:
        """Message `answer` answers a call message `caller` makes: one group."""
        self._parent[self._root(answer)] = self._root(caller)
        self._linked[answer] = self._linked[caller] = True

    def groups(self) -> list[str | None]:
        """A group name per message, None for one making and answering no call."""
        return [
            f"tools@{self._root(index)}" if linked else None
            for index, linked in enumerate(self._linked)
        ]

    def _root(self, index: int) -> int:
        parent = self._parent
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index


def pack_history(
    packing: Packing,
    shapes: Sequence[MessageShape],
    token_counts: Sequence[object],
    relevance_scores: Sequence[object],
    container: str,
    *,
    start_on_turn: bool = True,
    ids: Sequence[str | None] | None = None,
    groups: Sequence[str | None] | None = None,
) -> tuple[list[int], SkeletonMetadata]:
    """The indices of the messages kept, in input order, and the metadata.

    Pinned messages are required, and each tool call is one unit with its answers. With
    `start_on_turn`, the first kept message after the pinned ones that lead the history opens
    a turn (a user message that answers no call), as chat APIs that want a history to start
    with a user message require: when the selection starts elsewhere, the turn that message
    belongs to is pinned too, what comes before it left out, and the rest chosen again (a
    later turn when that one does not fit beside the pinned messages, an earlier one when no
    later one does). When no turn can start it, only the pinned messages (with the tool
    calls they belong to) are kept.

    The kept messages fit the budget unless the pinned ones alone exceed it: under
    `on_overflow="keep_top"` those are then kept alone, but the one unit `keep_top` keeps
    when nothing fits is not (nothing is kept instead), as a model refuses a history over
    its budget.

    `ids` (optional) names the messages in errors beside their index; `groups` is
    `tool_groups(shapes, container)` when the caller has worked it out already. Counts and
    scores are checked as the library checks them, errors naming `<container>[i]`."""
    history = History.read(packing, shapes, token_counts, relevance_scores, container, ids, groups)
    return history.by_relevance(history.select_all(), start_on_turn)


class History(NamedTuple):
    """A history read for packing: its shapes, tool groups and checked counts, with what a
    selection over it needs."""

    packing: Packing
    shapes: Sequence[MessageShape]
    groups: Sequence[str | None]
    counts: list[int]
    scores: Sequence[object]
    container: str
    ids: Sequence[str | None] | None

    @classmethod
    def read(
        cls,
        packing: Packing,
        shapes: Sequence[MessageShape],
        token_counts: Sequence[object],
        relevance_scores: Sequence[object],
        container: str,
        ids: Sequence[str | None] | None = None,
        groups: Sequence[str | None] | None = None,
    ) -> History:
        if groups is None:
            groups = tool_groups(shapes, container)
        counts = checked_token_counts(token_counts, container, ids)
        return cls(packing, shapes, groups, counts, relevance_scores, container, ids)

    def select_all(self) -> tuple[list[int], SkeletonMetadata]:
        """The library's selection over the whole history, every score checked."""
        return self._select(range(len(self.shapes)), self.shapes)

    def by_relevance(
        self, first: tuple[list[int], SkeletonMetadata], start_on_turn: bool
    ) -> tuple[list[int], SkeletonMetadata]:
        """`pack_history`'s result, given the selection over the whole history."""
        kept, metadata = first
        shapes, groups = self.shapes, self.groups
        if metadata.over_budget and not any(shape.pinned for shape in shapes):
            # keep_top's one unit kept when nothing fits: a history over the budget is refused
            # by the model it is for, so only pinned messages may take it over.
            return [], of_whole_history(_nothing_kept(metadata), metadata)
        if not start_on_turn or _starts_on_turn(kept, shapes):
            return first
        units = _Units(shapes, groups, self.counts)
        start = units.turn_to_start_on(_first_unpinned(kept, shapes), self.packing.skeleton_budget)
        if start is None:
            rows = units.required_rows()
            pinned = list(shapes)
        else:
            rows = [
                index
                for index in range(len(shapes))
                if (index >= start and not units.reaches_before(groups[index], start))
                or (index < start and shapes[index].pinned and groups[index] is None)
            ]
            pinned = [*shapes]
            pinned[start] = shapes[start]._replace(pinned=True)
        kept, second = self._select(rows, pinned)
        return kept, of_whole_history(second, metadata)

    def all_kept(self, rows: Sequence[int]) -> SkeletonMetadata:
        """The metadata of keeping `rows` (in input order) and nothing else."""
        result = self.packing.select(
            [self.counts[index] for index in rows],
            [self.scores[index] for index in rows],
            self.container,
            ids=None if self.ids is None else [self.ids[index] for index in rows],
            required=[True] * len(rows),
        )
        return result.metadata

    def _select(
        self, rows: Sequence[int], shapes: Sequence[MessageShape]
    ) -> tuple[list[int], SkeletonMetadata]:
        groups, ids = self.groups, self.ids
        row_groups = [groups[index] for index in rows]
        required = [shapes[index].pinned for index in rows]
        result = self.packing.select(
            [self.counts[index] for index in rows],
            [self.scores[index] for index in rows],
            self.container,
            ids=None if ids is None else [ids[index] for index in rows],
            required=required,
            groups=row_groups if any(group is not None for group in row_groups) else None,
            # With nothing pinned, `raise` would refuse only a budget that fits nothing, where
            # `keep_top` keeps nothing either: `raise` raises for pinned messages alone.
            strict=not any(required),
        )
        # In input order whatever the packing's order: rows are in input order.
        return [rows[row] for row in sorted(result.indices)], result.metadata


def of_whole_history(second: SkeletonMetadata, first: SkeletonMetadata) -> SkeletonMetadata:
    """The metadata of a selection made again over part of the history, reported against the
    whole of it; the value bound covers both selections' policies (the second pins a turn)."""
    original = first.original_tokens
    bounds = [bound for bound in (first.value_bound, second.value_bound) if bound is not None]
    bound = max(bounds) if bounds else None
    share = second.kept_share
    if share is not None and bound and second.value_bound is not None:
        share *= second.value_bound / bound  # the same value over the larger bound
    return replace(
        second,
        original_tokens=original,
        ratio=second.compressed_tokens / original if original else 1.0,
        fragments_total=first.fragments_total,
        value_bound=bound,
        kept_share=share,
    )


def _nothing_kept(metadata: SkeletonMetadata) -> SkeletonMetadata:
    return replace(
        metadata,
        compressed_tokens=0,
        ratio=0.0 if metadata.original_tokens else 1.0,
        fragments_kept=0,
        value_kept=None if metadata.value_kept is None else 0.0,
        # Nothing of the bound kept; a bound of 0 is met whole, as everywhere.
        kept_share=None if metadata.kept_share is None else 0.0 if metadata.value_bound else 1.0,
    )


def opens_turn(shape: MessageShape) -> bool:
    return shape.opens_turn and not shape.answers


def _first_unpinned(kept: Sequence[int], shapes: Sequence[MessageShape]) -> int | None:
    """The first kept message after the pinned ones that lead the history and open no turn
    (the system messages); None when there is none."""
    for index in kept:
        shape = shapes[index]
        if not shape.pinned or shape.opens_turn:
            return index
    return None


def _starts_on_turn(kept: Sequence[int], shapes: Sequence[MessageShape]) -> bool:
    first = _first_unpinned(kept, shapes)
    return first is None or opens_turn(shapes[first])


class _Units:
    """The tool groups' extents and the tokens of each unit, for choosing a turn to start on
    in one pass over the history."""

    def __init__(
        self,
        shapes: Sequence[MessageShape],
        groups: Sequence[str | None],
        counts: Sequence[int],
    ) -> None:
        self.shapes, self.groups, self.counts = shapes, groups, counts
        self.first_of: dict[str, int] = {}
        self.tokens_of: dict[str, int] = {}
        required: set[str] = set()
        self.required_tokens = 0
        for index, (shape, group, count) in enumerate(zip(shapes, groups, counts)):
            if group is None:
                self.required_tokens += count if shape.pinned else 0
                continue
            self.first_of.setdefault(group, index)
            self.tokens_of[group] = self.tokens_of.get(group, 0) + count
            if shape.pinned:
                required.add(group)
        self.required_groups = required
        self.required_tokens += sum(self.tokens_of[group] for group in required)
        # A history starting after this index cannot hold every required group whole.
        self.latest_start = min((self.first_of[group] for group in required), default=None)

    def reaches_before(self, group: str | None, start: int) -> bool:
        """Whether the tool group has a message before `start`."""
        return group is not None and self.first_of[group] < start

    def required_rows(self) -> list[int]:
        return [
            index
            for index, (shape, group) in enumerate(zip(self.shapes, self.groups))
            if shape.pinned or group in self.required_groups
        ]

    def turn_to_start_on(self, first: int | None, budget: int) -> int | None:
        """The turn a valid history starts on, when the selection starts on `first`, which
        opens none: the latest turn opened at or before it; or else the first later one whose
        unit fits beside the required units (a pinned one always does); or else the latest
        earlier one that fits. A turn qualifies when no required unit, and not its own unit,
        has a message before it. None when no turn qualifies."""
        if first is None:
            return None
        turns = [index for index, shape in enumerate(self.shapes) if opens_turn(shape)]
        before = [index for index in turns if index <= first]
        candidates = before[-1:] + [index for index in turns if index > first] + before[-2::-1]
        for start in candidates:
            if self.latest_start is not None and start > self.latest_start:
                continue
            group = self.groups[start]
            if self.reaches_before(group, start):
                continue
            if self.shapes[start].pinned or group in self.required_groups:
                return start
            extra = self.counts[start] if group is None else self.tokens_of[group]
            if self.required_tokens + extra <= budget:
                return start
        return None
