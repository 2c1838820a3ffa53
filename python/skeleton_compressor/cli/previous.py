"""`skeleton-compressor compress FILE --previous PREV`: a turn on the command line.

PREV is what an earlier `compress` printed (or any records file): the longest leading run of
it that the value allows is kept first, as the library's `compress(..., previous=...)` keeps
it (docs/turns.md). This path reads both inputs whole with the standard library's reader
(`_records.reader`), makes a `ContextFragment` per record of FILE and calls the library, on
either backend: simpler than the Rust backend's streaming path, and slower.

Two records are the same fragment when their `fragment_id`, `token_count` and `content` are
equal, `content` compared as JSON values (absent is `""`, the library's default). The
matching is done here, on the records: the library is given, as `previous`, this call's own
fragments for PREV's leading run of records that FILE has, which it matches as the very
objects; the first record of PREV that FILE does not have ends what can be reused, as it
would end the library's matched run.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from .._records.checks import count_contents, record_columns, rule_error, sent_columns
from .._records.errors import RecordsError, worded
from .._records.reader import LongInteger, Records, read_records
from ..errors import FragmentError
from ..service import SkeletonCompressorService
from ..tokens import built_in
from ..types import (
    BackendName,
    ContextFragment,
    OnOverflowName,
    OrderName,
    SkeletonExplanation,
    SkeletonMetadata,
    SkeletonResult,
    StrategyName,
)
from .input import STANDARD_INPUT, InputError, read_input

if TYPE_CHECKING:
    from collections.abc import Callable

    from _typeshed import SupportsWrite

    from .._tiktoken_counter import TiktokenCounter
    from ..tokens import TokenCounter
    from .compress import Options

__all__ = ["compress_with_previous"]

# Prefixes every problem with PREV, whose messages are otherwise worded as FILE's are.
PREVIOUS = "previous: "


class _KeptText:
    """The kept records' text, as a JSON array."""

    __slots__ = ("array",)

    def __init__(self, array: bytes) -> None:
        self.array = array

    def write_to(self, out: SupportsWrite[bytes]) -> None:
        out.write(self.array)


class _Input(NamedTuple):
    records: Records
    fragments: tuple[ContextFragment, ...]
    # Each fragment_id's record (the ids are unique once the fragments are checked).
    position: dict[str, int]


def compress_with_previous(
    path: str, options: Options
) -> tuple[_KeptText, SkeletonMetadata, dict[str, dict[str, Any]] | None]:
    """The records of the file at `path` (`-` for standard input) compressed, reusing what
    the records of `options.previous` sent first: the kept records, the metadata and (when
    explaining) the decisions. Raises `InputError` for bad input (FILE's problems first,
    then PREV's) and `BudgetExceededError` when the overflow policy refuses the budget."""
    # The command line's choices are the names these take.
    service = SkeletonCompressorService(
        backend=cast("BackendName", options.backend),
        strategy=cast("StrategyName", options.strategy),
        min_relevance=options.min_relevance,
        on_overflow=cast("OnOverflowName", options.on_overflow),
        order=cast("OrderName", options.order),
        max_work=options.max_work,
    )
    given = _read_file(path, service, options)
    assert options.previous is not None
    sent = _sent(given, options.previous, options)
    if options.explain:
        explained = service.explain(
            given.fragments,
            options.budget,
            previous=sent,
            max_value_loss=options.max_value_loss,
            headroom=options.headroom,
        )
        result, decisions = explained.result, _decisions(explained)
    else:
        result = service.compress(
            given.fragments,
            options.budget,
            previous=sent,
            max_value_loss=options.max_value_loss,
            headroom=options.headroom,
        )
        decisions = None
    return _kept(given, result), result.metadata, decisions


def _read_file(path: str, service: SkeletonCompressorService, options: Options) -> _Input:
    """FILE's records as fragments, checked as `compress` checks them."""
    source = STANDARD_INPUT if path == "-" else path
    data = read_input(path)
    try:
        records = read_records(data)
        columns = record_columns(records, counting=options.encoding is not None)
        count_contents(records, columns, _counter(options))
        tokens = columns.token_counts
        fragments = tuple(
            [
                ContextFragment(fragment_id, count, score, "", pinned, group, variant_of)
                for fragment_id, count, score, pinned, group, variant_of in zip(
                    columns.fragment_ids,
                    tokens,
                    columns.relevance_scores,
                    columns.required,
                    columns.groups,
                    columns.variants,
                )
            ]
        )
        try:
            service.validate(fragments)
        except FragmentError as error:
            raise rule_error(records, columns, error) from None
    except RecordsError as error:
        raise InputError(worded(error, source)) from None
    position = {fragment_id: index for index, fragment_id in enumerate(columns.fragment_ids)}
    return _Input(records, fragments, position)


