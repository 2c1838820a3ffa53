"""Problems with the command line's input records, as data, and their one-line wording.

Both readers (the Rust extension's and the standard library's in `reader`) raise a
`RecordsError` carrying what is wrong and where; `worded` makes the message, in JSON's words
(`null`, `string`, `number`), naming the record and, for JSON Lines, its line.
"""

from __future__ import annotations

import difflib
import re

from .._messages import describe

__all__ = ["KINDS", "RecordsError", "shown_number", "worded"]

_RECORD_PROBLEMS = {
    "not_object": "expected a JSON object, got {json_type}",
    "missing_field": "missing field {field!r}",
    "id_type": "fragment_id must be a string, got {got}",
    "id_empty": "fragment_id must be non-empty",
    "token_type": "token_count must be an integer, got {got}",
    "token_negative": "token_count must be >= 0, got {number}",
    "token_too_large": "token_count must be <= 2**63 - 1, got {number}",
    "relevance_type": "relevance_score must be a number, got {got}",
    "relevance_range": "relevance_score must be in [0, 1], got {number}",
    "required_type": "required must be true or false, got {got}",
    "group_type": "group must be null or a string, got {got}",
    "group_empty": "group must be non-empty",
    "variant_type": "variant_of must be null or a string, got {got}",
    "variant_empty": "variant_of must be non-empty",
    "no_content": "no token_count, and no content to count it from",
    "content_type": "content must be a string to count its tokens, got {got}",
}

# Every `RecordsError.kind`; the Rust reader's problems have the same names.
KINDS: tuple[str, ...] = (
    *_RECORD_PROBLEMS,
    "duplicate",
    "variant_group_mismatch",
    "variant_required_twice",
    "malformed",
    "not_json",
    "fragments_not_array",
    "no_records",
    "not_utf8",
    "too_many",
    "changed",
)

_INTEGER = re.compile(r"-?[0-9]+")
_SHOWN_DIGITS = 40


def shown_number(text: str) -> str:
    """A JSON number as Python reads it (`-0` is 0, `1.50` is 1.5, `1e400` is inf), and an
    integer past forty digits by its length."""
    if not _INTEGER.fullmatch(text):
        return repr(float(text))
    digits = text.lstrip("-")
    if len(digits) > _SHOWN_DIGITS:
        sign = "a negative" if text.startswith("-") else "an"
        return f"{sign} integer of {len(digits)} digits"
    return str(int(text))


class RecordsError(Exception):
    """What is wrong with the input, and where: `kind` (one of `KINDS`), the input's `form`
    (`array`, `lines` or `wrapped`), the record's `index` and `line`, its `fragment_id` (when
    it is a string), the `field` missing, the offending value's `json_type` and, for a number,
    its text as `number`; `first_index`/`first_line` for a duplicate's first record (for a
    broken variant rule, the record it is broken against); `group`, `variant_of` and
    `first_variant_of` (the names a variant rule is about, `None` for null); `detail` for
    malformed JSON; `start`, a byte offset, where the Rust reader gives one; `keys`, for a
    missing field, the record's keys (for a hint naming the one it may mean)."""

    def __init__(
        self,
        kind: str,
        *,
        form: str | None = None,
        index: int | None = None,
        line: int | None = None,
        start: int | None = None,
        fragment_id: str | None = None,
        field: str | None = None,
        json_type: str | None = None,
        number: str | None = None,
        first_index: int | None = None,
        first_line: int | None = None,
        first_start: int | None = None,
        group: str | None = None,
        variant_of: str | None = None,
        first_variant_of: str | None = None,
        detail: str | None = None,
        keys: tuple[str, ...] | None = None,
    ) -> None:
        super().__init__(kind)
        self.kind = kind
        self.form = form
        self.index = index
        self.line = line
        self.start = start
        self.fragment_id = fragment_id
        self.field = field
        self.json_type = json_type
        self.number = number
        self.first_index = first_index
        self.first_line = first_line
        self.first_start = first_start
        self.group = group
        self.variant_of = variant_of
        self.first_variant_of = first_variant_of
        self.detail = detail
        self.keys = keys

    def locate(self, data: bytes) -> None:
        """Lines from the byte offsets the Rust reader gives."""
        if self.line is None and self.start is not None:
            self.line = data.count(b"\n", 0, self.start) + 1
        if self.first_line is None and self.first_start is not None:
            self.first_line = data.count(b"\n", 0, self.first_start) + 1


