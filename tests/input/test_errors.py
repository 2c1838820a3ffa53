"""Errors for bad fragments are data: both backends raise the same class with the same fields,
and the message is the one the fields describe."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from skeleton_compressor import (
    ContextFragment,
    FragmentError,
    FragmentTypeError,
    FragmentValueError,
    SkeletonCompressorService,
)
from skeleton_compressor._messages import _FRAGMENT_PROBLEMS, KINDS

F = ContextFragment
RUST = SkeletonCompressorService(backend="rust")
PYTHON = SkeletonCompressorService(backend="python")
FIELDS = ("kind", "index", "fragment_id", "container", "detail", "first_index")


def bare(cls: type, **fields: Any) -> Any:
    """An instance of a ContextFragment subclass with its slots set directly."""
    instance: Any = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(instance, name, value)
    return instance


class RaisingId(ContextFragment):
    __slots__ = ()

    @property
    def fragment_id(self) -> str:
        raise LookupError("no id today")


class RaisingScore(ContextFragment):
    __slots__ = ()

    @property
    def relevance_score(self) -> float:
        raise RuntimeError("relevance unavailable")


@dataclass(frozen=True)
class Case:
    name: str
    call: Callable[[SkeletonCompressorService], object]
    error_type: type[FragmentError]
    kind: str
    index: int
    fragment_id: str | None
    container: str
    detail: str
    message: str
    first_index: int | None = None


def fragments(*items: object) -> Callable[[SkeletonCompressorService], object]:
    return lambda service: service.compress(items, 100)  # type: ignore[arg-type]


def rows(ids: list[Any], tokens: list[Any], scores: list[Any]) -> Callable[..., object]:
    return lambda service: service.compress_arrays(ids, tokens, scores, 100)


OK = F("ok", 1, 0.5)

CASES = [
    Case(
        "not_fragment",
        fragments(OK, 42),
        FragmentTypeError,
        "not_fragment",
        1,
        None,
        "fragments",
        "must be a ContextFragment, got 42 (int)",
        "fragments[1] must be a ContextFragment, got 42 (int)",
    ),
    Case(
        "id_type",
        fragments(F(7, 1, 0.5)),  # type: ignore[arg-type]
        FragmentTypeError,
        "id_type",
        0,
        None,
        "fragments",
        "fragment_id must be a str, got 7 (int)",
        "fragments[0]: fragment_id must be a str, got 7 (int)",
    ),
    Case(
        "id_empty",
        fragments(OK, F("", 1, 0.5)),
        FragmentValueError,
        "id_empty",
        1,
        None,
        "fragments",
        "fragment_id must be non-empty",
        "fragments[1]: fragment_id must be non-empty",
    ),
    Case(
        "token_type",
        fragments(F("a", 1.5, 0.5)),  # type: ignore[arg-type]
        FragmentTypeError,
        "token_type",
        0,
        "a",
        "fragments",
        "token_count must be an int, got 1.5 (float)",
        "fragments[0] (id 'a'): token_count must be an int, got 1.5 (float)",
    ),
    Case(
        "token_negative",
        fragments(F("a", -1, 0.5)),
        FragmentValueError,
        "token_negative",
        0,
        "a",
        "fragments",
        "token_count must be >= 0, got -1",
        "fragments[0] (id 'a'): token_count must be >= 0, got -1",
    ),
    Case(
        "token_too_large",
        fragments(OK, F("big", 2**63, 0.5)),
        FragmentValueError,
        "token_too_large",
        1,
        "big",
        "fragments",
        f"token_count must be <= 2**63 - 1, got {2**63}",
        f"fragments[1] (id 'big'): token_count must be <= 2**63 - 1, got {2**63}",
    ),
    Case(
        "relevance_type",
        fragments(F("a", 1, True)),
        FragmentTypeError,
        "relevance_type",
        0,
        "a",
        "fragments",
        "relevance_score must be a real number, got True (bool)",
        "fragments[0] (id 'a'): relevance_score must be a real number, got True (bool)",
    ),
    Case(
        "relevance_range",
        fragments(F("a", 1, 2.0)),
        FragmentValueError,
        "relevance_range",
        0,
        "a",
        "fragments",
        "relevance_score must be in [0, 1], got 2.0",
        "fragments[0] (id 'a'): relevance_score must be in [0, 1], got 2.0",
    ),
    Case(
        "unreadable_id",
        fragments(bare(RaisingId, token_count=1, relevance_score=0.5)),
        FragmentTypeError,
        "unreadable",
        0,
        None,
        "fragments",
        "cannot read fragment_id: LookupError: no id today",
        "fragments[0]: cannot read fragment_id: LookupError: no id today",
    ),
    Case(
        "unreadable_score",
        fragments(OK, bare(RaisingScore, fragment_id="x", token_count=3)),
        FragmentTypeError,
        "unreadable",
        1,
        "x",
        "fragments",
        "cannot read relevance_score: RuntimeError: relevance unavailable",
        "fragments[1] (id 'x'): cannot read relevance_score: RuntimeError: relevance unavailable",
    ),
    Case(
        "duplicate",
        fragments(F("a", 1, 0.5), F("d", 1, 0.5), F("c", 1, 0.5), F("d", 2, 0.1)),
        FragmentValueError,
        "duplicate",
        3,
        "d",
        "fragments",
        "duplicate fragment_id 'd'",
        "duplicate fragment_id 'd' at fragments[1] and fragments[3]",
        first_index=1,
    ),
    Case(
        "rows_id_type",
        rows(["a", None], [1, 1], [0.5, 0.5]),
        FragmentTypeError,
        "id_type",
        1,
        None,
        "rows",
        "fragment_id must be a str, got None (NoneType)",
        "rows[1]: fragment_id must be a str, got None (NoneType)",
    ),
    Case(
        "rows_id_empty",
        rows([""], [1], [0.5]),
        FragmentValueError,
        "id_empty",
        0,
        None,
        "rows",
        "fragment_id must be non-empty",
        "rows[0]: fragment_id must be non-empty",
    ),
    Case(
        "rows_token_type",
        rows(["a"], ["1"], [0.5]),
        FragmentTypeError,
        "token_type",
        0,
        "a",
        "rows",
        "token_count must be an int, got '1' (str)",
        "rows[0] (id 'a'): token_count must be an int, got '1' (str)",
    ),
    Case(
        "rows_token_negative",
        rows(["a", "b"], [1, -1], [0.5, 0.5]),
        FragmentValueError,
        "token_negative",
        1,
        "b",
        "rows",
        "token_count must be >= 0, got -1",
        "rows[1] (id 'b'): token_count must be >= 0, got -1",
    ),
    Case(
        "rows_token_too_large",
        rows(["a"], [2**64], [0.5]),
        FragmentValueError,
        "token_too_large",
        0,
        "a",
        "rows",
        f"token_count must be <= 2**63 - 1, got {2**64}",
        f"rows[0] (id 'a'): token_count must be <= 2**63 - 1, got {2**64}",
    ),
    Case(
        "rows_relevance_type",
        rows(["a"], [1], ["high"]),
        FragmentTypeError,
        "relevance_type",
        0,
        "a",
        "rows",
        "relevance_score must be a real number, got 'high' (str)",
        "rows[0] (id 'a'): relevance_score must be a real number, got 'high' (str)",
    ),
    Case(
        "rows_relevance_range",
        rows(["a"], [1], [-0.5]),
        FragmentValueError,
        "relevance_range",
        0,
        "a",
        "rows",
        "relevance_score must be in [0, 1], got -0.5",
        "rows[0] (id 'a'): relevance_score must be in [0, 1], got -0.5",
    ),
    Case(
        "rows_duplicate",
        rows(["a", "d", "c", "d"], [1, 1, 1, 1], [0.5, 0.5, 0.5, 0.5]),
        FragmentValueError,
        "duplicate",
        3,
        "d",
        "rows",
        "duplicate fragment_id 'd'",
        "duplicate fragment_id 'd' at rows[1] and rows[3]",
        first_index=1,
    ),
    Case(
        "required_type",
        fragments(OK, F("r", 1, 0.5, required=1)),  # type: ignore[arg-type]
        FragmentTypeError,
        "required_type",
        1,
        "r",
        "fragments",
        "required must be a bool, got 1 (int)",
        "fragments[1] (id 'r'): required must be a bool, got 1 (int)",
    ),
    Case(
        "group_type",
        fragments(F("g", 1, 0.5, group=7)),  # type: ignore[arg-type]
        FragmentTypeError,
        "group_type",
        0,
        "g",
        "fragments",
        "group must be None or a str, got 7 (int)",
        "fragments[0] (id 'g'): group must be None or a str, got 7 (int)",
    ),
    Case(
        "group_empty",
        fragments(OK, F("g", 1, 0.5, group="")),
        FragmentValueError,
        "group_empty",
        1,
        "g",
        "fragments",
        "group must be non-empty",
        "fragments[1] (id 'g'): group must be non-empty",
    ),
    Case(
        "variant_type",
        fragments(F("v", 1, 0.5, group="g", variant_of=b"x")),  # type: ignore[arg-type]
        FragmentTypeError,
        "variant_type",
        0,
        "v",
        "fragments",
        "variant_of must be None or a str, got b'x' (bytes)",
        "fragments[0] (id 'v'): variant_of must be None or a str, got b'x' (bytes)",
    ),
    Case(
        "variant_empty",
        fragments(OK, F("v", 1, 0.5, variant_of="")),
        FragmentValueError,
        "variant_empty",
        1,
        "v",
        "fragments",
        "variant_of must be non-empty",
        "fragments[1] (id 'v'): variant_of must be non-empty",
    ),
    Case(
        "variant_group_mismatch",
        fragments(
            F("a", 1, 0.5, group="g", variant_of="file"),
            OK,
            F("b", 1, 0.5, group="g", variant_of="file"),
            F("c", 1, 0.5, group="g"),
        ),
        FragmentValueError,
        "variant_group_mismatch",
        3,
        "c",
        "fragments",
        "variant_of None differs from 'file', the variant_of of fragments[0] in group 'g': "
        "a group's members share one variant_of",
        "fragments[3] (id 'c'): variant_of None differs from 'file', the variant_of of "
        "fragments[0] in group 'g': a group's members share one variant_of",
        first_index=0,
    ),
    Case(
        "variant_required_twice",
        fragments(
            F("full", 9, 0.9, required=True, variant_of="file"),
            OK,
            F("outline", 3, 0.5, required=True, variant_of="file"),
        ),
        FragmentValueError,
        "variant_required_twice",
        2,
        "outline",
        "fragments",
        "required, and so is fragments[0] of another unit with variant_of 'file': at most "
        "one unit of a variant set can be required",
        "fragments[2] (id 'outline'): required, and so is fragments[0] of another unit with "
        "variant_of 'file': at most one unit of a variant set can be required",
        first_index=0,
    ),
]


def caught(call: Callable[[SkeletonCompressorService], object], service: Any) -> FragmentError:
    with pytest.raises(FragmentError) as info:
        call(service)
    return info.value


def fields(error: FragmentError) -> dict[str, object]:
    return {name: getattr(error, name) for name in FIELDS}


def test_kinds() -> None:
    assert (
        *_FRAGMENT_PROBLEMS,
        "unreadable",
        "duplicate",
        "variant_group_mismatch",
        "variant_required_twice",
    ) == KINDS
    assert KINDS[:8] == (
        "not_fragment",
        "id_type",
        "id_empty",
        "token_type",
        "token_negative",
        "token_too_large",
        "relevance_type",
        "relevance_range",
    )
    assert {case.kind for case in CASES} == set(KINDS)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_both_backends_raise_the_same_error(case: Case) -> None:
    rust, python = caught(case.call, RUST), caught(case.call, PYTHON)
    for error in (rust, python):
        assert type(error) is case.error_type
        assert str(error) == case.message
        assert error.args == (case.message,)
        assert fields(error) == {
            "kind": case.kind,
            "index": case.index,
            "fragment_id": case.fragment_id,
            "container": case.container,
            "detail": case.detail,
            "first_index": case.first_index,
        }
    assert fields(rust) == fields(python)
    assert type(rust.__cause__) is type(python.__cause__)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_still_the_builtin_error(case: Case) -> None:
    builtin = TypeError if case.error_type is FragmentTypeError else ValueError
    other = ValueError if builtin is TypeError else TypeError
    for service in (RUST, PYTHON):
        with pytest.raises(builtin) as info:
            case.call(service)
        assert isinstance(info.value, FragmentError)
        assert not isinstance(info.value, other)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_errors_survive_pickling_and_copying(case: Case) -> None:
    error = caught(case.call, RUST)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        loaded = pickle.loads(pickle.dumps(error, protocol=protocol))
        assert type(loaded) is type(error)
        assert str(loaded) == str(error) and loaded.args == error.args
        assert fields(loaded) == fields(error)
    for copied in (copy.copy(error), copy.deepcopy(error)):
        assert type(copied) is type(error)
        assert str(copied) == str(error)
        assert fields(copied) == fields(error)


def test_validate_and_compress_many_raise_the_same_errors() -> None:
    bad = (F("a", 1, 0.5), F("b", -1, 0.5))
    for service in (RUST, PYTHON):
        expected = fields(caught(lambda s: s.compress(bad, 10), service))
        assert fields(caught(lambda s: s.validate(bad), service)) == expected
        assert fields(caught(lambda s: s.compress_many(bad, [1, 2]), service)) == expected


def test_errors_made_directly() -> None:
    error = FragmentValueError(
        "fragments[2] (id 'z'): token_count must be >= 0, got -3",
        kind="token_negative",
        index=2,
        fragment_id="z",
        container="fragments",
        detail="token_count must be >= 0, got -3",
    )
    assert isinstance(error, ValueError) and error.first_index is None
    assert fields(pickle.loads(pickle.dumps(error))) == fields(error)


@pytest.mark.parametrize(
    ("call", "builtin"),
    [
        (lambda service: service.compress((OK,), -1), ValueError),
        (lambda service: service.compress((OK,), 1.5), TypeError),
        (lambda service: service.compress([OK], 1), TypeError),
        (lambda service: service.compress_arrays(["a"], [1, 2], [0.5], 1), ValueError),
    ],
    ids=["budget_negative", "budget_type", "fragments_type", "column_lengths"],
)
def test_errors_about_the_whole_call_stay_plain(call: Callable[..., object], builtin: type) -> None:
    for service in (RUST, PYTHON):
        with pytest.raises(builtin) as info:
            call(service)
        assert type(info.value) is builtin
