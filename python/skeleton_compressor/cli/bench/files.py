"""What `skeleton-compressor compress` costs on a generated file of records, end to end as a
process, next to the least any reader could cost: reading the file (as `cat` does) plus one
`compress_arrays` call on the same rows.

Peak memory comes from the `resource` module, which Windows lacks: there the figures say it is
unavailable and the rest is measured as elsewhere."""

from __future__ import annotations

import importlib
import json
import os
import random
import shutil
import site
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from ...service import compress_arrays
from ..input import InputError

FORMS = ("lines", "array")

# Runs the command given after it, and prints its peak memory (kilobytes on Linux, bytes on
# macOS); only where `resource` exists.
_PEAK_MEMORY = (
    "import resource, subprocess, sys; "
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def write_records(path: Path, size: int, form: str, seed: int = 0) -> tuple[int, int]:
    """A file of `size` records with ids like `src/module_00042.py#chunk-3`, token counts 1 to
    2000 and random relevance, as JSON Lines or a JSON array; returns its size in bytes and a
    tenth of its tokens (the budget the figures use)."""
    rng = random.Random(seed)
    tokens = 0
    lines = []
    for number in range(size):
        count = rng.randint(1, 2000)
        tokens += count
        fragment_id = f"src/module_{number // 10:05d}.py#chunk-{number % 10}"
        record = {"fragment_id": fragment_id, "token_count": count, "relevance_score": rng.random()}
        lines.append(json.dumps(record))
    text = "\n".join(lines) + "\n" if form == "lines" else "[" + ",\n".join(lines) + "]\n"
    path.write_text(text, encoding="utf-8")
    return path.stat().st_size, tokens // 10


def _command(path: Path, budget: int, backend: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "skeleton_compressor",
        "compress",
        str(path),
        "--budget",
        str(budget),
        "--backend",
        backend,
    ]


def peak_memory_available() -> bool:
    """Whether this platform reports a child's peak memory (`resource`: POSIX, not Windows)."""
    try:
        importlib.import_module("resource")
    except ImportError:
        return False
    return True


def timed_run(command: list[str], directory: Path) -> tuple[float, int | None]:
    """Seconds the command took as a process, and its peak memory in bytes (`None` where the
    platform does not report it). It runs in `directory` with this package's own directory
    first on its path, so that `python -m` imports the package bench runs from, not another
    in the directory bench was started from."""
    env = _with_this_package(os.environ)
    if not peak_memory_available():
        start = time.perf_counter()
        done = subprocess.run(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=directory,
            env=env,
        )
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise InputError(_failed(command, done.stderr))
        return seconds, None
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_MEMORY, *command],
        capture_output=True,
        text=True,
        cwd=directory,
        env=env,
    )
    seconds = time.perf_counter() - start
    status, peak = done.stdout.split()
    if status != "0":
        raise InputError(_failed(command, done.stderr))
    scale = 1 if sys.platform == "darwin" else 1024
    return seconds, int(peak) * scale


def _with_this_package(environment: Mapping[str, str]) -> dict[str, str]:
    """`environment` with the directory this package was imported from first on PYTHONPATH,
    unless it is where packages are installed (the interpreter finds those itself, and put
    ahead of the standard library, an old backport there could stand in for a module of it)."""
    here = Path(__file__).resolve().parents[3]
    # Some virtual environments' `site` lacks `getsitepackages`.
    installed = [*getattr(site, "getsitepackages", list)(), site.getusersitepackages()]
    if any(here == Path(directory).resolve() for directory in installed):
        return dict(environment)
    paths = [str(here), *filter(None, environment.get("PYTHONPATH", "").split(os.pathsep))]
    return {**environment, "PYTHONPATH": os.pathsep.join(paths)}


def _failed(command: list[str], stderr: str) -> str:
    said = stderr.strip().splitlines()
    shown = " ".join(["python", *command[1:]])
    return f"the timed command failed ({shown})" + (f": {said[-1]}" if said else "")