def _name(name: str | None) -> str:
    return "null" if name is None else describe(name)


def _group_mismatch(error: RecordsError, first: str) -> str:
    return (
        f"variant_of {_name(error.variant_of)} differs from {_name(error.first_variant_of)}, "
        f"the variant_of of {first} in group {_name(error.group)}: a group's members share "
        "one variant_of"
    )


def _required_twice(error: RecordsError, first: str) -> str:
    return (
        f"required, and so is {first} of another unit with variant_of "
        f"{_name(error.variant_of)}: at most one unit of a variant set can be required"
    )


_VARIANT_RULES = {
    "variant_group_mismatch": _group_mismatch,
    "variant_required_twice": _required_twice,
}


# Names records often give the three required fields, in other tools' formats.
_ALIASES = {
    "fragment_id": ("id", "fragment", "doc_id", "document_id", "chunk_id", "name", "key"),
    "token_count": ("tokens", "token", "num_tokens", "n_tokens", "token_len", "length"),
    "relevance_score": ("relevance", "score", "similarity", "relevance_score"),
}


def _missing_hint(field: str | None, keys: tuple[str, ...] | None) -> str:
    """What to do about a missing field: rename a key that means it, or, for a token count
    with content at hand, count it."""
    if field is None or not keys:
        return ""
    present = set(keys)
    if {"fragments", "skeleton_metadata"} <= present:
        # An output of compress with its keys reordered reads as one JSON Lines record.
        return ' (an object of records has "fragments" as its first key)'
    meant = [key for key in _ALIASES.get(field, ()) if key in present]
    meant = meant or difflib.get_close_matches(field, keys, n=1, cutoff=0.7)
    if meant:
        return f" (the record has {meant[0]!r}: name it {field!r})"
    if field == "token_count" and "content" in present:
        return " (pass --encoding NAME to count the tokens of its content)"
    return ""


def _record(index: int | None, line: int | None, form: str | None) -> str:
    return f"record {index}" + (f" on line {line}" if form == "lines" else "")


def record_place(index: int, lines: list[int] | None, form: str | None, fragment_id: object) -> str:
    """How an error names record `index` (`record 2 on line 3 (id 'b')`)."""
    where = _record(index, None if lines is None else lines[index], form)
    return where if fragment_id is None else f"{where} (id {describe(fragment_id)})"


# Python's reader words this one to be followed by its position ("... at"), which the
# message gives as a line.
_PLAIN_DETAILS = {
    "Invalid control character at": (
        "a control character inside a string (written raw; JSON escapes it, as \\u0000)"
    ),
}


def worded(error: RecordsError, source: str) -> str:
    """The error as one line; `source` names the input (a path, or standard input)."""
    kind = error.kind
    if kind == "not_utf8":
        return f"{source} is not UTF-8 (line {error.line}, byte {error.start})"
    if kind == "no_records":
        return f"{source} has no records (an empty set of records is written [])"
    if kind == "malformed":
        detail = error.detail
        if detail:
            detail = _PLAIN_DETAILS.get(detail, detail)
        return f"malformed JSON at line {error.line}" + (f": {detail}" if detail else "")
    if kind == "not_json":
        return (
            f"{source} is not JSON (line {error.line}: {error.detail}); records are read from "
            'a JSON array of objects, an object with a "fragments" array, or JSON Lines '
            "(one object per line)"
        )
    if kind == "fragments_not_array":
        return f"fragments must be an array of records, got {error.json_type}"
    if kind == "too_many":
        return "too many records to compress at once"
    if kind == "changed":
        return f"{source} changed while it was read"
    if kind == "duplicate":
        first = _record(error.first_index, error.first_line, error.form)
        second = _record(error.index, error.line, error.form)
        return f"duplicate fragment_id {describe(error.fragment_id)} at {first} and {second}"
    where = _record(error.index, error.line, error.form)
    if error.fragment_id is not None:
        where = f"{where} (id {describe(error.fragment_id)})"
    if kind in _VARIANT_RULES:
        first = _record(error.first_index, error.first_line, error.form)
        return f"{where}: {_VARIANT_RULES[kind](error, first)}"
    number = shown_number(error.number) if error.number is not None else None
    got = f"number {number}" if number is not None else error.json_type
    detail = _RECORD_PROBLEMS[kind].format(
        json_type=error.json_type, field=error.field, got=got, number=number
    )
    if kind == "missing_field":
        detail += _missing_hint(error.field, error.keys)
    return f"{where}: {detail}"
