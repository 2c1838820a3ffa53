"""Packing a chat history so that it stays valid: the pinned messages kept, every tool call
kept or dropped together with the messages answering it, the rest chosen by the library.

Framework-free: an adapter describes each message as a `MessageShape` and maps the kept
indices back to its own objects."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .. import _values
from ..types import SkeletonMetadata
from ._packing import Packing

__all__ = ["MessageShape", "pack_history", "tool_groups"]


@dataclass(frozen=True)
class MessageShape:
    """What the packer needs to know of one message.

    pinned: always kept (the system message, the latest human message).
    opens_turn: a human (user) message a history may start with.
    calls: the ids of the tool calls the message makes.
    answers: the ids of the tool calls the message answers.
    """

    pinned: bool = False
    opens_turn: bool = False
    calls: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()


def tool_groups(shapes: Sequence[MessageShape], container: str) -> list[str | None]:
    """A group name per message: a message making a tool call shares one with every message
    answering it (and, through them, with other calls they answer). None for the others.

    Raises ValueError naming `<container>[i]` for a call id made twice, or an answer to a call
    that no earlier message makes."""
    parent = list(range(len(shapes)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    caller: dict[str, int] = {}
    linked = [False] * len(shapes)
    for index, shape in enumerate(shapes):
        for call_id in shape.answers:
            made_by = caller.get(call_id)
            if made_by is None:
                raise ValueError(
                    f"{container}[{index}] answers tool call {call_id!r}, "
                    "which no earlier message makes"
                )
            parent[root(index)] = root(made_by)
            linked[index] = linked[made_by] = True
        for call_id in shape.calls:
            if call_id in caller:
                raise ValueError(
                    f"{container}[{index}] makes tool call {call_id!r}, "
                    f"already made by {container}[{caller[call_id]}]"
                )
            caller[call_id] = index
            linked[index] = True
    return [f"tools@{root(index)}" if linked[index] else None for index in range(len(shapes))]


def pack_history(
    packing: Packing,
    shapes: Sequence[MessageShape],
    token_counts: Sequence[object],
    relevance_scores: Sequence[object],
    container: str,
    *,
    start_on_turn: bool = True,
) -> tuple[list[int], SkeletonMetadata]:
    """The indices of the messages kept, in input order, and the metadata.

    Pinned messages are required, and each tool call is one unit with its answers. With
    `start_on_turn`, the first kept message after the pinned ones that lead the history opens
    a turn (a user message that answers no call), as chat APIs that want a history to start
    with a user message require: when the selection starts elsewhere, the turn that message
    belongs to is pinned too, what comes before it left out, and the rest chosen again (a
    later turn when that one does not fit beside the pinned messages)."""
    groups = tool_groups(shapes, container)
    counts = [
        _values.token_count(count, index, None, container)
        for index, count in enumerate(token_counts)
    ]
    first = _select(
        packing, range(len(shapes)), shapes, groups, counts, relevance_scores, container
    )
    kept, metadata = first
    if not start_on_turn:
        return first
    start = _turn_to_start_on(kept, shapes, groups, counts, packing.skeleton_budget)
    if start is None:
        return first
    reaches_back = _reaching_back(groups, start)
    rows = [
        index
        for index in range(len(shapes))
        if (index >= start and groups[index] not in reaches_back)
        or (index < start and shapes[index].pinned and groups[index] is None)
    ]
    pinned_start = [*shapes]
    pinned_start[start] = MessageShape(True, True, shapes[start].calls, shapes[start].answers)
    kept, second = _select(packing, rows, pinned_start, groups, counts, relevance_scores, container)
    return kept, replace(
        second,
        original_tokens=metadata.original_tokens,
        ratio=second.compressed_tokens / metadata.original_tokens if kept else 1.0,
        fragments_total=metadata.fragments_total,
        value_bound=metadata.value_bound,
    )


def _select(
    packing: Packing,
    rows: Sequence[int],
    shapes: Sequence[MessageShape],
    groups: Sequence[str | None],
    counts: Sequence[int],
    relevance_scores: Sequence[object],
    container: str,
) -> tuple[list[int], SkeletonMetadata]:
    row_groups = [groups[index] for index in rows]
    result = packing.select(
        [counts[index] for index in rows],
        [relevance_scores[index] for index in rows],
        container,
        required=[shapes[index].pinned for index in rows],
        groups=row_groups if any(group is not None for group in row_groups) else None,
        order="input",
    )
    return [rows[row] for row in result.indices], result.metadata


def _turn_to_start_on(
    kept: Sequence[int],
    shapes: Sequence[MessageShape],
    groups: Sequence[str | None],
    counts: Sequence[int],
    budget: int,
) -> int | None:
    """The turn a valid history starts on, when the selection starts elsewhere: the latest
    turn opened at or before the first kept message, or the first later one that fits beside
    the pinned messages and whose history does not reach back before it. None when the
    selection is already valid, or no turn can start it."""
    leading = 0
    while (
        leading < len(kept)
        and shapes[kept[leading]].pinned
        and not shapes[kept[leading]].opens_turn
    ):
        leading += 1
    if leading == len(kept):
        return None
    first = kept[leading]
    if _opens_turn(shapes[first]):
        return None
    pinned_tokens = sum(count for shape, count in zip(shapes, counts) if shape.pinned)
    turns = [index for index, shape in enumerate(shapes) if _opens_turn(shape)]
    before = [index for index in turns if index <= first]
    candidates = [before[-1]] if before else []
    candidates += [index for index in turns if index > first]
    for start in candidates:
        if shapes[start].pinned or pinned_tokens + counts[start] <= budget:
            reaches_back = _reaching_back(groups, start)
            if not any(
                shape.pinned and group in reaches_back for shape, group in zip(shapes, groups)
            ):
                return start
    return None


def _reaching_back(groups: Sequence[str | None], start: int) -> set[str | None]:
    """The tool groups with a message before `start` (a history starting there cannot hold
    them whole)."""
    return {group for group in groups[:start] if group is not None}


def _opens_turn(shape: MessageShape) -> bool:
    return shape.opens_turn and not shape.answers
