"""`skeleton-compressor bench --variants`: `greedy` on fragments of which a third render
things in sets of two or three (the whole, an outline, a summary), beside the same fragments
with no `variant_of` at all (the plain path) and beside reading the four fields."""

from __future__ import annotations

import random
from typing import Any, TextIO

from ...service import SkeletonCompressorService
from ...types import ContextFragment
from .figures import aligned_table
from .fragments import make_fragments, tenth_of_tokens
from .timing import best_times, duration

__all__ = [
    "format_variants_table",
    "make_variant_fragments",
    "measure_variants",
    "read_variant_floor",
]

# A rendering after the first of its set is this much smaller, and this much less relevant.
_SHRINK = 4
_LESS_RELEVANT = 0.8


def make_variant_fragments(
    size: int, seed: int = 0, *, variants: bool = True
) -> tuple[ContextFragment, ...]:
    """`make_fragments`, with a third of the fragments in variant sets of two or three spread
    over the input: in each set, the first is the whole thing and each later one a quarter
    of the tokens of the one before and four fifths of its relevance. Made in input order,
    as a reader of JSON Lines would make them, each fragment with its own `variant_of`
    string, made with it.

    With `variants=False`, the same fragments (ids, token counts, scores, order) with no
    `variant_of` at all."""
    rng = random.Random(seed + 2)
    positions = list(range(size))
    rng.shuffle(positions)
    in_sets = positions[: size // 3]
    # Per position in a set: its set's number, its place in the set, and the set's first.
    renders: dict[int, tuple[int, int, int]] = {}
    at = 0
    while at < len(in_sets):
        left = len(in_sets) - at
        count = left if left <= 3 else rng.randint(2, 3)
        if left - count == 1:
            count = 2  # no set of one left at the end
        members = sorted(in_sets[at : at + count])
        for order, position in enumerate(members):
            renders[position] = (at, order, members[0])
        at += count
    plain = make_fragments(size, seed)
    fragments = []
    for position, fragment in enumerate(plain):
        thing, order, first = renders.get(position, (-1, 0, position))
        whole = plain[first]
        fragments.append(
            ContextFragment(
                fragment.fragment_id,
                max(1, whole.token_count // _SHRINK**order),
                whole.relevance_score * _LESS_RELEVANT**order,
                variant_of=f"thing-{thing}" if variants and thing >= 0 else None,
            )
        )
    return tuple(fragments)


def read_variant_floor(
    fragments: tuple[ContextFragment, ...],
) -> list[tuple[str, int, float, str | None]]:
    """The least any code taking fragments with variants must do: read four fields of each."""
    return [(f.fragment_id, f.token_count, f.relevance_score, f.variant_of) for f in fragments]


def measure_variants(size: int, progress: TextIO) -> dict[str, Any]:
    label = f"bench: {size:,} fragments, a third in variant sets of 2 or 3, greedy"
    progress.write(f"{label}: generating\n")
    with_variants = make_variant_fragments(size)
    plain = make_variant_fragments(size, variants=False)
    budget = tenth_of_tokens(with_variants)
    rust = SkeletonCompressorService(backend="rust")
    python = SkeletonCompressorService(backend="python")
    progress.write(f"{label}: checking both backends agree\n")
    got = rust.compress(with_variants, budget)
    if got != python.compress(with_variants, budget):
        raise AssertionError(f"backends disagree on {size} fragments with variants")
    progress.write(f"{label}: timing\n")
    variant_seconds, plain_seconds, python_seconds, floor_seconds = best_times(
        lambda: rust.compress(with_variants, budget),
        lambda: rust.compress(plain, budget),
        lambda: python.compress(with_variants, budget),
        lambda: read_variant_floor(with_variants),
    )
    return {
        "size": size,
        "rust_seconds": variant_seconds,
        "plain_seconds": plain_seconds,
        "python_seconds": python_seconds,
        "read_floor_seconds": floor_seconds,
        "over_plain": variant_seconds / plain_seconds,
        "rust_over_floor": variant_seconds / floor_seconds,
        "speedup": python_seconds / variant_seconds,
    }


def format_variants_table(rows: list[dict[str, Any]]) -> str:
    header = (
        "fragments",
        "rust",
        "rust, no variant_of",
        "with / without",
        "python",
        "speed-up",
        "rust / four-field read",
    )
    lines = [
        (
            f"{row['size']:,}",
            duration(row["rust_seconds"]),
            duration(row["plain_seconds"]),
            f"{row['over_plain']:.2f}x",
            duration(row["python_seconds"]),
            f"{row['speedup']:.1f}x",
            f"{row['rust_over_floor']:.2f}",
        )
        for row in rows
    ]
    return aligned_table(
        "greedy; a third of the fragments in variant sets of two or three", header, lines
    )
