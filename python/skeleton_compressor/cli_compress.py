"""`skeleton-compressor compress`: records from a file (or standard input) to the kept records,
byte for byte as they came in, plus the metadata (and, with `--explain`, the decisions).

The Rust backend reads, checks and compresses the input's bytes in one call, with no Python
object per record; the Python backend reads with the standard library (`json_records`) and
compresses with `compress_arrays`. Both raise the same `RecordsError`s, worded in one place.
"""

from __future__ import annotations

import json
import sys
from itertools import repeat
from typing import Any, BinaryIO, NamedTuple, Protocol

from .backend import load_backend
from .errors import FragmentError
from .json_records import Records, read_records
from .record_checks import checked_columns
from .record_errors import RecordsError, worded
from .types import ContextFragment, SkeletonMetadata

__all__ = [
    "Compressed",
    "InputError",
    "Options",
    "compress_data",
    "compress_file",
    "written",
]


class InputError(Exception):
    """Bad input, reported as one line on stderr."""


class KeptArray(Protocol):
    """The kept records, written as a JSON array of their bytes in the input."""

    def write_to(self, out: BinaryIO) -> None: ...


class _KeptText:
    def __init__(self, array: bytes) -> None:
        self.array = array

    def write_to(self, out: BinaryIO) -> None:
        out.write(self.array)


class Compressed(NamedTuple):
    """The kept records, the metadata, and the decisions when asked."""

    kept: KeptArray
    metadata: SkeletonMetadata
    decisions: dict[str, dict[str, Any]] | None


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None


class Options(NamedTuple):
    backend: str
    strategy: str
    min_relevance: float
    on_overflow: str
    order: str
    budget: int
    explain: bool
    encoding: str | None


def compress_file(path: str, options: Options) -> Compressed:
    """The records of the file at `path` (`-` for standard input) compressed. Raises
    `InputError` for bad input and `BudgetExceededError` when the overflow policy refuses the
    budget.

    The Rust backend reads a file a chunk at a time when it is of the common kind (JSON Lines
    or an array, every record good); any other input is read whole, which words what is
    wrong exactly as the Python backend does."""
    name, factory = load_backend(options.backend)
    # The Rust compressor's record methods are its own: `name` says which one this is.
    compressor: Any = factory(
        options.strategy, options.min_relevance, options.on_overflow, options.order
    )
    source = "standard input" if path == "-" else path
    data = None
    try:
        if name == "rust" and path != "-" and not options.explain:
            try:
                done = compressor.compress_record_file(path, options.budget, options.encoding)
            except OSError:
                done = None  # reading it again says why, as the Python backend says it
            if done is not None:
                return _compressed(done, options)
        data = _read(path)
        return _compress_data(name, compressor, data, options)
    except RecordsError as error:
        raise InputError(worded(_explained(error, data or _read(path)), source)) from None


def compress_data(data: bytes, source: str, options: Options) -> Compressed:
    """`compress_file` on an input's bytes, named `source` in messages."""
    name, factory = load_backend(options.backend)
    compressor = factory(
        options.strategy, options.min_relevance, options.on_overflow, options.order
    )
    try:
        return _compress_data(name, compressor, data, options)
    except RecordsError as error:
        raise InputError(worded(_explained(error, data), source)) from None


def _compress_data(name: str, compressor: Any, data: bytes, options: Options) -> Compressed:
    if name == "rust":
        done = compressor.compress_records(data, options.budget, options.explain, options.encoding)
        return _compressed(done, options)
    return _compressed_in_python(compressor, data, options)


def _explained(error: RecordsError, data: bytes) -> RecordsError:
    """The Rust reader's error with lines for its byte offsets; for malformed JSON, worded as
    the standard library's reader words it, from the record where the Rust reader stopped, so
    that both backends say the same on every Python version."""
    if error.kind == "malformed":
        try:
            read_records(data, resume=error.start or 0)
        except RecordsError as standard:
            if standard.kind in ("malformed", "fragments_not_array"):
                return standard
    error.locate(data)
    return error


def _compressed(done: Any, options: Options) -> Compressed:
    """`Compressor.compress_records`'s (or `compress_record_file`'s) result."""
    kept, original, compressed, total, kept_count, _, decided = done
    metadata = SkeletonMetadata.of(original, compressed, options.budget, total, kept_count)
    decisions = None
    if decided is not None:
        ids, columns = decided
        decisions = _decisions(ids, columns)
    return Compressed(kept, metadata, decisions)


def _decisions(ids: list[str], columns: Any) -> dict[str, dict[str, Any]]:
    return {
        fragment_id: {"kept": kept, "reason": reason, "rank": rank, "budget_left": left}
        for fragment_id, kept, reason, rank, left in zip(ids, *columns)
    }


def _compressed_in_python(compressor: Any, data: bytes, options: Options) -> Compressed:
    records = read_records(data)
    columns = checked_columns(records, counting=options.encoding is not None)
    ids, tokens, scores, required, groups, uncounted = columns
    if uncounted:
        from .tokens import built_in

        counter = built_in(options.encoding, "python")
        counts = counter.count_many([content for _, content in uncounted])
        for (index, _), count in zip(uncounted, counts):
            tokens[index] = count
    budget = options.budget
    try:
        if options.explain:
            fragments = tuple(
                map(ContextFragment, ids, tokens, scores, repeat(""), required, groups)
            )
            kept_fragments, original, compressed, decided = compressor.explain(fragments, budget)
            position = {id(fragment): index for index, fragment in enumerate(fragments)}
            kept = [position[id(fragment)] for fragment in kept_fragments]
            decisions = _decisions(ids, decided)
        else:
            rows, original, compressed, _ = compressor.compress_arrays(
                ids, tokens, scores, required, groups, budget
            )
            kept, decisions = list(rows), None
    except FragmentError as error:
        raise _duplicate(records, error) from None
    text, spans = records.text, records.spans
    array = "[" + ", ".join([text[spans[i][0] : spans[i][1]] for i in kept]) + "]"
    metadata = SkeletonMetadata.of(original, compressed, budget, len(ids), len(kept))
    return Compressed(_KeptText(array.encode("utf-8")), metadata, decisions)


def _duplicate(records: Records, error: FragmentError) -> RecordsError:
    lines = records.lines
    first, second = error.first_index, error.index
    return RecordsError(
        "duplicate",
        form=records.form,
        fragment_id=error.fragment_id,
        first_index=first,
        index=second,
        first_line=lines[first] if lines is not None and first is not None else None,
        line=lines[second] if lines is not None else None,
    )


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
