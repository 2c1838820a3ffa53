"""A progress line on stderr for work over a second, when stderr is a terminal: the command
and how long it has run, rewritten each second and erased when the work ends, so that a
long call (a million records with --explain) is seen to be working. Nothing is written to a
file or a pipe, whose reader wants the errors alone."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["is_terminal", "progress"]

_ERASE = "\r\x1b[K"


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def _write(stream: TextIO, text: str) -> bool:
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        return False
    return True


@contextmanager
def progress(
    what: str, stream: TextIO | None, *, delay: float = 1.0, every: float = 1.0
) -> Iterator[None]:
    """Shows `what... N s` on `stream` from `delay` seconds into the work, every `every`
    seconds, while the work runs (the extension lets go of the interpreter while it works, so
    the line keeps time)."""
    if stream is None or not is_terminal(stream):
        yield
        return
    start = time.monotonic()
    done = threading.Event()
    shown = threading.Event()

    def show() -> None:
        wait = delay
        while not done.wait(wait):
            seconds = int(time.monotonic() - start)
            if not _write(stream, f"{_ERASE}{what}... {seconds} s"):
                return
            shown.set()
            wait = every

    thread = threading.Thread(target=show, name="progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown.is_set():
            _write(stream, _ERASE)
