"""The `skeleton-compressor` command: demo, compress, count and bench."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, NoReturn, TextIO

from .. import __version__
from .._backends.choice import BACKENDS, chosen_backend
from .._backends.loader import load_backend
from .._backends.protocol import STRATEGIES
from .._encodings import TiktokenFailure
from ..errors import BudgetExceededError
from ..policy import ON_OVERFLOW, ORDERS
from ..validation import DEFAULT_MAX_WORK
from .compress import Options, compress_file, written
from .demo import run_demo
from .input import InputError, OutputError, writing_output
from .progress import progress

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

PROG = "skeleton-compressor"


class BudgetError(Exception):
    """A budget the overflow policy refused to go over, reported as one line on stderr."""


EXIT_BAD_INPUT, EXIT_USAGE, EXIT_BUDGET = 1, 2, 3
# Input or output that cannot be read or written, or memory that ran out: failures as final
# as bad input, with the same status.
EXIT_FAILED = EXIT_BAD_INPUT
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
        previous=args.previous,
        max_value_loss=args.max_value_loss,
        headroom=args.headroom,
        max_work=args.max_work,
    )
    try:
        with progress(f"{PROG}: compressing {args.file}", sys.stderr):
            result = compress_file(args.file, options)
    except BudgetExceededError as error:
        raise BudgetError(str(error)) from None
    with writing_output():
        out.flush()
        written(result, out.buffer)
        out.buffer.flush()


# What JSON writes for an integer >= 0 (leading zeros allowed): int() would also take a sign,
# spaces, underscores and other scripts' digits.
_BUDGET = re.compile("[0-9]+")


def _budget_argument(text: str) -> int:
    if not _BUDGET.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    with _unlimited_int_digits():
        return int(text)


@contextmanager
def _unlimited_int_digits() -> Iterator[None]:
    """Python 3.11+ refuses to convert an int of more than 4,300 digits to or from a string
    by default (a guard for untrusted text); a budget is any int >= 0 the user typed, read
    and written back in the metadata. The record readers keep their own limit."""
    limit = getattr(sys, "get_int_max_str_digits", None)
    if limit is None:
        yield
        return
    before = limit()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


def _floor_argument(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text}")
    return value


def _max_work_argument(text: str) -> int | None:
    if text == "none":
        return None
    if not _BUDGET.fullmatch(text) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 or none, got {text!r}")
    return int(text)


def _share_argument(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text}")
    return value + 0.0  # -0 is 0


class _Parser(argparse.ArgumentParser):
    """Bad usage as one line (and exit status 2), like every other error."""

    commands: argparse._SubParsersAction[_Parser] | None = None

    def error(self, message: str) -> NoReturn:
        line = " ".join(message.split())
        self.exit(EXIT_USAGE, f"{self.prog}: error: {line} (see --help)\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: None = None
    ) -> argparse.Namespace:
        # An option or argument after the command's name, which that command does not take,
        # is told by that command.
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            given = list(sys.argv[1:] if args is None else args)
            name = str(getattr(parsed, "command", ""))
            after = given[given.index(name) + 1 :] if name in given else []
            chosen = self.commands.choices.get(name) if self.commands else None
            teller = chosen if chosen is not None and all(a in after for a in extra) else self
            teller.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        # argparse's own writes the message through `_print_message`, where a closed
        # standard error would look like the closed standard output below.
        if message and sys.stderr is not None:
            with suppress(OSError):
                sys.stderr.write(message)
        sys.exit(status)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse passes over an error writing --help or --version to standard output;
        # it is told, as for any output. Only those come here (`exit` writes the rest): a
        # file of None is a standard output that is closed, which argparse would take for
        # standard error.
        if message and file is None:
            file = _standard_output()
        if message and file is sys.stdout:
            file.write(message)
            return
        super()._print_message(message, file)


_INPUT_FORMAT = """\
input: a JSON array of records, JSON Lines (one record per line), or a JSON object whose
first key is "fragments" (this command's own output, to compress again for a grandchild).
UTF-8, with or without a byte order mark; standard JSON only (NaN and Infinity are refused).
A record is an object with "fragment_id" (a non-empty string), "token_count" (an integer
>= 0) and "relevance_score" (a number in [0, 1]), and may carry "required" (true or false),
"group" (null or a non-empty string: a group is kept or dropped whole), "variant_of" (null or
a non-empty string: records sharing one are renderings of one thing, at most one of them
kept) and "content"; other fields are kept but not read.
With --encoding, a record without "token_count" is counted from its "content".

output: {"fragments": [the kept records, byte for byte as they came in, in output order],
"skeleton_metadata": {...}}, and with --explain "decisions": {fragment_id: {"kept",
"reason", "rank", "budget_left"}}.

exit status: 0 done; 1 bad input (naming the record, and its line for JSON Lines), input
that cannot be read, output that cannot be written, or out of memory; 2 bad usage; 3 the
required records exceed the budget under --on-overflow raise or strict, or a positive budget
fits nothing under raise (strict keeps nothing: 0); 130 interrupted (Ctrl-C). Each
failure is one line on stderr, except output cut short by a reader that stopped (| head):
status 1, silently.
"""


def build_parser() -> _Parser:
    parser = _Parser(prog=PROG, description="Pick the context fragments a child plan inherits.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    parser.commands = commands

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

    demo = commands.add_parser(
        "demo",
        help="compress a built-in parent plan into three subplans",
        description="Compress a built-in parent plan into three subplans, with the budget "
        "each child gets, what it keeps and drops, and what the three cost with a prompt "
        "cache.",
    )
    common(demo)
    demo.add_argument(
        "--verbose",
        action="store_true",
        help="list every fragment of every child, kept and dropped (by default the best few)",
    )
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
        help="the skeleton budget in tokens: an integer >= 0, in the digits 0-9",
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
        "--max-work",
        type=_max_work_argument,
        default=DEFAULT_MAX_WORK,
        metavar="N",
        help="the most work --strategy optimal may do per call, in its own steps, or none "
        "for no limit; past it, the best selection found is kept and the metadata says "
        f'"exact": false (default: {DEFAULT_MAX_WORK}, about a second)',
    )
    compress.add_argument(
        "--explain",
        action="store_true",
        help='add "decisions": why each record was kept or dropped',
    )
    compress.add_argument(
        "--previous",
        metavar="PREV",
        help="an earlier output of compress (or any records file; - for standard input): "
        "keep first, in its order, the longest leading run of its records that this input "
        "still has (the same fragment_id, token_count and content) and that "
        "--max-value-loss allows, so that a prompt cache serves them again; FILE is then "
        "read whole, through the library (slower)",
    )
    compress.add_argument(
        "--max-value-loss",
        type=_share_argument,
        default=0.0,
        metavar="X",
        help="with --previous, the share of the value kept without it that reusing it may "
        "cost, in [0, 1) (default: 0)",
    )
    compress.add_argument(
        "--headroom",
        type=_share_argument,
        default=0.0,
        metavar="H",
        help="with --previous, when the reused run breaks anyway, the share of the budget "
        "left free for the next turns, in [0, 1) (default: 0)",
    )

    def checked(args: argparse.Namespace) -> None:
        if args.file == "-" and args.previous == "-":
            compress.error("FILE and --previous cannot both be standard input (-)")

    compress.set_defaults(run=run_compress, check=checked)

    from .bench.command import add_bench_command
    from .count import add_count_command, add_encoding_option

    add_encoding_option(
        compress, "count the content of records without a token_count with this encoding"
    )
    add_count_command(commands)
    add_bench_command(commands)
    return parser


def _fail(message: object, status: int) -> int:
    _say(f"{PROG}: error: {' '.join(str(message).split())}\n")
    return status


def _say(line: str) -> None:
    """`line` on stderr, if stderr takes it: closed or full, there is nowhere else to say it,
    and the exit status still tells."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(line)
        stream.flush()
    except (OSError, ValueError):
        _silence(stream)


def _silence(stream: TextIO | None) -> None:
    """Points `stream`'s descriptor at the null device, as the Python documentation advises
    after a write to it failed: otherwise its flush at exit fails again, prints "Exception
    ignored" and turns the exit status into 120."""
    if stream is None:
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)
    except (OSError, ValueError):
        pass  # no descriptor to point anywhere: nothing is flushed to one at exit either


