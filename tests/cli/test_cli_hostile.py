"""The command line under hostile conditions: standard input closed or opened write-only,
standard output full or closed, standard error closed or full, Ctrl-C while waiting on
standard input, building the parser or loading the backend, a memory limit, and budgets past
Python's int-string limit or in other digits.
Each failure is one line on stderr, never a traceback, with the exit status that docs/cli.md
lists. (Ctrl-C during a long `optimal` call is in runtime/test_interrupt.py.)

Most run in this process, with standard streams as the interpreter makes them (None for a
closed descriptor, the descriptor itself for /dev/full). A process of its own is started only
where the condition needs one: a reader that stopped reading (SIGPIPE), standard error
unwritable when the interpreter exits, Ctrl-C from outside while blocked on a pipe, and a
limit on the memory of the whole process.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Union

import pytest
from support.cli_runner import CLOSED, run_cli
from support.ctrl_c import as_a_terminal_delivers

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="closes descriptors and sends SIGINT (POSIX)"
)

PROG = "skeleton-compressor: error: "
RECORDS = [
    {"fragment_id": "a", "token_count": 10, "relevance_score": 0.5},
    {"fragment_id": "b", "token_count": 20, "relevance_score": 0.7},
]
# Each command that writes output, on each backend it has (`count` has no --backend).
WRITERS = ["compress rust", "compress python", "demo rust", "demo python", "count", "bench"]
# Each command that reads a file or standard input.
READERS = ["compress rust", "compress python", "count"]
NO_SPACE = f"cannot write the output: {os.strerror(errno.ENOSPC)}"
needs_dev_full = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")

Stream = Union[int, IO[Any], None]
# Standard output buffered, as users run the command: what is left in the buffer after a
# failed write is flushed again at exit.
BUFFERED = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    (tmp_path / "in.txt").write_text("hello tokens\n")
    return tmp_path


def command(name: str, files: Path, source: str | None = None) -> list[str]:
    """The arguments of `name` ("compress rust", "count", ...), reading `source` (a path,
    or - for standard input) or else the fixture's file."""
    verb, _, backend = name.partition(" ")
    if verb == "compress":
        args = ["compress", source or str(files / "in.jsonl"), "--budget", "30"]
    elif verb == "count":
        args = ["count", source or str(files / "in.txt")]
    elif verb == "bench":
        args = ["bench", "--sizes", "1"]
    else:
        args = ["demo"]
    return args + (["--backend", backend] if backend else [])


def arranged(closed: Sequence[int] = (), memory: int | None = None) -> Callable[[], None]:
    """What the child does before it starts: close descriptors, limit its address space,
    and take Ctrl-C as a terminal would deliver it even when the runner ignores SIGINT."""

    def arrange() -> None:
        as_a_terminal_delivers()
        for descriptor in closed:
            os.close(descriptor)
        if memory is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory, resource.RLIM_INFINITY))

    return arrange


def run_process(
    args: Sequence[str],
    *,
    stdin: Stream = subprocess.DEVNULL,
    stdout: Stream = subprocess.PIPE,
    stderr: Stream = subprocess.PIPE,
    closed: Sequence[int] = (),
    memory: int | None = None,
    env: dict[str, str] = BUFFERED,
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "skeleton_compressor", *args],
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=env,
        preexec_fn=arranged(closed, memory),
        timeout=60,
    )


def run(args: Sequence[str], **streams: Any) -> subprocess.CompletedProcess[bytes]:
    """The command in this process; `streams` as `run_cli` takes them."""
    return run_cli(*args, **streams)


def assert_one_line(completed: subprocess.CompletedProcess[bytes], line: str, status: int) -> None:
    assert (completed.returncode, completed.stderr.decode()) == (status, PROG + line + "\n")


# Standard input


@pytest.mark.parametrize("reader", READERS)
def test_closed_standard_input(files: Path, reader: str) -> None:
    completed = run(command(reader, files, "-"), stdin=CLOSED)
    assert_one_line(completed, "cannot read standard input: it is closed", 1)
    assert completed.stdout == b""


