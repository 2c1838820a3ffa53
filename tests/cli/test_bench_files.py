"""`bench --cli` on platforms without `resource` (Windows) or without `cat`: it still imports,
measures the times, and says that peak memory is unavailable."""

from __future__ import annotations

import importlib
import io
import sys
from pathlib import Path
from types import ModuleType

import pytest
import skeleton_compressor
from skeleton_compressor.cli.bench import command as bench_command
from skeleton_compressor.cli.input import InputError

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


def test_cli_rows_without_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    bench_files = without_resource(monkeypatch)
    monkeypatch.setattr(bench_files, "measure_cli", lambda size, form, progress: {"form": form})
    rows = bench_files.measure_cli_rows([10], io.StringIO())
    assert rows == [{"form": "lines"}, {"form": "array"}]


@pytest.mark.parametrize("resource", [True, False])
def test_a_failing_command_is_one_line_of_bad_input(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, resource: bool
) -> None:
    bench_files = fresh_bench_files(monkeypatch) if resource else without_resource(monkeypatch)
    command = [sys.executable, "-c", "import sys; print('first'); sys.exit('no such file')"]
    with pytest.raises(InputError) as raised:
        bench_files.timed_run(command, tmp_path)
    shown = " ".join(["python", *command[1:]])
    assert str(raised.value) == f"the timed command failed ({shown}): no such file"


@pytest.mark.parametrize("resource", [True, False])
def test_the_command_runs_in_the_directory_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, resource: bool
) -> None:
    # So that `python -m skeleton_compressor` imports the installed package, not a
    # directory of that name where bench was started.
    bench_files = fresh_bench_files(monkeypatch) if resource else without_resource(monkeypatch)
    shadow = tmp_path / "started_here" / "skeleton_compressor"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    (shadow / "__main__.py").write_text("raise SystemExit('the copy in the directory')")
    monkeypatch.chdir(shadow.parent)
    timed = tmp_path / "files"
    timed.mkdir()
    check = f"import os, sys; sys.exit(os.getcwd() != {str(timed)!r})"
    bench_files.timed_run([sys.executable, "-c", check], timed)
    bench_files.timed_run([sys.executable, "-m", "skeleton_compressor", "--version"], timed)
    # The package bench runs from, whatever the process's directory: the same files.
    here = str(Path(skeleton_compressor.__file__).resolve())
    check = (
        "import pathlib, sys, skeleton_compressor as s; "
        f"sys.exit(str(pathlib.Path(s.__file__).resolve()) != {here!r})"
    )
    bench_files.timed_run([sys.executable, "-c", check], timed)


def test_peak_memory_where_resource_exists(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("resource")
    bench_files = fresh_bench_files(monkeypatch)
    assert bench_files.peak_memory_available()
    command = [sys.executable, "-c", "bytearray(64 << 20)"]
    seconds, peak = bench_files.timed_run(command, tmp_path)
    assert seconds > 0
    assert peak is not None and peak > 64 << 20


def test_bench_says_what_it_is_doing_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert bench_command._progress_stream() is terminal
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert bench_command._progress_stream() is not sys.stderr


def test_floor_without_cat(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bench_files = fresh_bench_files(monkeypatch)
    monkeypatch.setattr(bench_files.shutil, "which", lambda name: None)
    ran: list[object] = []
    monkeypatch.setattr(bench_files.subprocess, "run", lambda *args, **kwargs: ran.append(args))
    path = tmp_path / "records.json"
    _, budget = bench_files.write_records(path, 30, "array")
    assert bench_files.read_file_floor(path, budget, rounds=2) > 0
    assert ran == []  # read in this process: no `cat`
