"""The command's input: a file's bytes (or standard input's), and the errors for input that
cannot be read and output that cannot be written."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["STANDARD_INPUT", "InputError", "OutputError", "read_input", "writing_output"]

STANDARD_INPUT = "standard input"


class InputError(Exception):
    """Bad input, reported as one line on stderr."""


class OutputError(Exception):
    """Output that cannot be written (a full disk, a closed standard output), reported as one
    line on stderr."""


def read_input(path: str) -> bytes:
    """The bytes of the file at `path`, or of standard input for `-`."""
    if path == "-":
        return _read_standard_input()
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None


def _read_standard_input() -> bytes:
    # Python sets sys.stdin to None when the process starts with descriptor 0 closed.
    if sys.stdin is None:
        raise InputError(f"cannot read {STANDARD_INPUT}: it is closed")
    try:
        return sys.stdin.buffer.read()
    except OSError as error:
        raise InputError(f"cannot read {STANDARD_INPUT}: {error.strerror or error}") from None


@contextmanager
def writing_output() -> Iterator[None]:
    """Raises `OutputError` for an `OSError` writing standard output in the block, except a
    `BrokenPipeError`: a reader that stopped reading (`| head`) is no error to report."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputError(f"cannot write the output: {error.strerror or error}") from None