@pytest.mark.parametrize("reader", READERS)
def test_standard_input_opened_write_only(files: Path, reader: str) -> None:
    with (files / "sink").open("wb") as sink:
        completed = run(command(reader, files, "-"), stdin=sink.fileno())
    assert_one_line(completed, f"cannot read standard input: {os.strerror(errno.EBADF)}", 1)


# Standard output


@needs_dev_full
@pytest.mark.parametrize("writer", WRITERS)
def test_full_standard_output(files: Path, writer: str) -> None:
    with open("/dev/full", "wb") as full:
        completed = run(command(writer, files), stdout=full.fileno())
    assert_one_line(completed, NO_SPACE, 1)


@needs_dev_full
@pytest.mark.parametrize("option", [["--help"], ["compress", "--help"], ["--version"]])
def test_help_to_a_full_standard_output(option: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        completed = run(option, stdout=full.fileno())
    assert_one_line(completed, NO_SPACE, 1)


@needs_dev_full
@pytest.mark.parametrize("option", [["--help"], ["compress", "--help"], ["--version"]])
def test_help_to_a_full_unbuffered_standard_output(option: list[str]) -> None:
    # Unbuffered, the write fails inside argparse, which passes over it; the command tells it.
    with open("/dev/full", "wb") as full:
        unbuffered = {**BUFFERED, "PYTHONUNBUFFERED": "1"}
        completed = run_process(option, stdout=full.fileno(), env=unbuffered)
    assert_one_line(completed, NO_SPACE, 1)


@pytest.mark.parametrize("writer", WRITERS)
def test_closed_standard_output(files: Path, writer: str) -> None:
    completed = run(command(writer, files), stdout=CLOSED)
    assert_one_line(completed, "cannot write the output: standard output is closed", 1)


@pytest.mark.parametrize("option", [["--help"], ["compress", "--help"], ["--version"]])
def test_help_to_a_closed_standard_output(option: list[str]) -> None:
    # argparse, given no standard output, writes to standard error and exits 0.
    completed = run(option, stdout=CLOSED)
    assert_one_line(completed, "cannot write the output: standard output is closed", 1)


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_output_cut_short_by_a_reader_that_stopped_is_no_error(
    tmp_path: Path, backend: str
) -> None:
    records = tmp_path / "many.jsonl"
    lines = (
        json.dumps({"fragment_id": f"f{i}", "token_count": 1, "relevance_score": 0.5})
        for i in range(10_000)
    )
    records.write_text("\n".join(lines) + "\n")
    args = ["compress", str(records), "--budget", "10000", "--backend", backend]
    process = subprocess.Popen(
        [sys.executable, "-m", "skeleton_compressor", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=BUFFERED,
    )
    # Far more output than a pipe holds, to a reader that is gone (`| head -c 0`).
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    assert (process.stderr.read(), process.wait(timeout=60)) == (b"", 1)


# Standard error: the status still tells, and nothing lands on standard output instead.


@pytest.mark.parametrize("closed", [[2], [1, 2]])
def test_bad_usage_with_standard_error_closed_keeps_its_exit_status(closed: list[int]) -> None:
    completed = run_process(
        ["compress", "--budget"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        closed=closed,
    )
    assert completed.returncode == 2


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("how", ["closed", "full"])
def test_unwritable_standard_error_keeps_the_exit_status(
    files: Path, backend: str, how: str
) -> None:
    args = ["compress", str(files / "in.jsonl"), "--budget", "5", "--on-overflow", "raise"]
    args += ["--backend", backend]
    if how == "closed":
        completed = run_process(args, stderr=subprocess.DEVNULL, closed=[2])
    else:
        if not Path("/dev/full").exists():
            pytest.skip("no /dev/full")
        with open("/dev/full", "wb") as full:
            completed = run_process(args, stderr=full)
    assert (completed.returncode, completed.stdout) == (3, b"")


# Ctrl-C

# How a test waits for a child to be under way where /proc does not tell.
STARTED_WITHIN = 5.0


def wait_until_reading(process: subprocess.Popen[bytes], wait: str = "pipe") -> None:
    """Until the child waits on its input (in the kernel's function named with `wait`):
    Linux names the wait in /proc; elsewhere a start-up time that a loaded machine may
    need."""
    wchan = Path(f"/proc/{process.pid}/wchan")
    deadline = time.monotonic() + STARTED_WITHIN
    while time.monotonic() < deadline:
        try:
            if wait in wchan.read_text():
                return
        except OSError:
            time.sleep(1.0)
            return
        time.sleep(0.01)


@pytest.mark.parametrize("reader", READERS)
def test_ctrl_c_while_waiting_on_standard_input(files: Path, reader: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "skeleton_compressor", *command(reader, files, "-")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=BUFFERED,
        preexec_fn=arranged(),
    )
    try:
        wait_until_reading(process)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert (process.returncode, out, err.decode()) == (130, b"", PROG + "interrupted\n")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes (POSIX)")
@pytest.mark.parametrize("reader", READERS)
def test_ctrl_c_while_waiting_for_a_named_pipes_writer(files: Path, reader: str) -> None:
    fifo = files / "no-writer-yet"
    os.mkfifo(fifo)
    process = subprocess.Popen(
        [sys.executable, "-m", "skeleton_compressor", *command(reader, files, str(fifo))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=BUFFERED,
        preexec_fn=arranged(),
    )
    try:
        wait_until_reading(process, "partner")  # open() waits in wait_for_partner
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert (process.returncode, out, err.decode()) == (130, b"", PROG + "interrupted\n")


@contextmanager
def ctrl_c_raises_keyboard_interrupt() -> Iterator[None]:
    """SIGINT as Python takes it by default, even where the runner ignores it."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


# Ctrl-C as a step of main() starts: building the parser, loading the backend.
@pytest.mark.parametrize(
    ("step", "writer"),
    [("build_parser", writer) for writer in WRITERS]
    + [("load_backend", writer) for writer in WRITERS if writer not in ("count", "bench")],
)
def test_ctrl_c_while_building_the_parser_or_loading_the_backend(
    files: Path, step: str, writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = importlib.import_module("skeleton_compressor.cli.main")
    original = getattr(cli, step)

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGINT)
        return original(*args, **kwargs)

    monkeypatch.setattr(cli, step, interrupted)
    with ctrl_c_raises_keyboard_interrupt():
        completed = run(command(writer, files))
    assert_one_line(completed, "interrupted", 130)
    assert completed.stdout == b""


# Memory

# Room for the interpreter and the extension, far short of reading /dev/zero whole.
MEMORY_LIMIT = 400 * 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux")
@pytest.mark.parametrize("reader", READERS)
def test_out_of_memory(files: Path, reader: str) -> None:
    completed = run_process(command(reader, files, "/dev/zero"), memory=MEMORY_LIMIT)
    assert_one_line(completed, "out of memory", 1)


# The budget


# An Arabic-Indic and a fullwidth five, which int() reads as 5.
@pytest.mark.parametrize("budget", ["\u0665", "\uff15", "+5", " 5", "5 ", "5_000"])
def test_a_budget_is_ascii_digits_only(files: Path, budget: str) -> None:
    completed = run(["compress", str(files / "in.jsonl"), "--budget", budget])
    assert completed.returncode == 2
    assert completed.stderr.decode() == (
        "skeleton-compressor compress: error: argument --budget: must be an integer >= 0, "
        f"got {budget!r} (see --help)\n"
    )


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("budget", ["1" * 5000, "0030"])
def test_any_budget_of_digits_is_taken(files: Path, backend: str, budget: str) -> None:
    args = ["compress", str(files / "in.jsonl"), "--budget", budget, "--explain"]
    completed = run([*args, "--backend", backend])
    assert (completed.returncode, completed.stderr) == (0, b"")
    # Read as text: this process keeps Python's limit on long ints.
    output = completed.stdout.decode()
    digits = budget.lstrip("0")
    assert f'"skeleton_budget": {digits},' in output
    # The first record ranked had the whole budget left.
    assert f'"budget_left": {digits}}}' in output
    assert '"fragments_kept": 2' in output
