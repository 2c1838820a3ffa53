"""`skeleton-compressor bench`: its options, and which figures they ask for (`figures` times
the library's calls, `files` the command on files, `variants` variant sets)."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from ..._backends.choice import rust_available
from ..._backends.protocol import STRATEGIES
from ..input import InputError, writing_output
from ..progress import is_terminal as _is_terminal
from .figures import DEFAULT_SIZES, format_table, measure
from .fragments import SCORE_SHAPES

__all__ = ["add_bench_command", "run_bench"]


def run_bench(args: argparse.Namespace, out: TextIO) -> None:
    if not rust_available():
        raise InputError("bench compares the Rust backend with the Python one; build the extension")
    progress = _progress_stream()
    if args.cli:
        from .files import format_cli_table, measure_cli_rows

        rows = measure_cli_rows(args.sizes or [1_000_000], progress)
        _write_rows(rows, format_cli_table, args.json, out)
        return
    if args.variants:
        from .variants import format_variants_table, measure_variants

        rows = [measure_variants(size, progress) for size in args.sizes or [1_000_000]]
        _write_rows(rows, format_variants_table, args.json, out)
        return
    rows = [
        measure(size, progress, args.scores or "random", strategy)
        for size in args.sizes or DEFAULT_SIZES
        for strategy in args.strategies or ["greedy"]
    ]
    _write_rows(rows, format_table, args.json, out)


def _progress_stream() -> TextIO:
    """Where bench says what it is doing: stderr when it is a terminal, as every command's
    progress; a file or a pipe gets the errors alone."""
    stream = sys.stderr
    return stream if stream is not None and _is_terminal(stream) else io.StringIO()


def _write_rows(
    rows: list[dict[str, Any]],
    table: Callable[[list[dict[str, Any]]], str],
    as_json: bool,
    out: TextIO,
) -> None:
    with writing_output():
        if as_json:
            json.dump(rows, out, indent=2)
            out.write("\n")
        else:
            out.write(table(rows) + "\n")


# The most fragments a call takes (the core counts them in 32 bits).
MAX_SIZE = 2**32 - 1


def _size(text: str) -> int:
    try:
        size = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if not 1 <= size <= MAX_SIZE:
        raise argparse.ArgumentTypeError(f"sizes must be in [1, {MAX_SIZE}], got {size}")
    return size


def _checked(args: argparse.Namespace, bench: argparse.ArgumentParser) -> None:
    """Options that a kind of bench would not read are refused, not passed over."""
    kind = "--cli" if args.cli else "--variants" if args.variants else None
    if args.cli and args.variants:
        bench.error("--cli and --variants are two benches: choose one")
    if kind is not None and (args.scores is not None or args.strategies is not None):
        bench.error(f"--scores and --strategies time the library's calls, not {kind}")


def add_bench_command(commands: Any) -> None:
    bench = commands.add_parser(
        "bench",
        help="time the Rust and Python backends on generated fragment sets",
        description="Time the Rust and Python backends side by side on generated fragment "
        "sets on this machine, after checking that both give the same answer: one compress "
        "call per size and strategy, the best of a few runs, and the speed-up.",
    )
    bench.add_argument(
        "--sizes",
        type=_size,
        nargs="+",
        metavar="N",
        help=f"fragment set sizes (default: {' '.join(map(str, DEFAULT_SIZES))}; with --cli, "
        "1000000)",
    )
    bench.add_argument(
        "--scores",
        choices=list(SCORE_SHAPES),
        help="relevance scores: random in [0, 1), five levels (0, 0.25, ..., 1.0) at random,"
        " or all equal (0.5), to time ties (default: random)",
    )
    bench.add_argument(
        "--strategies",
        choices=STRATEGIES,
        nargs="+",
        metavar="STRATEGY",
        help=f"the strategies to time, side by side: {', '.join(STRATEGIES)} (default: greedy)",
    )
    bench.add_argument(
        "--cli",
        action="store_true",
        help="time `compress` as a process on generated JSON Lines and JSON array files, "
        "next to reading the file plus one compress_arrays call",
    )
    bench.add_argument(
        "--variants",
        action="store_true",
        help="time greedy on fragments of which a third are in variant sets of two or three, "
        "next to the same fragments without variant_of and to reading their four fields "
        "(default size: 1000000)",
    )
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    bench.set_defaults(run=run_bench, check=lambda args: _checked(args, bench))
