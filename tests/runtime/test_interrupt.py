"""Ctrl-C stops a long call on either backend: `optimal` whether or not the call holds the
GIL, the other strategies and token counting midway, well before they would have ended; and
the command line ends quietly with status 130."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from skeleton_compressor.cli.bench.fragments import make_knapsack_fragments
from support.ctrl_c import as_a_terminal_delivers
from support.interrupted_call import SPREAD

SUPPORT = Path(__file__).resolve().parents[1] / "support"
CHILD = SUPPORT / "interrupted_call.py"
MIDWAY = SUPPORT / "interrupted_midway.py"
# Long enough for the call to be well under way, and far shorter than the call itself.
UNDER_WAY = 0.5
# A hang guard, not a speed target: the call would take minutes (see benches/ for how fast
# an interrupt is answered).
ANSWERED_WITHIN = 30

# Signals timed against calls that last a fraction of a second: run where nothing else competes.
pytestmark = pytest.mark.slow
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")


def interrupt(process: subprocess.Popen[str]) -> tuple[str, str]:
    """What the process wrote to stdout and stderr after Ctrl-C."""
    time.sleep(UNDER_WAY)
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=ANSWERED_WITHIN)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"no answer to Ctrl-C within {ANSWERED_WITHIN} s") from None
    return out, err or ""


# 15,000 fragments run with the GIL held, 30,000 with it released.
@posix_only
@pytest.mark.parametrize("size", [15_000, 30_000])
def test_ctrl_c_stops_a_long_optimal_call(backend: str, size: int) -> None:
    process = subprocess.Popen(
        [sys.executable, str(CHILD), backend, str(size)],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_terminal_delivers,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    assert interrupt(process) == ("interrupted\n", "")
    assert process.returncode == 0


@posix_only
def test_ctrl_c_ends_the_command_line_with_status_130(backend: str, tmp_path: Path) -> None:
    fragments, budget = make_knapsack_fragments(30_000, "strongly", spread=SPREAD)
    records = tmp_path / "records.jsonl"
    with records.open("w") as out:
        for fragment in fragments:
            fields = ("fragment_id", "token_count", "relevance_score")
            print(json.dumps({name: getattr(fragment, name) for name in fields}), file=out)
    command = [sys.executable, "-m", "skeleton_compressor", "compress", str(records)]
    # No work limit: the call runs until the signal comes.
    options = ["--budget", str(budget), "--strategy", "optimal", "--backend", backend]
    options += ["--max-work", "none"]
    process = subprocess.Popen(
        command + options,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_terminal_delivers,
    )
    # The interpreter starts and reads the file well within this.
    time.sleep(2)
    assert interrupt(process) == ("", "skeleton-compressor: error: interrupted\n")
    assert process.returncode == 130


# The bound on how long Ctrl-C may wait: the calls ask every 20 ms of work.
PROMPTLY = 0.2


def line_after(process: subprocess.Popen[str], label: str) -> float:
    assert process.stdout is not None
    name, _, value = process.stdout.readline().partition(" ")
    assert name == label, f"expected {label!r}, got {name!r} {value!r}"
    return float(value)


def interrupted_midway(kind: str, backend: str) -> tuple[float, float, float]:
    """How long the call takes uninterrupted, how long it ran when Ctrl-C came a quarter of
    the way in, and how long after Ctrl-C it stopped."""
    process = subprocess.Popen(
        [sys.executable, str(MIDWAY), kind, backend],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_terminal_delivers,
    )
    try:
        whole = line_after(process, "took")
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        time.sleep(whole / 4)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        ran = line_after(process, "interrupted")
        answered = line_after(process, "at") - sent
    finally:
        process.kill()
        process.communicate()
    return whole, ran, answered


@posix_only
@pytest.mark.parametrize(
    "kind", ["count", "count_many", "explain", "greedy", "density", "optimal", "variants"]
)
def test_ctrl_c_stops_a_call_midway_and_promptly(backend: str, kind: str) -> None:
    if backend == "python" and kind.startswith("count"):
        pytest.skip("the Python backend counts through tiktoken, which does not ask for signals")
    whole, ran, answered = interrupted_midway(kind, backend)
    # A second try when the first is late: on a virtual machine the kernel now and then
    # spends a few hundred milliseconds backing fresh memory, within one step of the work
    # that cannot ask for signals; a call that does not ask is late on every try.
    if ran >= 0.75 * whole or answered >= PROMPTLY:
        whole, ran, answered = interrupted_midway(kind, backend)
    # Stopped well before an uninterrupted call ends: a call that only looked at signals
    # once done would run all of `whole`.
    assert ran < 0.75 * whole, f"ran {ran:.3f} s of {whole:.3f} s"
    assert answered < PROMPTLY, f"answered {answered:.3f} s after Ctrl-C"
