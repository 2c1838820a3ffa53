"""The base package, and the integrations package itself, import no framework: only an
adapter's own module does."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORK_MODULES = ("langchain_core", "llama_index", "haystack", "pydantic_ai", "pydantic")


def test_the_package_and_its_integrations_import_no_framework() -> None:
    script = (
        "import sys, skeleton_compressor, skeleton_compressor.integrations\n"
        "from skeleton_compressor.integrations import _history, _packing\n"
        "from skeleton_compressor import compress, ContextFragment\n"
        "compress((ContextFragment('a', 1, 0.5),), 1)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORK_MODULES!r}))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert completed.stdout == "[]\n", completed.stdout + completed.stderr
