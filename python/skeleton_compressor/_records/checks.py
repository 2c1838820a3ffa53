"""The command line's records, as the standard library read them, checked and made into the
columns `compress_arrays` takes: the same checks, in the same order, as the Rust reader's.
And the records an earlier output sent (`compress --previous`), of which only what tells a
fragment is the same one is read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

from .._encodings import TiktokenFailure
from .._values import MAX_TOKEN_COUNT
from ..errors import FragmentError
from .errors import RecordsError, record_place
from .reader import LongInteger, Records, json_type, number_text

__all__ = [
    "RecordColumns",
    "SentColumns",
    "count_contents",
    "record_columns",
    "rule_error",
    "sent_columns",
]

_ABSENT = object()
_NUMBERS = (int, float, LongInteger)


class RecordColumns(NamedTuple):
    fragment_ids: list[str]
    token_counts: list[int]
    relevance_scores: list[float]
    required: list[bool]
    groups: list[str | None]
    variants: list[str | None]
    # Records without a token_count, by index, with the content to count (when counting).
    uncounted: list[tuple[int, str]]


class _Problem(Exception):
    def __init__(self, kind: str, value: object = _ABSENT, field: str | None = None) -> None:
        super().__init__(kind)
        self.kind, self.value, self.field = kind, value, field


def _token_count(value: object) -> int:
    kind = type(value)
    if kind is int:
        if value < 0:  # type: ignore[operator]
            raise _Problem("token_negative", value)
        if value > MAX_TOKEN_COUNT:  # type: ignore[operator]
            raise _Problem("token_too_large", value)
        return value  # type: ignore[return-value]
    if kind is LongInteger:
        negative = value.text.startswith("-")  # type: ignore[attr-defined]
        raise _Problem("token_negative" if negative else "token_too_large", value)
    raise _Problem("token_type", value)


def _relevance(value: object) -> float:
    if type(value) not in _NUMBERS:
        raise _Problem("relevance_type", value)
    if type(value) is LongInteger or not 0 <= value <= 1:  # type: ignore[operator]
        raise _Problem("relevance_range", value)
    return float(value) + 0.0  # type: ignore[arg-type]


def _name(record: dict[str, Any], field: str, kind: str) -> str | None:
    """A `group` or `variant_of`: absent or null for none, else a non-empty string; `kind`
    prefixes the problems' kinds."""
    name = record.get(field)
    if name is not None:
        if type(name) is not str:
            raise _Problem(f"{kind}_type", name)
        if not name:
            raise _Problem(f"{kind}_empty")
    return name


def _checked_record(
    record: Any, counting: bool
) -> tuple[str, int | None, float, bool, str | None, str | None]:
    if type(record) is not dict:
        raise _Problem("not_object", record)
    fragment_id = record.get("fragment_id", _ABSENT)
    token_count = record.get("token_count", _ABSENT)
    relevance = record.get("relevance_score", _ABSENT)
    if fragment_id is _ABSENT:
        raise _Problem("missing_field", field="fragment_id")
    if token_count is _ABSENT and not counting:
        raise _Problem("missing_field", field="token_count")
    if relevance is _ABSENT:
        raise _Problem("missing_field", field="relevance_score")
    if type(fragment_id) is not str:
        raise _Problem("id_type", fragment_id)
    if not fragment_id:
        raise _Problem("id_empty")
    if token_count is _ABSENT:
        content = record.get("content", _ABSENT)
        if content is _ABSENT:
            raise _Problem("no_content")
        if type(content) is not str:
            raise _Problem("content_type", content)
        tokens = None
    else:
        tokens = _token_count(token_count)
    score = _relevance(relevance)
    required = record.get("required", False)
    if required is not True and required is not False:
        raise _Problem("required_type", required)
    group = _name(record, "group", "group")
    return fragment_id, tokens, score, required, group, _name(record, "variant_of", "variant")


def record_columns(records: Records, counting: bool) -> RecordColumns:
    """The records' columns, or the first record's problem as a `RecordsError`."""
    columns = RecordColumns([], [], [], [], [], [], [])
    ids, tokens, scores, required, groups, variants, uncounted = columns
    for index, record in enumerate(records.values):
        try:
            fragment_id, count, score, pinned, group, variant_of = _checked_record(record, counting)
        except _Problem as problem:
            raise _records_error(records, index, record, problem) from None
        if count is None:
            uncounted.append((index, record["content"]))
            count = 0
        ids.append(fragment_id)
        tokens.append(count)
        scores.append(score)
        required.append(pinned)
        groups.append(group)
        variants.append(variant_of)
    return columns


