"""The command line's records read with the standard library: the Python backend's reader,
and the one that words malformed JSON for both backends.

It reads what the Rust reader reads (see `records.rs` of the Rust core) and checks it the same way,
raising the same `RecordsError`s: a JSON array, JSON Lines, or an object whose first key is
`fragments`; standard JSON only; values nested at most `MAX_DEPTH` deep.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from .errors import RecordsError

__all__ = [
    "MAX_DEPTH",
    "LongInteger",
    "Records",
    "form_of",
    "json_type",
    "number_text",
    "read_records",
]

MAX_DEPTH = 256
_BOM = b"\xef\xbb\xbf"
_SPACE = " \t\r\n"
_LINE_SPACE = " \t\r"
_WHITE = re.compile(r"[ \t\r\n]*")
_WRAPPED = re.compile(r'[ \t\r\n]*\{[ \t\r\n]*"fragments"[ \t\r\n]*:')
_TOO_DEEP = "values nested too deeply to read"
# Characters split into lines at a time: a few milliseconds of work.
_SPLIT_CHARACTERS = 1 << 22
# Python converts longer digit strings to int only on request (and slowly).
_LONGEST_INT = 4000


class LongInteger:
    """An integer too long to convert, kept as its text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _NotStandard(Exception):
    pass


def _integer(text: str) -> int | LongInteger:
    return int(text) if len(text) <= _LONGEST_INT else LongInteger(text)


def _constant(name: str) -> Any:
    raise _NotStandard(name)


# A JSON string's value and where it ends, from just after its opening quote (the standard
# library's own, which typeshed does not list).
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_decode = json.JSONDecoder(parse_int=_integer, parse_constant=_constant).raw_decode


class _Members(list):  # type: ignore[type-arg]
    """An object's members, every one: a repeated key's earlier values count for depth too."""


_decode_members = json.JSONDecoder(
    object_pairs_hook=_Members, parse_int=_integer, parse_constant=_constant
).raw_decode

_JSON_TYPES: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    LongInteger: "number",
    type(None): "null",
}


def json_type(value: object) -> str:
    return _JSON_TYPES[type(value)]


def number_text(value: object) -> str | None:
    if type(value) is LongInteger:
        return value.text
    if type(value) is int or type(value) is float:
        return repr(value)
    return None


def _depth(value: object, limit: int = MAX_DEPTH + 1) -> int:
    """How deeply `value` nests lists and dicts, counted no further than `limit`."""
    if type(value) is dict:
        items: Any = value.values()
    elif type(value) is _Members:
        items = (member for _, member in value)
    elif type(value) is list:
        items = value
    else:
        return 0
    if limit <= 1:
        return 1
    return 1 + max((_depth(item, limit - 1) for item in items), default=0)


def form_of(text: str) -> str | None:
    """`array`, `lines` or `wrapped` by the text's start; None when it is only white space."""
    start = _WHITE.match(text).end()  # type: ignore[union-attr]
    if start == len(text):
        return None
    if text[start] == "[":
        return "array"
    return "wrapped" if _WRAPPED.match(text) else "lines"


class Records(NamedTuple):
    """What was read: the form, each record's text span, and its value."""

    form: str
    text: str
    spans: list[tuple[int, int]]
    values: list[Any]
    lines: list[int] | None


