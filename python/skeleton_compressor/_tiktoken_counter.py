"""The built-in encodings on the Python backend, where tiktoken is installed: tiktoken's
`len(encode_ordinary(text))`, the count the compiled `TokenCounter` gives (its tables are
tiktoken's, checked byte for byte by the test suite)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import _messages
from ._encodings import (
    check_encoding,
    python_backend_error,
    tiktoken_failure,
    tiktoken_table_error,
)
from ._values import plain_str

__all__ = ["TiktokenCounter"]


class TiktokenCounter:
    """Counts as `TokenCounter` does, through tiktoken: the same `encoding`, `count` and
    `count_many`, and the same errors. tiktoken downloads an encoding's table the first time
    it is used on a machine (and caches it): where it cannot, an `ImportError` says so."""

    __slots__ = ("_encode", "encoding")

    def __init__(self, encoding: str) -> None:
        name = check_encoding(encoding)
        try:
            import tiktoken
        except ImportError:
            raise python_backend_error(name) from None
        try:
            encoder = tiktoken.get_encoding(name)
        except (OSError, ValueError) as error:
            # No network, or a download that fails tiktoken's hash check.
            raise tiktoken_table_error(name, error) from error
        self.encoding = name
        self._encode: Any = encoder.encode_ordinary

    def count(self, text: str) -> int:
        plain = plain_str(text)
        if plain is None:
            raise _messages.text_type_error("text", text)
        try:
            return len(self._encode(plain))
        except BaseException as error:
            if not _is_panic(error):
                raise
            raise tiktoken_failure("text", None, error) from None

    def count_many(self, texts: Iterable[str]) -> list[int]:
        if isinstance(texts, str):
            raise _messages.texts_type_error(texts)
        try:
            items = iter(texts)
        except TypeError:
            raise _messages.texts_type_error(texts) from None
        encode = self._encode
        counts: list[int] = []
        for index, text in enumerate(items):
            plain = plain_str(text)
            if plain is None:
                raise _messages.text_type_error(f"texts[{index}]", text)
            try:
                counts.append(len(encode(plain)))
            except BaseException as error:
                if not _is_panic(error):
                    raise
                raise tiktoken_failure(f"texts[{index}]", index, error) from None
        return counts

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.encoding!r})"

    def __reduce__(self) -> tuple[type[TiktokenCounter], tuple[str]]:
        return (TiktokenCounter, (self.encoding,))


def _is_panic(error: BaseException) -> bool:
    # tiktoken's Rust side panics as pyo3's PanicException, a BaseException of a module
    # that is not importable by name.
    return type(error).__name__ == "PanicException"
