"""`skeleton-compressor bench`: its options, and which figures they ask for (`figures` times
the library's calls, `files` the command on files, `variants` variant sets)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from ..._backends.choice import rust_available
from ..._backends.protocol import STRATEGIES
from ..input import InputError
from .figures import DEFAULT_SIZES, format_table, measure
from .fragments import SCORE_SHAPES

__all__ = ["add_bench_command", "run_bench"]


def run_bench(args: argparse.Namespace, out: TextIO) -> None:
    if not rust_available():
        raise InputError("bench compares the Rust backend with the Python one; build the extension")
    if args.cli:
        from .files import run_cli_bench

        run_cli_bench(args.sizes or [1_000_000], out, args.json)
        return
    if args.variants:
        from .variants import format_variants_table, measure_variants

        rows = [measure_variants(size, sys.stderr) for size in args.sizes or [1_000_000]]
        _write_rows(rows, format_variants_table, args.json, out)
        return
    rows = [
        measure(size, sys.stderr, args.scores, strategy)
        for size in args.sizes or DEFAULT_SIZES
        for strategy in args.strategies
    ]
    _write_rows(rows, format_table, args.json, out)


def _write_rows(
    rows: list[dict[str, Any]],
    table: Callable[[list[dict[str, Any]]], str],
    as_json: bool,
    out: TextIO,
) -> None:
    if as_json:
        json.dump(rows, out, indent=2)
        out.write("\n")
    else:
        out.write(table(rows) + "\n")


def _size(text: str) -> int:
    try:
        size = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if size < 1:
        raise argparse.ArgumentTypeError(f"sizes must be >= 1, got {size}")
    return size


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
        default="random",
        help="relevance scores: random in [0, 1), five levels (0, 0.25, ..., 1.0) at random,"
        " or all equal (0.5), to time ties (default: %(default)s)",
    )
    bench.add_argument(
        "--strategies",
        choices=STRATEGIES,
        nargs="+",
        default=["greedy"],
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
    bench.set_defaults(run=run_bench)
