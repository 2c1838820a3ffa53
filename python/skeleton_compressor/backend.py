"""Choosing the backend: the Rust extension when it is there, the Python fallback otherwise.

Both backends offer one class, `Compressor(strategy, min_relevance, on_overflow, order)`, that
satisfies `BackendCompressor`;
mypy checks the compiled one through its stub, `_core.pyi`.
"""

from __future__ import annotations

import importlib
import os
from array import array
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .types import ContextFragment

__all__ = [
    "BACKENDS",
    "ENVIRONMENT_VARIABLE",
    "BackendCompressor",
    "CompressorFactory",
    "Decisions",
    "load_backend",
    "rust_available",
]

BACKENDS = ("auto", "rust", "python")
ENVIRONMENT_VARIABLE = "SKELETON_COMPRESSOR_BACKEND"

_BUILD_HINT = (
    "the Rust extension skeleton_compressor._core is not built; install the package with "
    "`pip install .` (or `maturin develop --release` in a checkout), which needs a Rust "
    "toolchain, or choose backend='python'"
)


# What `explain` decided, as columns with one item per fragment: kept, reason, rank and
# budget_left.
Decisions = tuple[list[bool], list[str], list[int], list["int | None"]]


class BackendCompressor(Protocol):
    """What a backend does once the Python layer has checked the arguments' shapes:
    `fragments` is a plain tuple, budgets are plain ints >= 0, and numeric columns are lists,
    tuples or one-dimensional native memoryviews."""

    @property
    def strategy(self) -> str: ...

    def validate(self, fragments: tuple[ContextFragment, ...]) -> None: ...

    def compress(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int]: ...

    def compress_many(
        self, fragments: tuple[ContextFragment, ...], skeleton_budgets: list[int]
    ) -> tuple[int, list[tuple[tuple[ContextFragment, ...], int]]]: ...

    def explain(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int, Decisions]: ...

    def compress_arrays(
        self,
        fragment_ids: Sequence[Any],
        token_counts: Sequence[Any] | memoryview,
        relevance_scores: Sequence[Any] | memoryview,
        required: Sequence[Any] | None,
        groups: Sequence[Any] | None,
        skeleton_budget: int,
    ) -> tuple[array[int], int, int, int]: ...


CompressorFactory = Callable[[str, float, str, str], BackendCompressor]


def _rust() -> CompressorFactory:
    try:
        # Imported by name, so that an extension made unavailable after the package first
        # imported it is noticed.
        importlib.import_module(f"{__package__}._core")
    except ImportError as error:
        raise ImportError(_BUILD_HINT) from error
    from . import _core

    return _core.Compressor


def _python() -> CompressorFactory:
    from . import fallback

    return fallback.Compressor


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
        return "python", _python()
    if name == "rust":
        return "rust", _rust()
    try:
        return "rust", _rust()
    except ImportError:
        return "python", _python()
