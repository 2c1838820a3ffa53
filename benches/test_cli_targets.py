"""The command line's targets on a million records, as a process, measured side by side in
one run: at least 8x the Python backend, at most 5x reading the file plus one
`compress_arrays` call, and peak memory under twice the file's size; for JSON Lines and for a
JSON array."""

from __future__ import annotations

import sys

import pytest
from skeleton_compressor.cli.bench.files import FORMS, format_cli_table, measure_cli

MILLION = 1_000_000


@pytest.mark.parametrize("form", FORMS)
def test_a_million_records_from_a_file(form: str) -> None:
    row = measure_cli(MILLION, form, sys.stderr)
    print("\n" + format_cli_table([row]))
    assert row["speedup"] >= 8, f"only {row['speedup']:.1f}x the Python backend"
    assert row["rust_over_floor"] <= 5, f"{row['rust_over_floor']:.2f}x the read floor"
    assert row["peak_over_file"] < 2, f"peak memory {row['peak_over_file']:.2f}x the file"