class SentColumns(NamedTuple):
    """The ids and token counts of the records an earlier output sent, and (when counting)
    the records without a token_count, by index, with the content to count."""

    fragment_ids: list[str]
    token_counts: list[int]
    uncounted: list[tuple[int, str]]


def _checked_sent(record: Any, counting: bool) -> tuple[str, int | None]:
    """A sent record's id and token count, checked as `_checked_record` checks them; its
    other fields are not read."""
    if type(record) is not dict:
        raise _Problem("not_object", record)
    fragment_id = record.get("fragment_id", _ABSENT)
    token_count = record.get("token_count", _ABSENT)
    if fragment_id is _ABSENT:
        raise _Problem("missing_field", field="fragment_id")
    if token_count is _ABSENT and not counting:
        raise _Problem("missing_field", field="token_count")
    if type(fragment_id) is not str:
        raise _Problem("id_type", fragment_id)
    if not fragment_id:
        raise _Problem("id_empty")
    if token_count is _ABSENT:
        content = record.get("content", _ABSENT)
        if content is _ABSENT:
            raise _Problem("no_content")
        if type(content) is not str:
            raise _Problem("content_type", content)
        return fragment_id, None
    return fragment_id, _token_count(token_count)


def sent_columns(records: Records, counting: bool) -> SentColumns:
    """The sent records' ids and token counts, or the first record's problem as a
    `RecordsError`. Relevance, `required`, `group` and `variant_of` are not read (this
    turn's records say them), nor are repeated ids refused (reuse stops at the second)."""
    columns = SentColumns([], [], [])
    ids, tokens, uncounted = columns
    for index, record in enumerate(records.values):
        try:
            fragment_id, count = _checked_sent(record, counting)
        except _Problem as problem:
            raise _records_error(records, index, record, problem) from None
        if count is None:
            uncounted.append((index, record["content"]))
            count = 0
        ids.append(fragment_id)
        tokens.append(count)
    return columns


def _records_error(records: Records, index: int, record: Any, problem: _Problem) -> RecordsError:
    fragment_id = record.get("fragment_id") if type(record) is dict else None
    value = problem.value
    return RecordsError(
        problem.kind,
        form=records.form,
        index=index,
        line=records.lines[index] if records.lines is not None else None,
        fragment_id=fragment_id if type(fragment_id) is str else None,
        field=problem.field,
        json_type=None if value is _ABSENT else json_type(value),
        number=number_text(value),
        keys=tuple(record) if problem.kind == "missing_field" else None,
    )


def rule_error(records: Records, columns: RecordColumns, error: FragmentError) -> RecordsError:
    """A duplicate id or a broken variant rule (the problems left once every record is good)
    as the records' problem, about the records at `error.index` and `error.first_index`."""
    lines = records.lines
    first, index = error.first_index, error.index
    assert first is not None
    rule = error.kind != "duplicate"
    return RecordsError(
        error.kind,
        form=records.form,
        fragment_id=error.fragment_id,
        first_index=first,
        index=index,
        first_line=lines[first] if lines is not None else None,
        line=lines[index] if lines is not None else None,
        group=columns.groups[index] if rule else None,
        variant_of=columns.variants[index] if rule else None,
        first_variant_of=columns.variants[first] if rule else None,
    )


class _Counter(Protocol):
    def count_many(self, texts: Sequence[str]) -> list[int]: ...


def count_contents(
    records: Records,
    columns: RecordColumns | SentColumns,
    counter: Callable[[], _Counter],
    where: str = "",
) -> None:
    """Fills in the token counts of the records without one, counted from their contents by
    the counter `counter` makes (made only when some record needs it: it may not be
    installed). A content the counter cannot count is named by its record, after `where`."""
    uncounted = columns.uncounted
    if not uncounted:
        return
    try:
        counts = counter().count_many([content for _, content in uncounted])
    except TiktokenFailure as failure:
        row = uncounted[failure.index or 0][0]
        place = record_place(row, records.lines, records.form, columns.fragment_ids[row])
        raise failure.named(where + place) from None
    tokens = columns.token_counts
    for (index, _), count in zip(uncounted, counts):
        tokens[index] = count
