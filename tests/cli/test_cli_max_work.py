"""`compress --max-work`: the command line's bound on `optimal`'s work, and `exact` in the
metadata it writes, on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skeleton_compressor import compress
from support.adversarial import adversarial
from test_cli import run


def _records(tmp_path: Path, size: int) -> tuple[Path, int]:
    fragments, budget = adversarial("avis", size)
    path = tmp_path / "avis.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "fragment_id": f.fragment_id,
                    "token_count": f.token_count,
                    "relevance_score": f.relevance_score,
                }
            )
            + "\n"
            for f in fragments
        )
    )
    return path, budget


@pytest.mark.parametrize("explain", [False, True])
def test_a_limit_reached_says_exact_false(tmp_path: Path, backend: str, explain: bool) -> None:
    path, budget = _records(tmp_path, 200)
    options = ["--budget", str(budget), "--strategy", "optimal", "--backend", backend]
    options += ["--max-work", "5000", *(["--explain"] if explain else [])]
    completed = run("compress", str(path), *options)
    assert completed.returncode == 0, completed.stderr
    metadata = json.loads(completed.stdout)["skeleton_metadata"]
    fragments, _ = adversarial("avis", 200)
    library = compress(fragments, budget, strategy="optimal", backend=backend, max_work=5000)
    assert metadata == library.metadata.to_dict()
    assert metadata["exact"] is False
    assert run("compress", str(path), *options).stdout == completed.stdout


def test_no_limit_and_the_default_finish_a_small_input_exact(tmp_path: Path, backend: str) -> None:
    path, budget = _records(tmp_path, 12)
    options = ["--budget", str(budget), "--strategy", "optimal", "--backend", backend]
    outputs = [
        run("compress", str(path), *options, *limit).stdout
        for limit in ([], ["--max-work", "none"])
    ]
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["skeleton_metadata"]["exact"] is True


@pytest.mark.parametrize("limit", ["0", "-3", "1.5", "lots"])
def test_a_bad_limit_is_bad_usage(tmp_path: Path, limit: str) -> None:
    path, budget = _records(tmp_path, 3)
    completed = run("compress", str(path), "--budget", str(budget), "--max-work", limit)
    assert completed.returncode == 2
    assert "--max-work: must be an integer >= 1 or none" in completed.stderr
