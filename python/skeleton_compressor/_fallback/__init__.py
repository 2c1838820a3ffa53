"""The pure-Python backend, used where the extension is not built."""

from .compressor import Compressor

__all__ = ["Compressor"]
