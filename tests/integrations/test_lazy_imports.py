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


def test_a_missing_framework_names_the_extra_that_installs_it() -> None:
    # None in sys.modules makes an import fail as a module that is not installed does.
    script = (
        "import importlib, sys\n"
        "for adapter, module in [('langchain', 'langchain_core'), "
        "('llamaindex', 'llama_index'), ('haystack', 'haystack')]:\n"
        "    sys.modules[module] = None\n"
        "    try:\n"
        "        importlib.import_module('skeleton_compressor.integrations.' + adapter)\n"
        "    except ModuleNotFoundError as error:\n"
        "        print(error.name, '|', error)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    # On a Python older than its framework needs, the message says which it needs.
    older = "; it needs Python 3.10 or newer" if sys.version_info < (3, 10) else ""
    assert completed.stdout.splitlines() == [
        "langchain_core | this adapter needs langchain_core: "
        f"pip install 'skeleton-compressor[langchain]'{older}",
        "llama_index | this adapter needs llama_index: "
        f"pip install 'skeleton-compressor[llamaindex]'{older}",
        "haystack | this adapter needs haystack: pip install 'skeleton-compressor[haystack]'",
    ], completed.stderr


def test_the_error_says_which_python_the_framework_needs_and_passes_others_through() -> None:
    from skeleton_compressor.integrations._framework import missing_framework

    missing = ModuleNotFoundError("No module named 'haystack.core'", name="haystack.core")
    error = missing_framework(missing, "haystack", "haystack", (99, 0))
    assert str(error) == (
        "this adapter needs haystack: pip install 'skeleton-compressor[haystack]'; "
        "it needs Python 99.0 or newer"
    )
    assert error.name == "haystack"
    inner = ModuleNotFoundError("No module named 'numpy'", name="numpy")
    assert missing_framework(inner, "haystack", "haystack", (3, 9)) is inner