def _standard_output() -> TextIO:
    # Python sets sys.stdout to None when the process starts with descriptor 1 closed.
    if sys.stdout is None:
        raise OutputError("cannot write the output: standard output is closed")
    return sys.stdout


def main(argv: Sequence[str] | None = None) -> int:
    """The command: its exit status, and on failure one line on stderr, never a traceback."""
    try:
        with _unlimited_int_digits():
            return _command(argv)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except MemoryError:
        return _fail("out of memory", EXIT_FAILED)


def _command(argv: Sequence[str] | None) -> int:
    try:
        return _run(argv)
    except InputError as error:
        return _fail(error, EXIT_BAD_INPUT)
    except BudgetError as error:
        return _fail(error, EXIT_BUDGET)
    except ImportError as error:
        return _fail(error, EXIT_BAD_INPUT)
    except TiktokenFailure as error:
        return _fail(error, EXIT_FAILED)
    except OutputError as error:
        _silence(sys.stdout)
        return _fail(error, EXIT_FAILED)
    except BrokenPipeError:
        _silence(sys.stdout)
        return EXIT_FAILED


def _run(argv: Sequence[str] | None) -> int:
    args = _parsed(build_parser(), argv)
    try:
        if hasattr(args, "backend"):
            load_backend(args.backend)
        elif getattr(args, "chooses_counter", False):
            chosen_backend("auto")  # count's counter follows SKELETON_COMPRESSOR_BACKEND
    except ValueError as error:
        return _fail(error, EXIT_USAGE)
    except ImportError:
        pass  # said when the backend is used
    out = _standard_output()
    args.run(args, out)
    with writing_output():
        out.flush()
    return 0


def _parsed(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    # --help and --version print, then exit: before Python 3.11 argparse lets an error
    # writing them through, and what waits in the buffer is flushed here, where an error is
    # told, not at exit (where it prints "Exception ignored" and makes the status 120).
    with writing_output():
        try:
            args = parser.parse_args(argv)
            check = getattr(args, "check", None)
            if check is not None:
                check(args)
            return args
        except SystemExit:
            if sys.stdout is not None:
                sys.stdout.flush()
            raise
