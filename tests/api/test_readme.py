"""The README's API tour runs as written and shows what it says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_api_tour_runs() -> None:
    text = README.read_text(encoding="utf-8")
    tour = re.search(r"## API tour\n\n```python\n(.*?)```", text, re.DOTALL)
    assert tour is not None
    namespace: dict[str, object] = {}
    exec(compile(tour.group(1), str(README), "exec"), namespace)
    metadata = namespace["result"].metadata.to_dict()  # type: ignore[attr-defined]
    assert (metadata["original_tokens"], metadata["compressed_tokens"]) == (1090, 750)
    assert metadata["fragments_kept"] == 2 and metadata["over_budget"] is False
    assert "'compressed_tokens': 750" in tour.group(1)


def test_policy_example_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Selection policy") :]
    example = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert example is not None
    code = example.group(1)
    exec(compile(code, str(README), "exec"), {})
    shown = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    assert capsys.readouterr().out.splitlines() == shown


def test_value_example_keeps_what_it_says() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Choosing by value") :]
    example = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert example is not None
    namespace: dict[str, Any] = {}
    exec(compile(example.group(1), str(README), "exec"), namespace)
    greedy, optimal = namespace["greedy"], namespace["optimal"]
    assert [f.fragment_id for f in greedy.fragments] == ["file:src/billing/webhooks.py"]
    assert [f.fragment_id for f in optimal.fragments] == [
        "note:retry-policy",
        "tool:pytest -k refund",
        "file:src/billing/refund.py#L10-40",
    ]
    assert round(greedy.metadata.value_kept, 6) == 0.95
    assert round(optimal.metadata.value_kept, 6) == round(optimal.metadata.value_bound, 6) == 2.55
