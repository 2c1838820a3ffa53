"""The command's input: a file's bytes (or standard input's), and the error for bad input."""

from __future__ import annotations

import sys

__all__ = ["InputError", "read_input"]


class InputError(Exception):
    """Bad input, reported as one line on stderr."""


def read_input(path: str) -> bytes:
    """The bytes of the file at `path`, or of standard input for `-`."""
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
