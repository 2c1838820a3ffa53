"""The module functions share services between calls: a service found again by the options
as written is the one those options make, and options that only compare equal to valid ones
(a bool for an int, NaN, a str subclass) are still checked and refused."""

from __future__ import annotations

import math
import os
import re

import pytest
from skeleton_compressor import ContextFragment, SkeletonCompressorService, compress, explain
from skeleton_compressor._backends.choice import ENVIRONMENT_VARIABLE
from skeleton_compressor.service import _service

FRAGMENTS = (
    ContextFragment("a", 40, 0.9),
    ContextFragment("b", 30, 0.5),
    ContextFragment("c", 30, 0.45),
)


class LyingName(str):
    """A name equal to every str, with the hash of "greedy"."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("greedy")


def test_a_call_again_gives_what_a_service_of_the_same_options_gives(backend: str) -> None:
    options = {"backend": backend, "strategy": "optimal", "min_relevance": 0.46}
    service = SkeletonCompressorService(**options)  # type: ignore[arg-type]
    for _ in range(3):
        assert compress(FRAGMENTS, 60, **options) == service.compress(FRAGMENTS, 60)  # type: ignore[arg-type]
    assert [f.fragment_id for f in service.compress(FRAGMENTS, 60).fragments] == ["a"]
    other = compress(FRAGMENTS, 60, backend=backend, strategy="optimal", min_relevance=0.0)
    assert [f.fragment_id for f in other.fragments] == ["b", "c"]


@pytest.mark.parametrize(
    ("option", "first", "again", "error"),
    [
        ("max_work", 1, True, TypeError),
        ("max_work", 2**26, float(2**26), TypeError),
        ("min_relevance", 0.5, math.nan, ValueError),
        ("min_relevance", 1.0, True, TypeError),
        ("strategy", "greedy", LyingName("best"), ValueError),
        ("order", "input", LyingName("inputs"), ValueError),
    ],
)
def test_options_only_equal_to_ones_used_before_are_still_refused(
    backend: str, option: str, first: object, again: object, error: type[Exception]
) -> None:
    compress(FRAGMENTS, 60, backend=backend, **{option: first})  # type: ignore[arg-type]
    with pytest.raises(error, match=option):
        compress(FRAGMENTS, 60, backend=backend, **{option: again})  # type: ignore[arg-type]
    with pytest.raises(error, match=option):
        explain(FRAGMENTS, 60, backend=backend, **{option: again})  # type: ignore[arg-type]


class EqualToAll(str):
    """A name equal to every str, with its own str's hash."""

    __slots__ = ()
    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        return True


def test_a_lying_backend_name_picks_no_service_for_a_plain_one() -> None:
    # Read as the plain str it holds: the service made for it is not another name's.
    compress(FRAGMENTS, 60, backend=EqualToAll("python"))
    with pytest.raises(ValueError, match="backend"):
        compress(FRAGMENTS, 60, backend=EqualToAll("bogus"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="backend"):
        compress(FRAGMENTS, 60, backend="bogus")  # type: ignore[arg-type]


def test_the_environment_variable_is_read_at_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "python")
    assert compress(FRAGMENTS, 60).metadata == compress(FRAGMENTS, 60, backend="python").metadata
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "fortran")
    with pytest.raises(ValueError, match=ENVIRONMENT_VARIABLE):
        compress(FRAGMENTS, 60)
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "rust")
    compress(FRAGMENTS, 60)


@pytest.mark.parametrize("value", ["python", "rust"])
def test_each_write_to_the_variable_picks_the_backend_of_the_next_call(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, value)
    assert _service("auto", "greedy").backend == value
    assert SkeletonCompressorService().backend == value
    monkeypatch.delenv(ENVIRONMENT_VARIABLE)
    assert _service("auto", "greedy").backend == "rust"
    assert SkeletonCompressorService().backend == "rust"


@pytest.mark.skipif(not os.supports_bytes_environ, reason="the environment is not bytes")
def test_a_variable_that_is_not_utf_8_is_read_as_os_environ_decodes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(os.environb, ENVIRONMENT_VARIABLE.encode(), b"r\xffst")
    with pytest.raises(ValueError, match=re.escape(repr("r\udcffst"))):
        compress(FRAGMENTS, 60)
