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
from typing import TYPE_CHECKING, Any, Union

from . import _messages
from ._backends.choice import chosen_backend
from ._encodings import DEFAULT_ENCODING, ENCODINGS, check_encoding
from ._tiktoken_counter import TiktokenCounter

__all__ = ["DEFAULT_ENCODING", "ENCODINGS", "Counter", "TokenCounter", "counting"]

if TYPE_CHECKING:
    from ._core import TokenCounter
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
Counter = Union["TokenCounter", TiktokenCounter, str, Callable[[str], int]]


def built_in(encoding: object, backend: str = "auto") -> TokenCounter | TiktokenCounter:
    """The counter of a built-in encoding: the compiled one if `backend` is (or means) Rust,
    else tiktoken's (an ImportError where it is not installed)."""
    name = check_encoding(encoding)
    # ImportError if Rust is asked for and missing.
    if chosen_backend(backend) == "python":
        return TiktokenCounter(name)
    return TokenCounter(name)


# Counts every text of a list (the counts are anything a user's callable returns).
CountMany = Callable[[list[str]], list[Any]]


def counting(counter: Counter | None, backend: str = "auto") -> tuple[CountMany, bool]:
    """How `counter` counts a list of texts, and whether its counts must be checked like
    `token_count` (they come from user code). `None` means the default encoding."""
    if counter is None:
        counter = DEFAULT_ENCODING
    if isinstance(counter, str):
        return built_in(counter, backend).count_many, False
    if type(counter) is TokenCounter or isinstance(counter, TiktokenCounter):
        return counter.count_many, False
    if callable(counter):
        call = counter
        return lambda texts: [call(text) for text in texts], True
    raise _messages.counter_type_error(counter)
