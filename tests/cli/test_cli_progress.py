"""The progress line: shown on a terminal while work runs past its delay, erased at the end;
never on a file or a pipe, nor for work done before the delay."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from skeleton_compressor.cli.progress import progress
from support.cli_runner import run_cli


class _Terminal(io.StringIO):
    """A terminal that says when the progress line was written `lines` times."""

    def __init__(self, lines: int = 0) -> None:
        super().__init__()
        self.lines = lines
        self.shown = threading.Event()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.getvalue().count("work... ") >= self.lines:
            self.shown.set()
        return written


def test_a_long_call_shows_a_line_that_keeps_time_and_is_erased() -> None:
    stream = _Terminal(lines=3)
    with progress("work", stream, delay=0.01, every=0.01):
        assert stream.shown.wait(10)
    text = stream.getvalue()
    assert text.startswith("\r\x1b[Kwork... 0 s")
    assert text.count("work... ") >= 3
    assert text.endswith("\r\x1b[K")


def test_a_short_call_shows_nothing() -> None:
    stream = _Terminal()
    with progress("work", stream, delay=60):
        pass
    assert stream.getvalue() == ""


def test_nothing_on_a_file_or_a_pipe() -> None:
    stream = io.StringIO()
    with progress("work", stream, delay=0, every=0):
        pass
    assert stream.getvalue() == ""


def test_the_work_s_error_still_comes_through() -> None:
    stream = _Terminal(lines=1)
    with pytest.raises(KeyError), progress("work", stream, delay=0.01, every=0.01):
        assert stream.shown.wait(10)
        raise KeyError("x")
    assert stream.getvalue().endswith("\r\x1b[K")


def test_the_command_line_writes_no_progress_to_a_pipe(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5}\n')
    completed = run_cli("compress", str(path), "--budget", "5", text=True)
    assert completed.returncode == 0
    assert completed.stderr == ""