def _counter(options: Options) -> Callable[[], TokenCounter | TiktokenCounter]:
    """What counts the contents of records without a token_count: made when one needs it,
    an `ImportError` on the Python backend without tiktoken, as without `--previous`."""
    return lambda: built_in(options.encoding, options.backend)


def _sent(given: _Input, path: str, options: Options) -> tuple[ContextFragment, ...]:
    """This call's fragments for the leading run of PREV's records that FILE has, the same
    fragment (id, token count and content), in PREV's order; a repeated one is given again,
    for the library to stop at."""
    source = STANDARD_INPUT if path == "-" else path
    try:
        data = read_input(path)
    except InputError as error:
        raise InputError(f"{PREVIOUS}{error}") from None
    try:
        records = read_records(data)
        columns = sent_columns(records, counting=options.encoding is not None)
    except RecordsError as error:
        raise InputError(PREVIOUS + worded(error, source)) from None
    try:
        count_contents(records, columns, _counter(options), where=PREVIOUS)
    except ImportError as error:
        raise ImportError(f"{PREVIOUS}{error}") from None
    tokens = columns.token_counts
    fragments, position = given.fragments, given.position
    run = []
    # FILE's side worked out once per row: PREV may name one record many times.
    contents: dict[int, object] = {}
    for index, (sent_id, sent_tokens) in enumerate(zip(columns.fragment_ids, tokens)):
        row = position.get(sent_id)
        if row is None:
            break
        fragment = fragments[row]
        if fragment.token_count != sent_tokens:
            break
        if row not in contents:
            contents[row] = _content(given.records, row)
        if contents[row] != _content(records, index):
            break
        run.append(fragment)
    return tuple(run)


def _content(records: Records, index: int) -> object:
    """The content of record `index` as a value equal to another's exactly when the two are
    equal as JSON values: a string as itself (absent is `""`), any other value tagged by its
    JSON type (`true` is not `1`), its numbers by their exact value (`1` is `1.0`; `1e400`
    is not `1e401`, though both read as an infinite float, which is why a content holding a
    float is read again from the record's text)."""
    content = records.values[index].get("content", "")
    if type(content) is str:
        return content
    if _holds_a_float(content):
        start, end = records.spans[index]
        content = _exact_decode(records.text[start:end]).get("content")
    return _json_value(content)


class _Exact(NamedTuple):
    """A JSON number's exact value: its sign, its significant digits (none for zero) and the
    power of ten of the last one, the same however the number is written."""

    negative: bool
    digits: str
    shift: int


def _exact(text: str) -> _Exact:
    mantissa, _, exponent = text.lower().partition("e")
    whole, _, fraction = mantissa.lstrip("-").partition(".")
    digits = (whole + fraction).lstrip("0")
    significant = digits.rstrip("0")
    if not significant:
        return _Exact(False, "", 0)  # zero, whatever its sign or exponent
    shift = int(exponent or "0") - len(fraction) + len(digits) - len(significant)
    return _Exact(mantissa.startswith("-"), significant, shift)


_exact_decode = json.JSONDecoder(parse_float=_exact, parse_int=_exact).decode


def _holds_a_float(value: object) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(_holds_a_float(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_a_float(item) for item in value.values())
    return False


def _json_value(value: object) -> object:
    # What the reader makes, or `_exact_decode`: no other types, and no subclasses but bool
    # of int.
    if isinstance(value, str):
        return ("string", value)
    if value is None or isinstance(value, bool):
        return ("literal", value)
    if isinstance(value, _Exact):
        return ("number", value)
    if isinstance(value, int):
        return ("number", _exact(str(value)))
    if isinstance(value, LongInteger):
        return ("number", _exact(value.text))
    if isinstance(value, list):
        return ("array", tuple([_json_value(item) for item in value]))
    assert isinstance(value, dict)
    # Sorted by key alone: an object's keys are distinct.
    return ("object", tuple(sorted([(key, _json_value(item)) for key, item in value.items()])))


def _kept(given: _Input, result: SkeletonResult) -> _KeptText:
    """The kept fragments' records, as they came in, in output order."""
    text, spans, position = given.records.text, given.records.spans, given.position
    kept = []
    for fragment in result.fragments:
        index = position[fragment.fragment_id]
        assert given.fragments[index] is fragment
        start, end = spans[index]
        kept.append(text[start:end])
    return _KeptText(("[" + ", ".join(kept) + "]").encode("utf-8"))


def _decisions(explained: SkeletonExplanation) -> dict[str, dict[str, Any]]:
    return {
        decision.fragment.fragment_id: {
            "kept": decision.kept,
            "reason": decision.reason,
            "rank": decision.rank,
            "budget_left": decision.budget_left,
        }
        for decision in explained.decisions
    }
