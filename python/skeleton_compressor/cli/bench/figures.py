"""The figures of `skeleton-compressor bench` (whose options are in `command`): both backends
timed on a generated set, and the table of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO, cast

from ...service import SkeletonCompressorService
from .fragments import SCORE_SHAPES, make_fragments, read_floor, tenth_of_tokens
from .timing import best_times, duration

if TYPE_CHECKING:
    from ...types import StrategyName

DEFAULT_SIZES = (1, 10, 100, 1_000, 100_000, 1_000_000)


def measure(
    size: int, progress: TextIO, scores: str = "random", strategy: str = "greedy"
) -> dict[str, Any]:
    label = f"bench: {size:,} fragments, {scores} scores, {strategy}"
    progress.write(f"{label}: generating\n")
    fragments = make_fragments(size, scores=scores)
    budget = tenth_of_tokens(fragments)
    named = cast("StrategyName", strategy)  # one of the command line's choices
    rust = SkeletonCompressorService(backend="rust", strategy=named)
    python = SkeletonCompressorService(backend="python", strategy=named)
    progress.write(f"{label}: checking both backends agree\n")
    expected = python.compress(fragments, budget)
    got = rust.compress(fragments, budget)
    if got != expected or any(a is not b for a, b in zip(got.fragments, expected.fragments)):
        raise AssertionError(f"backends disagree on {size} fragments, {scores} scores")
    progress.write(f"{label}: timing\n")
    rust_seconds, python_seconds, floor_seconds = best_times(
        lambda: rust.compress(fragments, budget),
        lambda: python.compress(fragments, budget),
        lambda: read_floor(fragments),
    )
    kept, bound = got.metadata.value_kept or 0.0, got.metadata.value_bound or 0.0
    return {
        "size": size,
        "scores": scores,
        "strategy": strategy,
        "value_kept_of_bound": kept / bound if bound else 1.0,
        "rust_seconds": rust_seconds,
        "python_seconds": python_seconds,
        "read_floor_seconds": floor_seconds,
        "speedup": python_seconds / rust_seconds,
        "rust_over_floor": rust_seconds / floor_seconds,
    }


def format_table(rows: list[dict[str, Any]]) -> str:
    """The figures as a table, under a line naming the score shape(s) measured."""
    shapes = dict.fromkeys(row.get("scores", "random") for row in rows)
    title = "scores: " + "; ".join(f"{shape} ({SCORE_SHAPES[shape]})" for shape in shapes)
    header = (
        "fragments",
        "strategy",
        "value / bound",
        "rust",
        "python",
        "speed-up",
        "rust / read floor",
    )
    lines = [
        (
            f"{row['size']:,}",
            row.get("strategy", "greedy"),
            f"{row.get('value_kept_of_bound', 1.0):.4f}",
            duration(row["rust_seconds"]),
            duration(row["python_seconds"]),
            f"{row['speedup']:.1f}x",
            f"{row['rust_over_floor']:.2f}",
        )
        for row in rows
    ]
    return aligned_table(title, header, lines)


def aligned_table(title: str, header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    """`title`, then `header` and `lines` as columns aligned on the right."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *lines)]
    return "\n".join(
        [
            title,
            *(
                "  ".join(cell.rjust(width) for cell, width in zip(line, widths))
                for line in (header, *lines)
            ),
        ]
    )
