"""The adapters are tested against the real frameworks, installed by the test extra wherever
they install (Python 3.11 or newer): there, a missing framework fails the test instead of
skipping it, so CI cannot pass without running them."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

import pytest

FRAMEWORKS_FROM = (3, 11)


def framework(module: str) -> ModuleType:
    """The framework's module; skips only where the test extra cannot install it."""
    if sys.version_info < FRAMEWORKS_FROM:
        return pytest.importorskip(module, reason=f"{module} needs Python 3.11 or newer")
    return importlib.import_module(module)
