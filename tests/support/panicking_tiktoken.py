"""tiktoken as it fails on a million spaces and a word (docs/tokens.md): its Rust side panics,
which reaches Python as pyo3's `PanicException`, a `BaseException`."""

from __future__ import annotations

import pytest


class PanicException(BaseException):
    """Stands for pyo3's, whose module cannot be imported by name."""


def make_tiktoken_panic(monkeypatch: pytest.MonkeyPatch, on: str = "") -> None:
    """Makes tiktoken's `encode_ordinary` panic on each text that starts with `on` (every
    text, by default) and count the others' words."""
    tiktoken = pytest.importorskip("tiktoken")

    def encode_ordinary(self: object, text: str) -> list[int]:
        if text.startswith(on):
            raise PanicException("RuntimeError(StackOverflow)")
        return [0] * len(text.split())

    monkeypatch.setattr(tiktoken.Encoding, "encode_ordinary", encode_ordinary)
