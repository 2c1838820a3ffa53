"""The error an adapter's import raises when its framework is not installed: which extra
installs it, and on which Python, instead of a bare `No module named 'llama_index'`."""

from __future__ import annotations

import sys

__all__ = ["missing_framework"]


def missing_framework(
    error: ModuleNotFoundError, module: str, extra: str, python: tuple[int, int]
) -> ModuleNotFoundError:
    """The error to raise for `error`, met importing the framework `module`: one naming the
    extra (and the Python it needs, when this one is older), or `error` itself when what is
    missing is not the framework but something it imports."""
    if error.name is None or error.name.split(".")[0] != module:
        return error
    needs = ""
    if sys.version_info[:2] < python:
        needs = f"; it needs Python {python[0]}.{python[1]} or newer"
    return ModuleNotFoundError(
        f"this adapter needs {module}: pip install 'skeleton-compressor[{extra}]'{needs}",
        name=module,
    )
