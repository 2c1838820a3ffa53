"""The types catch mistakes: mypy --strict accepts tests/typing/uses.py and refuses every
line of tests/typing/misuses.py with the error its ignore names; and the `Literal` names
are the names the library takes at run time."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest
from skeleton_compressor import (
    BackendName,
    EncodingName,
    OnOverflowName,
    OrderName,
    StrategyName,
)
from skeleton_compressor._backends.choice import BACKENDS
from skeleton_compressor._backends.protocol import STRATEGIES
from skeleton_compressor._encodings import ENCODINGS
from skeleton_compressor.policy import ON_OVERFLOW, ORDERS

ROOT = Path(__file__).resolve().parents[2]
TYPING = ROOT / "tests" / "typing"
IGNORE = re.compile(r"  # type: ignore\[([a-z-]+)\]$")


def mypy(*paths: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    # The project's configuration (strict, the package's path), on these files only.
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *map(str, paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_literal_names_are_the_names_taken_at_run_time() -> None:
    assert get_args(StrategyName) == STRATEGIES
    assert get_args(BackendName) == BACKENDS
    assert get_args(OnOverflowName) == ON_OVERFLOW
    assert get_args(OrderName) == ORDERS
    assert get_args(EncodingName) == ENCODINGS


@pytest.mark.slow
def test_uses_pass_and_each_misuse_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy comes with the lint extra")
    source = (TYPING / "misuses.py").read_text(encoding="utf-8").splitlines()
    expected: dict[int, str] = {}
    stripped = []
    for number, line in enumerate(source, start=1):
        marked = IGNORE.search(line)
        if marked:
            expected[number] = marked.group(1)
            line = line[: marked.start()]
        stripped.append(line)
    assert len(expected) >= 15
    bare = tmp_path / "misuses_bare.py"
    bare.write_text("\n".join(stripped) + "\n", encoding="utf-8")
    cache = tmp_path / "cache"

    accepted = mypy(TYPING / "uses.py", TYPING / "misuses.py", cache=cache)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr

    refused = mypy(bare, cache=cache)
    found: dict[int, set[str]] = {}
    errors = re.finditer(r"misuses_bare\.py:(\d+): error: .*\[([a-z-]+)\]$", refused.stdout, re.M)
    for match in errors:
        found.setdefault(int(match.group(1)), set()).add(match.group(2))
    for number, code in expected.items():
        assert code in found.get(number, set()), f"misuses.py:{number}: {source[number - 1]}"
    assert set(found) == set(expected), refused.stdout
