"""tiktoken's own encoders, built with no network from the tables compiled into the extension.

tiktoken downloads its tables; here its encoding constructors (`tiktoken_ext.openai_public`,
which carry each encoding's published pattern, special tokens and the SHA-256 of its table
file) are run with the table file written from `_core._encoding_tokens`, after checking that
the file is byte for byte the one OpenAI publishes (the same hash). So the reference shares
nothing with the code under test but the table, which is shown to be the published one.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import tiktoken
import tiktoken.load
from skeleton_compressor import _core
from tiktoken_ext import openai_public


def table_file(encoding: str) -> bytes:
    """The extension's table in tiktoken's file format: `base64(token) rank` per line."""
    tokens = _core._encoding_tokens(encoding)
    return b"".join(
        base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
        for rank, token in enumerate(tokens)
    )


@functools.cache
def published(encoding: str) -> tuple[Any, str]:
    """`(tiktoken.Encoding, the published SHA-256 of its table)` for an encoding."""
    data = table_file(encoding)
    asked: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"{encoding}.tiktoken"
        path.write_bytes(data)

        def load_local(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
            asked.update(url=url, expected_hash=expected_hash)
            # An empty cache directory makes tiktoken read the path as it is, and cache nothing.
            with mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": ""}):
                ranks: dict[bytes, int] = tiktoken.load.load_tiktoken_bpe(str(path))
            return ranks

        with mock.patch.object(openai_public, "load_tiktoken_bpe", load_local):
            spec = openai_public.ENCODING_CONSTRUCTORS[encoding]()
    assert asked["url"].endswith(f"/{encoding}.tiktoken"), asked
    assert hashlib.sha256(data).hexdigest() == asked["expected_hash"], (
        f"the extension's {encoding} table is not the published one"
    )
    return tiktoken.Encoding(**spec), asked["expected_hash"]


def reference_count(encoding: str, text: str) -> int:
    """tiktoken's `len(encode_ordinary(text))`."""
    return len(published(encoding)[0].encode_ordinary(text))
