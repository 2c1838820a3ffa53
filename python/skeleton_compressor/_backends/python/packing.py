"""`greedy` and `prefix` with no policy: the budget's walk along the ranking of fragments,
and the best-ranked kept alone when none fits."""

from __future__ import annotations

from .budget_walk import walk_budget

__all__ = ["packed"]


def packed(
    token_counts: list[int], ranking: list[int], budget: int, prefix: bool
) -> tuple[list[int], int]:
    """The fragments kept, in rank order, and their tokens."""
    if budget == 0:
        return [], 0
    kept, left = walk_budget(ranking, token_counts, budget, prefix)
    if not kept and ranking:
        return [ranking[0]], token_counts[ranking[0]]
    return kept, budget - left
