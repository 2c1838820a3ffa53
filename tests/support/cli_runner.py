"""The `skeleton-compressor` command run in the test's own process, as the interpreter would run
it: standard streams built as Python builds them (buffered, as without PYTHONUNBUFFERED), an
exit status from `SystemExit`, and the flush at exit that makes the status 120 when standard
output or error cannot take what is left in its buffer. Starting an interpreter costs more
than most commands take, so only what needs a real process (the console script, signals,
pipes, memory limits) starts one.

A standard stream is given as the bytes to read (standard input), a file descriptor the
caller opened (wrapped as Python wraps descriptors 0, 1 and 2, and left open), `CLOSED` for a
process started without it (Python then makes `sys.stdin` or `sys.stdout` None), or, for
standard output and error, nothing: captured, as `capture_output=True` would.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from subprocess import CompletedProcess
from typing import IO, Any, Union

from skeleton_compressor.cli.main import main

__all__ = ["CLOSED", "run_cli"]

PROG = "skeleton-compressor"
# What the interpreter exits with when flushing a standard stream at exit fails.
EXIT_FLUSH_FAILED = 120


class Closed:
    """A standard stream the process started without."""


CLOSED = Closed()

Input = Union[bytes, str, int, Closed]
Output = Union[int, Closed, None]


def run_cli(
    *args: str,
    stdin: Input = b"",
    stdout: Output = None,
    stderr: Output = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    text: bool = False,
) -> CompletedProcess[Any]:
    """`skeleton-compressor ARGS`: its exit status and what it wrote to captured streams
    (bytes, or UTF-8 text with `text`), None for a stream not captured."""
    streams = {
        "stdin": _reader(stdin),
        "stdout": _writer(stdout, "strict", line_buffering=False),
        # Python's standard error: line-buffered, and never failing to encode.
        "stderr": _writer(stderr, "backslashreplace", line_buffering=True),
    }
    try:
        with _environment(env), _directory(cwd), _standard_streams(streams):
            status = _exit_status(list(args))
            status = _flushed_at_exit(status, streams)
        out = _captured(streams["stdout"], stdout)
        err = _captured(streams["stderr"], stderr)
    finally:
        for stream in streams.values():
            if stream is not None:
                with suppress(OSError, ValueError):
                    stream.close()
    if text:
        return CompletedProcess([PROG, *args], status, _decoded(out), _decoded(err))
    return CompletedProcess([PROG, *args], status, out, err)


def _decoded(data: bytes | None) -> str | None:
    return None if data is None else data.decode()


def _reader(given: Input) -> io.TextIOWrapper | None:
    if isinstance(given, Closed):
        return None
    if isinstance(given, int):
        return _standard(open(given, "rb", closefd=False), "strict", line_buffering=False)
    data = given.encode() if isinstance(given, str) else given
    return _standard(io.BufferedReader(io.BytesIO(data)), "strict", line_buffering=False)


def _writer(given: Output, errors: str, line_buffering: bool) -> io.TextIOWrapper | None:
    if isinstance(given, Closed):
        return None
    if isinstance(given, int):
        return _standard(open(given, "wb", closefd=False), errors, line_buffering)
    return _standard(io.BufferedWriter(_Captured()), errors, line_buffering)


class _Captured(io.BytesIO):
    """What a captured stream was given; kept when the stream is closed."""

    kept = b""

    def close(self) -> None:
        self.kept = self.getvalue()
        super().close()


def _standard(buffer: IO[bytes], errors: str, line_buffering: bool) -> io.TextIOWrapper:
    # As the interpreter makes sys.stdin, sys.stdout and sys.stderr on POSIX: no newline
    # translation, and the buffer within reach as `.buffer`.
    return io.TextIOWrapper(
        buffer,
        encoding="utf-8",
        errors=errors,
        newline="\n",
        line_buffering=line_buffering,
    )


def _captured(stream: io.TextIOWrapper | None, given: Output) -> bytes | None:
    if given is not None or stream is None:
        return None
    raw = stream.buffer.raw  # type: ignore[attr-defined]
    assert isinstance(raw, _Captured)
    with suppress(OSError, ValueError):
        stream.flush()
    return raw.kept if raw.closed else raw.getvalue()


def _exit_status(argv: list[str]) -> int:
    """What `sys.exit(main())` in `__main__` makes the process's status."""
    try:
        return _status_of(main(argv))
    except SystemExit as done:
        return _status_of(done.code)
    except KeyboardInterrupt:
        # Uncaught, the interpreter ends itself by SIGINT.
        return -signal.SIGINT
    except Exception:
        _tell(traceback.format_exc())
        return 1


def _status_of(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    _tell(f"{code}\n")
    return 1


def _tell(text: str) -> None:
    if sys.stderr is not None:
        with suppress(OSError, ValueError):
            sys.stderr.write(text)


def _flushed_at_exit(status: int, streams: dict[str, io.TextIOWrapper | None]) -> int:
    """The interpreter flushes standard output, then error, at exit: a failure prints
    "Exception ignored" (for standard output) and makes the status 120."""
    for name in ("stdout", "stderr"):
        stream = streams[name]
        if stream is None or stream.closed:
            continue
        try:
            stream.flush()
        except (OSError, ValueError) as error:
            if name == "stdout":
                _tell(f"Exception ignored in: <{name}>\n{type(error).__name__}: {error}\n")
            status = EXIT_FLUSH_FAILED
    return status


@contextmanager
def _standard_streams(streams: dict[str, io.TextIOWrapper | None]) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = streams["stdin"], streams["stdout"], streams["stderr"]
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


@contextmanager
def _environment(changes: Mapping[str, str] | None) -> Iterator[None]:
    changes = dict(changes or {})
    saved = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


@contextmanager
def _directory(cwd: str | os.PathLike[str] | None) -> Iterator[None]:
    before = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)
