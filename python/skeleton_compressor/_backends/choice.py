"""Which backend a name means: `"auto"` (what SKELETON_COMPRESSOR_BACKEND says, else Rust where
the extension imports), `"rust"` or `"python"`; and the compiled one's class.

Apart from `loader` so that what only asks which backend is in use (the token counters) never
imports the Python backend.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING

from .._values import plain_str

if TYPE_CHECKING:
    from collections.abc import Callable

    from .protocol import CompressorFactory

__all__ = [
    "BACKENDS",
    "ENVIRONMENT_VARIABLE",
    "backend_variable",
    "chosen_backend",
    "rust_available",
    "rust_factory",
]

BACKENDS = ("auto", "rust", "python")
ENVIRONMENT_VARIABLE = "SKELETON_COMPRESSOR_BACKEND"

_EXTENSION = f"{__name__.split('.')[0]}._core"
_BUILD_HINT = (
    "the Rust extension skeleton_compressor._core is not built; install the package with "
    "`pip install .` (or `maturin develop --release` in a checkout), which needs a Rust "
    "toolchain, or choose backend='python'"
)


_compiled_backend_variable: Callable[[], str | None] | None
try:
    # Reads the variable where os.environ writes it, in a tenth of os.environ.get's time (a
    # microsecond, more than a small call's own work): the module functions read it on every
    # call.
    from .._core import backend_variable as _compiled_backend_variable
except ImportError:
    _compiled_backend_variable = None


def backend_variable() -> str:
    """SKELETON_COMPRESSOR_BACKEND, "" when unset."""
    if _compiled_backend_variable is not None:
        value = _compiled_backend_variable()
        if value is not None:
            return value
    return os.environ.get(ENVIRONMENT_VARIABLE, "")


def rust_factory() -> CompressorFactory:
    try:
        # Imported by name, so that an extension made unavailable after the package first
        # imported it is noticed.
        importlib.import_module(_EXTENSION)
    except ImportError as error:
        raise ImportError(_BUILD_HINT) from error
    from .. import _core

    return _core.Compressor


def rust_available() -> bool:
    try:
        rust_factory()
    except ImportError:
        return False
    return True


def chosen_backend(name: str) -> str:
    """`"rust"` or `"python"`: what `name` means. Raises ValueError for a name (or a
    SKELETON_COMPRESSOR_BACKEND) that is none of `BACKENDS`, and ImportError, with how to
    build it, where Rust is asked for and the extension does not import."""
    # The plain str a subclass holds, so that its own `__eq__` cannot pass for a name.
    plain = plain_str(name)
    if plain not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {name!r}")
    name = plain
    if name == "auto":
        name = backend_variable() or "auto"
        if name not in BACKENDS:
            raise ValueError(
                f"{ENVIRONMENT_VARIABLE} must be one of {', '.join(BACKENDS)}, got {name!r}"
            )
    if name == "python":
        return "python"
    if name == "rust":
        rust_factory()
        return "rust"
    return "rust" if rust_available() else "python"
