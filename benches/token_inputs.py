"""Shared inputs of the token-counting benchmarks, made once, and tiktoken as the reference.

tiktoken is built offline from the extension's tables by the tests' helper, which checks that
those tables are the published ones.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

from support.offline_tiktoken import published
from support.sample_text import mixed_texts, text_of_kind

ENCODINGS = ("o200k_base", "cl100k_base")
KINDS = ("prose", "code", "log", "emoji")


@functools.cache
def twenty_megabytes() -> list[str]:
    """20,000 texts of mixed kinds, 500 to 1,500 characters each: about 20 M characters."""
    return mixed_texts(20_000, size=1000, seed=20)


@functools.cache
def one_kilobyte(kind: str) -> str:
    """A text of one kind, cut to 1,000 characters."""
    return text_of_kind(kind, random.Random(1), 1200)[:1000]


@functools.cache
def hundred_thousand() -> list[str]:
    """100,000 texts of mixed kinds, about 1,000 characters each."""
    return mixed_texts(100_000, size=1000, seed=100)


def tiktoken_encoding(encoding: str) -> Any:
    return published(encoding)[0]


def tiktoken_ways(encoding: str, texts: list[str]) -> dict[str, Callable[[], object]]:
    """tiktoken's two ways of counting many texts: a loop, and its thread pool."""
    tiktoken = tiktoken_encoding(encoding)
    return {
        "tiktoken encode_ordinary loop": lambda: [
            len(tokens) for tokens in map(tiktoken.encode_ordinary, texts)
        ],
        "tiktoken encode_ordinary_batch": lambda: [
            len(tokens) for tokens in tiktoken.encode_ordinary_batch(texts)
        ],
    }
