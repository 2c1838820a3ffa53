"""The walk of one budget along the ranking, for `greedy` and `prefix` with no policy: each
fragment kept while it fits (`prefix` stops at the first that does not), and the best-ranked
kept alone when none fits."""

from __future__ import annotations

from itertools import takewhile

__all__ = ["packed"]


def packed(
    token_counts: list[int], ranking: list[int], budget: int, prefix: bool
) -> tuple[list[int], int]:
    """The fragments kept, in rank order, and their tokens."""
    if budget == 0:
        return [], 0
    kept = []
    remaining = budget
    for position, index in enumerate(ranking):
        tokens = token_counts[index]
        if tokens <= remaining:
            remaining -= tokens
            kept.append(index)
            if not remaining:
                # A spent budget only fits zero-token fragments from here on.
                rest = ranking[position + 1 :]
                if prefix:
                    kept.extend(takewhile(lambda i: not token_counts[i], rest))
                elif 0 in token_counts:
                    kept.extend([i for i in rest if not token_counts[i]])
                break
        elif prefix:
            break
    if not kept and ranking:
        return [ranking[0]], token_counts[ranking[0]]
    return kept, budget - remaining
