"""What counts tokens: the compiled `TokenCounter`, an encoding's name, or any callable
`str -> int`.

The built-in encodings are the compiled extension's tables. `TokenCounter` is that
extension's class. A counter given by name (or the default one) is made on the backend
`"auto"` means (see `_backends/choice.py`): where that is the Python backend, chosen with
`SKELETON_COMPRESSOR_BACKEND=python` or because the extension is not built, a built-in
encoding counts through tiktoken (the same counts) where it is installed, and raises
`ImportError` where it is not; callables count everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Union, cast

from . import _messages
from ._backends.choice import chosen_backend
from ._encodings import DEFAULT_ENCODING, ENCODINGS, check_encoding
from ._tiktoken_counter import TiktokenCounter

__all__ = ["DEFAULT_ENCODING", "ENCODINGS", "Counter", "TokenCounter", "counting"]

if TYPE_CHECKING:
    from ._core import TokenCounter
    from .types import EncodingName
else:
    try:
        from ._core import TokenCounter
    except ImportError:

        class TokenCounter(TiktokenCounter):
            """Stands for the compiled `TokenCounter` where the extension is not built:
            counts through tiktoken where it is installed; an unknown encoding is a
            ValueError as there, and a known one without tiktoken an ImportError."""

            __slots__ = ()

            def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
                super().__init__(encoding)

            def __repr__(self) -> str:
                return f"TokenCounter({self.encoding!r})"

            def __reduce__(self) -> tuple[type[TiktokenCounter], tuple[str]]:
                return (TokenCounter, (self.encoding,))


# A TokenCounter, an encoding's name, or a callable returning a text's token count.
Counter = Union["TokenCounter", TiktokenCounter, "EncodingName", Callable[[str], int]]


def built_in(encoding: object, backend: str = "auto") -> TokenCounter | TiktokenCounter:
    """The counter of a built-in encoding: the compiled one if `backend` is (or means) Rust,
    else tiktoken's (an ImportError where it is not installed)."""
    name = check_encoding(encoding)
    # ImportError if Rust is asked for and missing.
    if chosen_backend(backend) == "python":
        return TiktokenCounter(name)
    return TokenCounter(cast("EncodingName", name))


# Counts every text of a list (the counts are anything a user's callable returns).
CountMany = Callable[[list[str]], list[Any]]


class _EachText:
    """A callable `str -> int` applied to every text of a list: a class, not a closure, so
    that what holds it pickles wherever the callable does."""

    __slots__ = ("count",)

    def __init__(self, count: Callable[[str], Any]) -> None:
        self.count = count

    def __call__(self, texts: list[str]) -> list[Any]:
        count = self.count
        return [count(text) for text in texts]


def counting(counter: object, backend: str = "auto") -> tuple[CountMany, bool]:
    """How `counter` (a `Counter`, any str for the error an unknown name gets, or None for
    the default encoding) counts a list of texts, and whether its counts must be checked like
    `token_count` (they come from user code)."""
    if counter is None:
        counter = DEFAULT_ENCODING
    if isinstance(counter, str):
        return built_in(counter, backend).count_many, False
    if type(counter) is TokenCounter or isinstance(counter, TiktokenCounter):
        return counter.count_many, False
    if callable(counter):
        return _EachText(counter), True
    raise _messages.counter_type_error(counter)
