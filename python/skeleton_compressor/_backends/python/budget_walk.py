"""The walk of one budget down the ranking, as `greedy` and `prefix` take it, shared by the
plain path (fragments) and the policy path (units): each item fits what is left and is kept,
or is passed over because its variant set already has a kept one, or does not fit, which ends
a prefix walk. What each path keeps of the item (the top one kept alone over budget, the
reasons it explains) stays with that path."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import takewhile

__all__ = ["KEPT", "NO_ROOM", "PASSED_OVER", "walk_budget"]


# What the walk did with one item, as `steps` records it: plain ints rather than an enum, as
# an enum member costs an attribute lookup per item walked.
KEPT = 0
PASSED_OVER = 1  # its variant set already has a kept item
NO_ROOM = 2


def walk_budget(
    items: Sequence[int],
    tokens: Sequence[int],
    room: int,
    prefix: bool,
    set_of: Sequence[int] | None = None,
    steps: list[tuple[int, int, int]] | None = None,
) -> tuple[list[int], int]:
    """The items kept from `room` tokens, in walk order, and what is left of it.

    `tokens[item]` is an item's tokens; `set_of[item]` its variant set (-1 for none), when
    any item has one. `steps`, when given, gets each item walked with its step and what was
    left before it; a spent budget then does not cut the walk short, as each item it would
    have walked needs its reason."""
    kept: list[int] = []
    keep = kept.append
    taken: set[int] = set()
    # One iterator, so that a spent budget's tail is what it has not yielded yet.
    walk = iter(items)
    for item in walk:
        if set_of is not None:
            variant = set_of[item]
            if variant in taken:
                if steps is not None:
                    steps.append((item, PASSED_OVER, room))
                continue
        size = tokens[item]
        if steps is not None:
            steps.append((item, KEPT if size <= room else NO_ROOM, room))
        if size <= room:
            room -= size
            keep(item)
            if set_of is not None:
                if variant >= 0:
                    taken.add(variant)
            elif not room and steps is None:
                kept.extend(_zero_token_tail(walk, tokens, prefix))
                break
        elif prefix:
            break
    return kept, room


def _zero_token_tail(rest: Iterator[int], tokens: Sequence[int], prefix: bool) -> list[int]:
    """What a spent budget still keeps of the `rest` of a walk with no variant sets: the
    zero-token items (up to the first other one, for `prefix`). Found in one sweep rather
    than walked item by item, as a walk that spends its budget exactly has most of the
    ranking still to come."""
    if prefix:
        return list(takewhile(lambda item: not tokens[item], rest))
    if 0 in tokens:
        return [item for item in rest if not tokens[item]]
    return []
