"""The Python backend's record methods: the command line's input read with the standard
library (`_records.reader`), checked (`_records.checks`) and compressed on columns."""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING

from ..._records.checks import count_contents, record_columns, rule_error
from ..._records.reader import read_records
from ..._tiktoken_counter import TiktokenCounter
from ...errors import FragmentError
from ...types import ContextFragment
from ..protocol import CompressedRecords

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    from .compressor import Compressor

__all__ = ["compress_records"]


class _KeptText:
    __slots__ = ("array",)

    def __init__(self, array: bytes) -> None:
        self.array = array

    def write_to(self, out: SupportsWrite[bytes]) -> None:
        out.write(self.array)


def compress_records(
    compressor: Compressor, data: bytes, budget: int, explain: bool, encoding: str | None
) -> CompressedRecords:
    records = read_records(data)
    columns = record_columns(records, counting=encoding is not None)
    ids, tokens, scores, required, groups, variants, _ = columns
    count_contents(records, columns, lambda: TiktokenCounter(encoding))  # type: ignore[arg-type]
    try:
        if explain:
            fragments = tuple(
                map(ContextFragment, ids, tokens, scores, repeat(""), required, groups, variants)
            )
            kept_fragments, original, compressed, value, bound, relevance, decided, exact = (
                compressor.explain(fragments, budget)
            )
            position = {id(fragment): index for index, fragment in enumerate(fragments)}
            kept = [position[id(fragment)] for fragment in kept_fragments]
            decisions = (ids, decided)
        else:
            rows, original, compressed, _, value, bound, relevance, _, exact = (
                compressor.compress_arrays(ids, tokens, scores, required, groups, budget, variants)
            )
            kept, decisions = list(rows), None
    except FragmentError as error:
        raise rule_error(records, columns, error) from None
    text, spans = records.text, records.spans
    array = "[" + ", ".join([text[spans[i][0] : spans[i][1]] for i in kept]) + "]"
    return CompressedRecords(
        _KeptText(array.encode("utf-8")),
        original,
        compressed,
        len(ids),
        len(kept),
        records.form,
        decisions,
        value,
        bound,
        relevance,
        exact,
    )