class _Reader:
    def __init__(self, text: str, form: str) -> None:
        self.text = text
        self.form = form
        self.spans: list[tuple[int, int]] = []
        self.values: list[Any] = []
        self.lines: list[int] | None = [] if form == "lines" else None

    def malformed(self, line: int, detail: str) -> RecordsError:
        return RecordsError("malformed", form=self.form, line=line, detail=detail)

    def line_at(self, index: int) -> int:
        return self.text.count("\n", 0, index) + 1

    def value(self, text: str, start: int, line: int | None = None) -> tuple[Any, int]:
        """The value at `start`, checked for depth; `line` when `text` is one line of the
        input."""
        try:
            value, end = _decode(text, start)
        except json.JSONDecodeError as error:
            raise self.malformed(error.lineno if line is None else line, error.msg) from None
        except RecursionError:
            raise self.malformed(line or self.line_at(start), _TOO_DEEP) from None
        except _NotStandard as error:
            raise self.malformed(
                line or self.line_at(start), f"{error} is not standard JSON"
            ) from None
        if text.count("[", start, end) + text.count("{", start, end) > MAX_DEPTH and (
            _depth(value) > MAX_DEPTH or _depth(_decode_members(text, start)[0]) > MAX_DEPTH
        ):
            raise self.malformed(line or self.line_at(start), _TOO_DEEP)
        return value, end

    def first_value(self, line: str, start: int, number: int) -> tuple[Any, int]:
        """`value` for a line of JSON Lines; malformed JSON on the input's first line, not
        starting as an object, is `not_json` (a file of another format, such as CSV)."""
        try:
            return self.value(line, start, number)
        except RecordsError as error:
            first = self.line_at(_WHITE.match(self.text).end())  # type: ignore[union-attr]
            if error.kind != "malformed" or number != first or line.startswith("{", start):
                raise
            raise RecordsError(
                "not_json", form=self.form, line=number, detail=error.detail
            ) from None

    def take(self, value: Any, start: int, end: int) -> None:
        self.spans.append((start, end))
        self.values.append(value)

    def array(self, start: int) -> int:
        """Reads the records of the array opening at `start` (or, resuming, from the record
        just after it); returns where the array ends."""
        text, white = self.text, _WHITE.match
        at = white(text, start + 1).end()  # type: ignore[union-attr]
        if text.startswith("]", at):
            return at + 1
        while True:
            value, end = self.value(text, at)
            self.take(value, at, end)
            at = white(text, end).end()  # type: ignore[union-attr]
            following = text[at : at + 1]
            if following == ",":
                at = white(text, at + 1).end()  # type: ignore[union-attr]
            elif following == "]":
                return at + 1
            else:
                raise self.malformed(self.line_at(at), "Expecting ',' delimiter")

    def wrapped(self, start: int) -> int:
        """Reads the object at `start`, its records from `fragments`; returns where it ends."""
        text, white = self.text, _WHITE.match
        at = white(text, start + 1).end()  # type: ignore[union-attr]
        seen = False
        while True:
            if not text.startswith('"', at):
                raise self.malformed(
                    self.line_at(at), "Expecting property name enclosed in double quotes"
                )
            try:
                key, at = _scanstring(text, at + 1)
            except json.JSONDecodeError as error:
                raise self.malformed(error.lineno, error.msg) from None
            at = white(text, at).end()  # type: ignore[union-attr]
            if not text.startswith(":", at):
                raise self.malformed(self.line_at(at), "Expecting ':' delimiter")
            at = white(text, at + 1).end()  # type: ignore[union-attr]
            if key != "fragments":
                _, end = self.value(text, at)
            elif seen:
                raise self.malformed(self.line_at(at), '"fragments" is given twice')
            elif text.startswith("[", at):
                seen = True
                end = self.array(at)
            else:
                value, end = self.value(text, at)
                raise RecordsError("fragments_not_array", json_type=json_type(value))
            at = white(text, end).end()  # type: ignore[union-attr]
            following = text[at : at + 1]
            if following == "}":
                return at + 1
            if following != ",":
                raise self.malformed(self.line_at(at), "Expecting ',' delimiter")
            at = white(text, at + 1).end()  # type: ignore[union-attr]

    def document(self, start: int) -> None:
        self.finish(self.array(start) if self.form == "array" else self.wrapped(start))

    def finish(self, end: int) -> None:
        end = _WHITE.match(self.text, end).end()  # type: ignore[union-attr]
        if end != len(self.text):
            raise self.malformed(self.line_at(end), "Extra data")

    def json_lines(self, start: int) -> None:
        text = self.text
        number = text.count("\n", 0, start) + 1
        for line in _lines(text, start):
            lead = len(line) - len(line.lstrip(_LINE_SPACE))
            if lead < len(line):
                value, end = self.first_value(line, lead, number)
                if line[end:].strip(_LINE_SPACE):
                    raise self.malformed(number, "Extra data")
                self.take(value, start + lead, start + end)
                self.lines.append(number)  # type: ignore[union-attr]
            start += len(line) + 1
            number += 1


def _lines(text: str, start: int) -> Iterator[str]:
    """`text[start:].split("\\n")`, split a few megabytes at a time: one split of a large
    input would hold Ctrl-C off until it is done."""
    while True:
        end = text.find("\n", start + _SPLIT_CHARACTERS)
        if end < 0:
            yield from text[start:].split("\n")
            return
        yield from text[start:end].split("\n")
        start = end + 1


def decoded(data: bytes) -> str:
    """The input's text, less a byte order mark."""
    skip = len(_BOM) if data.startswith(_BOM) else 0
    try:
        # Sliced only for a byte order mark: a slice copies the whole input.
        return (data[skip:] if skip else data).decode("utf-8")
    except UnicodeDecodeError as error:
        offset = skip + error.start
        line = data.count(b"\n", 0, offset) + 1
        raise RecordsError("not_utf8", start=offset, line=line) from None


def read_records(data: bytes, resume: int = 0) -> Records:
    """Every record of `data`, or the first problem reading it. `resume`, the byte offset of a
    record of an array or a line of JSON Lines, starts reading there instead."""
    text = decoded(data)
    form = form_of(text)
    if form is None:
        raise RecordsError("no_records")
    reader = _Reader(text, form)
    skip = len(_BOM) if data.startswith(_BOM) else 0
    at = len(data[skip:resume].decode("utf-8")) if resume > skip else 0
    if form == "lines":
        reader.json_lines(at)
    elif form == "array" and at > 0:
        reader.finish(reader.array(at - 1))
    else:
        reader.document(_WHITE.match(text).end())  # type: ignore[union-attr]
    return Records(form, text, reader.spans, reader.values, reader.lines)