def _read_whole(path: Path) -> None:
    """Reads the file to the end in this process, 1 MiB at a time (where there is no `cat`)."""
    with open(path, "rb") as handle:
        while handle.read(1 << 20):
            pass


def read_file_floor(path: Path, budget: int, rounds: int = 3) -> float:
    """Reading the file as `cat FILE > /dev/null` does, plus one `compress_arrays` call on its
    rows (read beforehand, untimed): the best of `rounds`. Where there is no `cat` (Windows),
    the file is read in this process instead, without a process start."""
    cat = shutil.which("cat")
    ids, tokens, scores = [], [], []
    text = path.read_text(encoding="utf-8")
    records = json.loads(text) if text.startswith("[") else map(json.loads, text.splitlines())
    for record in records:
        ids.append(record["fragment_id"])
        tokens.append(record["token_count"])
        scores.append(record["relevance_score"])
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        if cat is not None:
            subprocess.run([cat, str(path)], stdout=subprocess.DEVNULL, check=True)
        else:
            _read_whole(path)
        compress_arrays(ids, tokens, scores, budget, backend="rust")
        best = min(best, time.perf_counter() - start)
    return best


def measure_cli(size: int, form: str, progress: TextIO, rounds: int = 3) -> dict[str, Any]:
    """The command's figures on a generated file: Rust best of `rounds`, Python once."""
    label = f"bench: compress on {size:,} records ({form})"
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / ("records.jsonl" if form == "lines" else "records.json")
        progress.write(f"{label}: writing the file\n")
        file_bytes, budget = write_records(path, size, form)
        progress.write(f"{label}: timing\n")
        floor = read_file_floor(path, budget)
        here = Path(directory)
        rust = [timed_run(_command(path, budget, "rust"), here) for _ in range(rounds)]
        python = timed_run(_command(path, budget, "python"), here)
    rust_seconds = min(seconds for seconds, _ in rust)
    peaks = [peak for _, peak in rust if peak is not None]
    rust_peak = max(peaks) if peaks else None
    return {
        "records": size,
        "form": form,
        "file_bytes": file_bytes,
        "rust_seconds": rust_seconds,
        "python_seconds": python[0],
        "floor_seconds": floor,
        "speedup": python[0] / rust_seconds,
        "rust_over_floor": rust_seconds / floor,
        # None where the platform does not report peak memory (Windows).
        "rust_peak_bytes": rust_peak,
        "peak_over_file": None if rust_peak is None else rust_peak / file_bytes,
    }


def format_cli_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "compress as a process, best of 3 (Rust) and 1 (Python); floor = cat FILE + one "
        "compress_arrays",
        f"{'records':>10}  {'form':<5}  {'file':>8}  {'rust':>7}  {'python':>7}  "
        f"{'floor':>7}  {'speedup':>7}  {'/floor':>6}  {'peak':>8}  {'/file':>5}",
    ]
    for row in rows:
        peak, over_file = row["rust_peak_bytes"], row["peak_over_file"]
        peak_cells = (
            f"{'n/a':>8}  {'n/a':>5}"
            if peak is None
            else f"{peak / 1e6:>6.1f}MB  {over_file:>4.2f}x"
        )
        lines.append(
            f"{row['records']:>10,}  {row['form']:<5}  {row['file_bytes'] / 1e6:>6.1f}MB  "
            f"{row['rust_seconds']:>6.2f}s  {row['python_seconds']:>6.2f}s  "
            f"{row['floor_seconds']:>6.2f}s  {row['speedup']:>6.1f}x  "
            f"{row['rust_over_floor']:>5.2f}x  {peak_cells}"
        )
    if any(row["rust_peak_bytes"] is None for row in rows):
        lines.append("peak memory: unavailable on this platform (no `resource` module)")
    return "\n".join(lines)


def measure_cli_rows(sizes: list[int], progress: TextIO) -> list[dict[str, Any]]:
    return [measure_cli(size, form, progress) for size in sizes for form in FORMS]
