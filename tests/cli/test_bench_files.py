"""`bench --cli` on platforms without `resource` (Windows) or without `cat`: it still imports,
measures the times, and says that peak memory is unavailable."""

from __future__ import annotations

import importlib
import io
import sys
from pathlib import Path
from types import ModuleType

import pytest

MODULE = "skeleton_compressor.cli.bench.files"


def fresh_bench_files(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The module imported anew, as a platform's first import would be."""
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    return importlib.import_module(MODULE)


def without_resource(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    # None in sys.modules makes `import resource` raise ImportError, as on Windows.
    monkeypatch.setitem(sys.modules, "resource", None)
    return fresh_bench_files(monkeypatch)


def test_imports_and_measures_without_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    bench_files = without_resource(monkeypatch)
    assert not bench_files.peak_memory_available()
    progress = io.StringIO()
    row = bench_files.measure_cli(40, "lines", progress, rounds=1)
    assert row["records"] == 40
    assert row["rust_seconds"] > 0 and row["python_seconds"] > 0 and row["floor_seconds"] > 0
    assert row["rust_peak_bytes"] is None and row["peak_over_file"] is None
    assert "writing the file" in progress.getvalue()
    table = bench_files.format_cli_table([row])
    assert "n/a" in table.splitlines()[2]
    assert table.splitlines()[-1] == (
        "peak memory: unavailable on this platform (no `resource` module)"
    )


def test_run_cli_bench_json_without_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    bench_files = without_resource(monkeypatch)
    out = io.StringIO()
    monkeypatch.setattr(bench_files, "measure_cli", lambda size, form, progress: {"form": form})
    bench_files.run_cli_bench([10], out, as_json=True)
    assert '"form": "lines"' in out.getvalue()


def test_a_failing_command_is_reported_without_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    bench_files = without_resource(monkeypatch)
    command = [sys.executable, "-c", "import sys; sys.exit('no such file')"]
    with pytest.raises(RuntimeError, match="no such file"):
        bench_files.timed_run(command)


def test_peak_memory_where_resource_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("resource")
    bench_files = fresh_bench_files(monkeypatch)
    assert bench_files.peak_memory_available()
    seconds, peak = bench_files.timed_run([sys.executable, "-c", "bytearray(64 << 20)"])
    assert seconds > 0
    assert peak is not None and peak > 64 << 20


def test_floor_without_cat(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bench_files = fresh_bench_files(monkeypatch)
    monkeypatch.setattr(bench_files.shutil, "which", lambda name: None)
    ran: list[object] = []
    monkeypatch.setattr(bench_files.subprocess, "run", lambda *args, **kwargs: ran.append(args))
    path = tmp_path / "records.json"
    _, budget = bench_files.write_records(path, 30, "array")
    assert bench_files.read_file_floor(path, budget, rounds=2) > 0
    assert ran == []  # read in this process: no `cat`
