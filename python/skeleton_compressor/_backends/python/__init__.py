"""The pure-Python backend: the Rust core's contract in plain Python, each module named as its
twin in `rust/core/select/` (or, for the calls and the reading, in `rust/bindings/`).
Imported only when chosen."""

from .compressor import Compressor

__all__ = ["Compressor"]
