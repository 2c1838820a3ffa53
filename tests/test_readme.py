"""The README's API tour runs as written and shows what it says."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


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
