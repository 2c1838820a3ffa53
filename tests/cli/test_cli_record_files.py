"""`compress` on inputs that are not quiet regular files: a named pipe, a device that never
ends, a file rewritten while it is read. Each is opened once, and what is printed is what was
ranked. The command runs as a process: one that waits on a pipe forever can be timed out,
one that runs out of memory is limited alone, and one that reads is watched in /proc."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.cli_runner import run_cli
from support.reading import has_proc, position, wait_for_position

BACKENDS = ["rust", "python"]
PROG = "skeleton-compressor: error: "
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="named pipes, rlimits")


def command(path: Path | str, backend: str, budget: int = 100) -> list[str]:
    return [
        *(sys.executable, "-m", "skeleton_compressor", "compress", str(path)),
        *("--budget", str(budget), "--backend", backend),
    ]


def record(fragment_id: str, tokens: int, score: float) -> str:
    return json.dumps({"fragment_id": fragment_id, "token_count": tokens, "relevance_score": score})


RECORDS = "\n".join(record(f"r{index}", 10 + index, index / 8) for index in range(6)) + "\n"


class _Writer(threading.Thread):
    """Opens the pipe for writing (which waits for a reader), writes everything and closes
    it at once, as `printf ... > fifo` does."""

    def __init__(self, fifo: Path, data: bytes) -> None:
        super().__init__(daemon=True)
        self.fifo, self.data = fifo, data

    def run(self) -> None:
        try:
            with open(self.fifo, "wb") as out:
                out.write(self.data)
        except OSError:
            pass  # the reader gave up: the test says so

    def release(self) -> None:
        """Lets a writer still waiting for a reader go."""
        if self.is_alive():
            os.close(os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK))
        self.join(5)


@posix_only
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_named_pipe_whose_writer_closed_at_once_is_read_once(
    tmp_path: Path, backend: str
) -> None:
    regular = tmp_path / "records.jsonl"
    regular.write_text(RECORDS)
    expected = run_cli("compress", str(regular), "--budget", "100", "--backend", backend)
    assert expected.returncode == 0, expected
    # A second open of the pipe would wait for a writer that has gone: most rounds show it.
    for round_ in range(5):
        fifo = tmp_path / f"fifo-{round_}"
        os.mkfifo(fifo)
        writer = _Writer(fifo, RECORDS.encode())
        writer.start()
        try:
            completed = subprocess.run(command(fifo, backend), capture_output=True, timeout=20)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"round {round_}: no answer within 20 s") from None
        finally:
            writer.release()
        assert (completed.returncode, completed.stdout) == (0, expected.stdout), completed


@posix_only
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_device_that_never_ends_under_a_memory_limit_is_one_error(backend: str) -> None:
    import resource

    def limited() -> None:
        limit = 600_000 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    completed = subprocess.run(
        command("/dev/zero", backend, 5),
        capture_output=True,
        timeout=120,
        preexec_fn=limited,
    )
    # Not ended by a signal (an abort on a failed allocation), and a MemoryError, whether or
    # not the command words it.
    assert completed.returncode > 0, completed
    last = completed.stderr.decode().splitlines()[-1]
    assert last in ("MemoryError", PROG + "out of memory"), completed.stderr


# Enough records that reading them takes a while: the first is kept, and found again in the
# first chunk (8 MiB) when the kept records are read back.
CHANGING_RECORDS = 500_000
CHUNK = 8 << 20


def _changing_file(path: Path) -> tuple[bytes, bytes]:
    """Writes the records; the first record, and a rewrite of it of the same length."""
    first = record("top-0000", 90, 1.0)
    rest = (record(f"r-{index:07d}", 50, 0.25) for index in range(1, CHANGING_RECORDS))
    path.write_text("\n".join((first, *rest)) + "\n")
    rewritten = record("XXXXXXXX", 99, 1.0)
    assert len(rewritten) == len(first)
    return first.encode(), rewritten.encode()


# The Python backend reads a file once, whole: what it prints is what it ranked.
@pytest.mark.slow
@pytest.mark.skipif(not has_proc(), reason="watches the reader through /proc")
def test_a_kept_record_rewritten_while_the_file_is_read_is_never_printed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "records.jsonl"
    first, rewritten = _changing_file(path)
    for _ in range(3):
        path.write_bytes(first + path.read_bytes()[len(first) :])
        process = subprocess.Popen(
            command(path, "rust"), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        # Past the first chunk, which held the record as it was ranked; reading it back
        # goes no further than that chunk.
        wait_for_position(process, path, 2 * CHUNK)
        with open(path, "r+b") as handle:
            handle.write(rewritten)
        after = position(process.pid, path)
        out, err = process.communicate(timeout=60)
        if after is None or after < 2 * CHUNK:
            continue  # it may have been read back before the rewrite: try again
        assert (process.returncode, out) == (1, b""), err
        assert err.decode() == PROG + f"{path} changed while it was read\n"
        return
    pytest.skip("the file was read before it could be rewritten")
