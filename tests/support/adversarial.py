"""Inputs that make every exact knapsack solver exponential (or cubic and more), as fragments
with a budget: the families `optimal` must finish on within its work limit."""

from __future__ import annotations

import random

from skeleton_compressor import ContextFragment

__all__ = ["FAMILIES", "adversarial"]


def _as_fragments(
    weights: list[int], profits: list[int], names: list[str | None] | None = None
) -> tuple[ContextFragment, ...]:
    most = max(profits)
    return tuple(
        ContextFragment(
            f"item-{number:06d}",
            weight,
            profit / most,
            variant_of=None if names is None else names[number],
        )
        for number, (weight, profit) in enumerate(zip(weights, profits))
    )


def todd(size: int) -> tuple[tuple[ContextFragment, ...], int]:
    """Todd's subset sum: w_j = 2^(k+n+1) + 2^(k+j) + 1 with k = floor(log2 n), relevance
    w_j / max w, the budget half the tokens."""
    k = size.bit_length() - 1
    weights = [2 ** (k + size + 1) + 2 ** (k + j) + 1 for j in range(1, size + 1)]
    return _as_fragments(weights, weights), sum(weights) // 2


def avis(size: int) -> tuple[tuple[ContextFragment, ...], int]:
    """Avis's subset sum: w_j = n(n+1) + j, the budget n(n+1)floor((n-1)/2) + n(n-1)/2, which
    no subset reaches."""
    weights = [size * (size + 1) + j for j in range(1, size + 1)]
    budget = size * (size + 1) * ((size - 1) // 2) + size * (size - 1) // 2
    return _as_fragments(weights, weights), budget


def subset_sum(size: int, seed: int = 0) -> tuple[tuple[ContextFragment, ...], int]:
    """Subset sum at scale: token counts uniform in 1..10^7, relevance the tokens over the
    largest, the budget half the tokens."""
    rng = random.Random(seed)
    weights = [rng.randint(1, 10**7) for _ in range(size)]
    return _as_fragments(weights, weights), sum(weights) // 2


def variants(sets: int, seed: int = 0) -> tuple[tuple[ContextFragment, ...], int]:
    """Sets of three strongly correlated renderings (profit the tokens plus a tenth of the
    range), the budget a quarter of the tokens."""
    rng = random.Random(seed)
    weights, profits, names = [], [], []
    for number in range(sets):
        for _ in range(3):
            tokens = rng.randint(1, 1000)
            weights.append(tokens)
            profits.append(tokens + 100)
            names.append(f"set-{number}")
    return _as_fragments(weights, profits, names), sum(weights) // 4


FAMILIES = {"todd": todd, "avis": avis, "subset_sum": subset_sum, "variants": variants}


def adversarial(family: str, size: int) -> tuple[tuple[ContextFragment, ...], int]:
    return FAMILIES[family](size)
