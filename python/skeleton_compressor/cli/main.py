"""The `skeleton-compressor` command: demo, compress, count and bench."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from .. import __version__
from .._interface import STRATEGIES
from ..backend import BACKENDS, load_backend
from ..errors import BudgetExceededError
from ..policy import ON_OVERFLOW, ORDERS
from .compress import Options, compress_file, written
from .demo import run_demo
from .input import InputError

PROG = "skeleton-compressor"


class BudgetError(Exception):
    """A budget the overflow policy refused to go over, reported as one line on stderr."""


EXIT_BAD_INPUT, EXIT_USAGE, EXIT_BUDGET = 1, 2, 3
# What a shell reports for a process that SIGINT ended.
EXIT_INTERRUPTED = 130


def run_compress(args: argparse.Namespace, out: TextIO) -> None:
    options = Options(
        backend=args.backend,
        strategy=args.strategy,
        min_relevance=args.min_relevance,
        on_overflow=args.on_overflow,
        order=args.order,
        budget=args.budget,
        explain=args.explain,
        encoding=args.encoding,
    )
    try:
        result = compress_file(args.file, options)
    except BudgetExceededError as error:
        raise BudgetError(str(error)) from None
    out.flush()
    written(result, out.buffer)
    out.buffer.flush()


def _budget_argument(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def _floor_argument(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text}")
    return value


class _Parser(argparse.ArgumentParser):
    """Bad usage as one line (and exit status 2), like every other error."""

    def error(self, message: str) -> NoReturn:
        line = " ".join(message.split())
        self.exit(EXIT_USAGE, f"{self.prog}: error: {line} (see --help)\n")


_INPUT_FORMAT = """\
input: a JSON array of records, JSON Lines (one record per line), or a JSON object whose
first key is "fragments" (this command's own output, to compress again for a grandchild).
UTF-8, with or without a byte order mark; standard JSON only (NaN and Infinity are refused).
A record is an object with "fragment_id" (a non-empty string), "token_count" (an integer
>= 0) and "relevance_score" (a number in [0, 1]), and may carry "required" (true or false),
"group" (null or a non-empty string) and "content"; other fields are kept but not read.
With --encoding, a record without "token_count" is counted from its "content".

output: {"fragments": [the kept records, byte for byte as they came in, in output order],
"skeleton_metadata": {...}}, and with --explain "decisions": {fragment_id: {"kept",
"reason", "rank", "budget_left"}}.

exit status: 0 done; 1 bad input (one line on stderr naming the record, and its line for
JSON Lines); 2 bad usage; 3 the budget cannot be met under --on-overflow raise or strict.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Pick the context fragments a child plan inherits.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def common(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--strategy",
            choices=STRATEGIES,
            default="greedy",
            help="greedy skips what does not fit and goes on; prefix stops at the first "
            "fragment that does not fit; density walks by relevance per token; optimal keeps "
            "the most total relevance that fits (default: greedy)",
        )
        command.add_argument(
            "--backend",
            choices=BACKENDS,
            default="auto",
            help="rust (the compiled extension), python (the standard library), or auto: "
            "$SKELETON_COMPRESSOR_BACKEND, else rust when it is built (default: auto)",
        )

    demo = commands.add_parser("demo", help="compress a built-in parent plan into three subplans")
    common(demo)
    demo.set_defaults(run=run_demo)

    compress = commands.add_parser(
        "compress",
        help="compress fragment records from a JSON array, JSON Lines or output file",
        description="Keep the most relevant records that fit the budget.",
        epilog=_INPUT_FORMAT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compress.add_argument("file", help="the input file, or - for standard input")
    compress.add_argument(
        "--budget",
        type=_budget_argument,
        required=True,
        help="the skeleton budget in tokens (>= 0)",
    )
    common(compress)
    compress.add_argument(
        "--min-relevance",
        type=_floor_argument,
        default=0.0,
        help="keep records (or groups) below this relevance out unless required (default: 0)",
    )
    compress.add_argument(
        "--on-overflow",
        choices=ON_OVERFLOW,
        default="keep_top",
        help="when the required records alone exceed the budget, keep_top keeps them (over "
        f"it), strict and raise exit with status {EXIT_BUDGET}; when a positive budget fits "
        "nothing, keep_top keeps the top record (or group) alone, strict keeps nothing, "
        f"raise exits with status {EXIT_BUDGET} (default: keep_top)",
    )
    compress.add_argument(
        "--order",
        choices=ORDERS,
        default="ranking",
        help="order of the kept records: ranking (best first), input (as in the file), or "
        "edges (best at both ends) (default: ranking)",
    )
    compress.add_argument(
        "--explain",
        action="store_true",
        help='add "decisions": why each record was kept or dropped',
    )
    compress.set_defaults(run=run_compress)

    from .bench import add_bench_command
    from .count import add_count_command, add_encoding_option

    add_encoding_option(
        compress, "count the content of records without a token_count with this encoding"
    )
    add_count_command(commands)
    add_bench_command(commands)
    return parser


def _fail(message: object, status: int) -> int:
    print(f"{PROG}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if hasattr(args, "backend"):
            load_backend(args.backend)
    except ValueError as error:
        return _fail(error, EXIT_USAGE)
    except ImportError:
        pass  # said when the backend is used
    try:
        args.run(args, sys.stdout)
    except InputError as error:
        return _fail(error, EXIT_BAD_INPUT)
    except BudgetError as error:
        return _fail(error, EXIT_BUDGET)
    except ImportError as error:
        return _fail(error, EXIT_BAD_INPUT)
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    return 0
