"""The built-in encodings by name, known without the compiled extension, and the errors for
one asked for where the extension cannot count it."""

from __future__ import annotations

from typing import Literal

from . import _messages

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "check_encoding",
    "not_built_error",
    "python_backend_error",
    "tiktoken_table_error",
]

# The compiled extension's encodings, default first (a test checks that they are its
# `ENCODINGS`); known here too, so that an unknown name is told apart without it.
ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
DEFAULT_ENCODING: Literal["o200k_base"] = "o200k_base"

_NEEDS_EXTENSION = (
    "the built-in encoding {encoding!r} needs the compiled extension skeleton_compressor._core"
)


def check_encoding(encoding: object) -> str:
    if not isinstance(encoding, str):
        raise _messages.text_type_error("encoding", encoding)
    if encoding not in ENCODINGS:
        raise _messages.unknown_encoding_error(encoding, ENCODINGS)
    return encoding


def not_built_error(encoding: str, reason: str) -> ImportError:
    return ImportError(
        f"{_NEEDS_EXTENSION.format(encoding=encoding)}, which is not built ({reason})"
    )


def python_backend_error(encoding: str) -> ImportError:
    return ImportError(
        f"{_NEEDS_EXTENSION.format(encoding=encoding)}, and the Python backend is in use "
        "(backend='python', SKELETON_COMPRESSOR_BACKEND=python, or the extension is not "
        "built); on it, the built-in encodings count through tiktoken (pip install "
        "tiktoken), or a callable counter counts tokens"
    )


class TiktokenFailure(RuntimeError):
    """tiktoken could not count a text (its regex overflows its stack on a run of a million
    spaces): the Python backend has no count to give. `index` is the text's place among
    those counted together (None for one text alone), for a caller to name it its way."""

    def __init__(self, place: str, index: int | None, reason: str) -> None:
        super().__init__(
            f"{place}: tiktoken cannot count this text ({reason}); the compiled extension counts it"
        )
        self.index, self.reason = index, reason

    def named(self, place: str) -> TiktokenFailure:
        return TiktokenFailure(place, self.index, self.reason)


def tiktoken_failure(place: str, index: int | None, error: BaseException) -> TiktokenFailure:
    return TiktokenFailure(place, index, f"{type(error).__name__}: {error}")


def tiktoken_table_error(encoding: str, error: Exception) -> ImportError:
    return ImportError(
        f"tiktoken could not load the table of {encoding!r} (it downloads it the first time "
        f"an encoding is used on a machine): {type(error).__name__}: {error}; the compiled "
        "extension counts it without the network"
    )
