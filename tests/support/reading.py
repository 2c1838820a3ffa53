"""How far another process has read a file, from Linux's `/proc`: for tests that act while a
command is reading its input (interrupt it, change the file under it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["has_proc", "position", "wait_for_position", "wait_for_whole_read"]


def has_proc() -> bool:
    return sys.platform.startswith("linux") and Path("/proc/self/fdinfo").is_dir()


def position(pid: int, path: Path) -> int | None:
    """Where the process's descriptor open on `path` is in it; None while none is open."""
    target = str(path.resolve())
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{descriptor}") != target:
                continue
            with open(f"/proc/{pid}/fdinfo/{descriptor}") as info:
                for line in info:
                    if line.startswith("pos:"):
                        return int(line.split()[1])
        except OSError:
            continue  # closed meanwhile
    return None


def _bytes_read(pid: int) -> int:
    """All the bytes the process has read so far, from any file."""
    with open(f"/proc/{pid}/io") as io:
        for line in io:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise AssertionError(f"no rchar in /proc/{pid}/io")


def _wait(process: subprocess.Popen[bytes], until: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the process ended before it {what}")
        if until():
            return
        time.sleep(0.0005)
    raise AssertionError(f"the process had not {what} within 60 s")


def wait_for_position(process: subprocess.Popen[bytes], path: Path, at_least: int) -> int:
    """Waits until `process` has `path` open and has read `at_least` bytes of it or more;
    where it is."""
    found: list[int] = []

    def there() -> bool:
        at = position(process.pid, path)
        found[:] = [] if at is None else [at]
        return at is not None and at >= at_least

    _wait(process, there, f"read {at_least} bytes of {path}")
    return found[0]


def wait_for_whole_read(process: subprocess.Popen[bytes], path: Path) -> None:
    """Waits until `process` has read as many bytes as `path` holds since it first had it
    open, and has closed it: it holds the whole input, read once or more."""
    size = path.stat().st_size
    before: list[int] = []  # what it had read of other files when it opened this one

    def read_and_closed() -> bool:
        at = position(process.pid, path)
        if not before:
            if at is not None:
                before.append(_bytes_read(process.pid) - at)
            return False
        return at is None and _bytes_read(process.pid) - before[0] >= size

    _wait(process, read_and_closed, f"read all of {path} and closed it")
