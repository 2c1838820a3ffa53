"""`skeleton-compressor compress`: records from a file (or standard input) to the kept records,
byte for byte as they came in, plus the metadata (and, with `--explain`, the decisions).

Either backend reads, checks and compresses the input's bytes in one call: the Rust one with
no Python object per record, the Python one with the standard library's reader
(`_records.reader`). Both raise the same `RecordsError`s, worded in one place. With
`--previous`, the input is read with the standard library's reader and compressed through
the library (`previous.py`).
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any, BinaryIO, NamedTuple

from .._backends.loader import make_compressor
from .._backends.protocol import BackendCompressor, CompressedRecords, Decisions, KeptArray
from .._records.errors import RecordsError, worded
from .._records.reader import read_records
from ..types import SkeletonMetadata
from ..validation import DEFAULT_MAX_WORK
from .input import STANDARD_INPUT, InputError, read_input
from .previous import compress_with_previous

__all__ = [
    "Compressed",
    "Options",
    "compress_data",
    "compress_file",
    "written",
]


class Compressed(NamedTuple):
    """The kept records, the metadata, and the decisions when asked."""

    kept: KeptArray
    metadata: SkeletonMetadata
    decisions: dict[str, dict[str, Any]] | None


class Options(NamedTuple):
    backend: str
    strategy: str
    min_relevance: float
    on_overflow: str
    order: str
    budget: int
    explain: bool
    encoding: str | None
    # The file (or `-`) of an earlier output whose leading run to reuse, and how.
    previous: str | None = None
    max_value_loss: float = 0.0
    headroom: float = 0.0
    max_work: int | None = DEFAULT_MAX_WORK


def _compressor(options: Options) -> BackendCompressor:
    _, _, compressor = make_compressor(
        options.backend,
        options.strategy,
        options.min_relevance,
        options.on_overflow,
        options.order,
        options.max_work,
    )
    return compressor


def compress_file(path: str, options: Options) -> Compressed:
    """The records of the file at `path` (`-` for standard input) compressed. Raises
    `InputError` for bad input and `BudgetExceededError` when the overflow policy refuses the
    budget.

    The file is opened once, since a pipe gives its bytes only once. A backend may read a
    file a chunk at a time when it is of the common kind (the Rust one does, for JSON Lines or
    an array with every record good); any other input is read whole, which words what is
    wrong exactly as either backend would.

    With `options.previous`, both inputs are read whole, through the library
    (`compress_with_previous`)."""
    if options.previous is not None:
        return Compressed(*compress_with_previous(path, options))
    compressor = _compressor(options)
    source = STANDARD_INPUT if path == "-" else path
    data = None
    try:
        if path == "-" or options.explain or _waits_for_a_writer(path):
            data = read_input(path)
        else:
            done = _record_file(compressor, path, options)
            if not isinstance(done, bytes):
                return _compressed(done, options)
            data = done
        return _compressed(_compress_records(compressor, data, options), options)
    except RecordsError as error:
        # An error raised before the file's bytes were at hand (it changed while it was
        # read) is worded without them.
        explained = error if data is None else _explained(error, data)
        raise InputError(worded(explained, source)) from None


def _waits_for_a_writer(path: str) -> bool:
    """Whether `path` is a named pipe: opening one waits until a writer opens it too, and
    only Python's `open` answers Ctrl-C while it waits."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False  # told when the file is opened


def _record_file(
    compressor: BackendCompressor, path: str, options: Options
) -> CompressedRecords | bytes:
    try:
        return compressor.compress_record_file(path, options.budget, options.encoding)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None


def compress_data(data: bytes, source: str, options: Options) -> Compressed:
    """`compress_file` on an input's bytes, named `source` in messages."""
    try:
        return _compressed(_compress_records(_compressor(options), data, options), options)
    except RecordsError as error:
        raise InputError(worded(_explained(error, data), source)) from None


def _compress_records(
    compressor: BackendCompressor, data: bytes, options: Options
) -> CompressedRecords:
    return compressor.compress_records(data, options.budget, options.explain, options.encoding)


def _explained(error: RecordsError, data: bytes) -> RecordsError:
    """The Rust reader's error with lines for its byte offsets; for malformed JSON, worded as
    the standard library's reader words it, from the record where the Rust reader stopped, so
    that both backends say the same on every Python version."""
    if error.kind == "malformed":
        try:
            read_records(data, resume=error.start or 0)
        except RecordsError as standard:
            if standard.kind in ("malformed", "not_json", "fragments_not_array"):
                return standard
    error.locate(data)
    return error


def _compressed(done: CompressedRecords, options: Options) -> Compressed:
    metadata = SkeletonMetadata.of(
        done.original_tokens,
        done.compressed_tokens,
        options.budget,
        done.records,
        done.records_kept,
        done.value_kept,
        done.value_bound,
        0,
        done.relevance_kept,
        exact=done.exact,
    )
    decisions = None
    if done.decisions is not None:
        ids, columns = done.decisions
        decisions = _decisions(ids, columns)
    return Compressed(done.kept, metadata, decisions)


def _decisions(ids: list[str], columns: Decisions) -> dict[str, dict[str, Any]]:
    return {
        fragment_id: {"kept": kept, "reason": reason, "rank": rank, "budget_left": left}
        for fragment_id, kept, reason, rank, left in zip(ids, *columns)
    }


def written(result: Compressed, out: BinaryIO) -> None:
    """The output document: the kept records as they came in, then the metadata (and the
    decisions)."""
    out.write(b'{"fragments": ')
    result.kept.write_to(out)
    out.write(b', "skeleton_metadata": ')
    out.write(json.dumps(result.metadata.to_dict()).encode())
    if result.decisions is not None:
        out.write(b', "decisions": ')
        out.write(json.dumps(result.decisions).encode())
    out.write(b"}\n")
