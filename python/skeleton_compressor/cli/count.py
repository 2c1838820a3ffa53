"""Token counting on the command line: the `count` command (`wc` for tokens), and
`compress --encoding`, which counts the content of records that carry no `token_count`."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from .._encodings import TiktokenFailure
from .._records.errors import RecordsError, worded
from .._records.reader import decoded
from ..tokens import DEFAULT_ENCODING, ENCODINGS, built_in
from .input import STANDARD_INPUT, InputError, read_input, writing_output
from .progress import progress

__all__ = ["add_count_command", "add_encoding_option"]


def add_encoding_option(command: argparse.ArgumentParser, what: str) -> None:
    command.add_argument("--encoding", choices=ENCODINGS, help=what)


def _read_exact_text(path: str) -> str:
    """The file's text as it is (no newline translation, which would change the count), less
    a UTF-8 byte order mark."""
    data = read_input(path)
    try:
        return decoded(data)
    except RecordsError as error:
        raise InputError(worded(error, STANDARD_INPUT if path == "-" else path)) from None


def run_count(args: argparse.Namespace, out: TextIO) -> None:
    # The file first: a path mistyped is told as such, not as a table tiktoken cannot load.
    text = _read_exact_text(args.file)
    counter = built_in(args.encoding or DEFAULT_ENCODING)
    with progress(f"skeleton-compressor: counting {args.file}", sys.stderr):
        try:
            count = counter.count(text)
        except TiktokenFailure as failure:
            raise failure.named(STANDARD_INPUT if args.file == "-" else args.file) from None
    with writing_output():
        out.write(f"{count}\n")


def add_count_command(commands: Any) -> None:
    count = commands.add_parser(
        "count",
        help="print the number of tokens in a text file, as tiktoken counts them",
        description="Print the number of tokens in a UTF-8 text file (wc for tokens): the "
        "count tiktoken gives for the same encoding, the text read as it is, less a byte "
        "order mark.",
    )
    count.add_argument("file", help="a UTF-8 text file, or - for standard input")
    add_encoding_option(count, f"the encoding to count with (default: {DEFAULT_ENCODING})")
    count.set_defaults(run=run_count, chooses_counter=True)
