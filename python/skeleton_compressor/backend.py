"""Choosing the backend: the Rust extension when it is there, the Python fallback otherwise.

What a backend offers is `BackendCompressor`, in `_interface.py`.
"""

from __future__ import annotations

import importlib
import os

from . import _fallback
from ._interface import CompressorFactory

__all__ = ["BACKENDS", "ENVIRONMENT_VARIABLE", "load_backend", "rust_available"]

BACKENDS = ("auto", "rust", "python")
ENVIRONMENT_VARIABLE = "SKELETON_COMPRESSOR_BACKEND"

_BUILD_HINT = (
    "the Rust extension skeleton_compressor._core is not built; install the package with "
    "`pip install .` (or `maturin develop --release` in a checkout), which needs a Rust "
    "toolchain, or choose backend='python'"
)


def _rust() -> CompressorFactory:
    try:
        # Imported by name, so that an extension made unavailable after the package first
        # imported it is noticed.
        importlib.import_module(f"{__package__}._core")
    except ImportError as error:
        raise ImportError(_BUILD_HINT) from error
    from . import _core

    return _core.Compressor


def rust_available() -> bool:
    try:
        _rust()
    except ImportError:
        return False
    return True


def load_backend(name: str) -> tuple[str, CompressorFactory]:
    """`(name in use, Compressor class)` for `"auto"`, `"rust"` or `"python"`.

    `"auto"` means what SKELETON_COMPRESSOR_BACKEND says, and Rust when it says nothing (or
    `auto`) and the extension imports.
    """
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {name!r}")
    if name == "auto":
        name = os.environ.get(ENVIRONMENT_VARIABLE, "") or "auto"
        if name not in BACKENDS:
            raise ValueError(
                f"{ENVIRONMENT_VARIABLE} must be one of {', '.join(BACKENDS)}, got {name!r}"
            )
    if name == "python":
        return "python", _fallback.Compressor
    if name == "rust":
        return "rust", _rust()
    try:
        return "rust", _rust()
    except ImportError:
        return "python", _fallback.Compressor
