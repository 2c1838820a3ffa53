"""The module the compiled extension imports by this name: the names it takes from Python,
which `_backends/rust.py` holds."""

from __future__ import annotations

from ._backends.rust import *  # noqa: F403
from ._backends.rust import __all__ as __all__
