"""`compress_arrays` over every form a column may take, generated: both backends agree with a
reference on the values the columns hold, with columns changed mid-call by user code."""

from __future__ import annotations

import numbers
import os
from array import array
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skeleton_compressor import FragmentValueError, SkeletonCompressorService

np = pytest.importorskip("numpy")

EXAMPLES = int(os.environ.get("DIFFERENTIAL_EXAMPLES", "400"))
RUST = SkeletonCompressorService(backend="rust")
PYTHON = SkeletonCompressorService(backend="python")

INT_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]
FLOAT_DTYPES = ["f2", "f4", "f8"]
INT_CODES = "bBhHiIlLqQ"
FLOAT_CODES = "fd"


class Meddler:
    """A token count whose `__index__` changes the caller's lists before it answers."""

    def __init__(self, value: int, lists: list[list[Any]]) -> None:
        self.value, self.lists = value, lists

    def __index__(self) -> int:
        for column in self.lists:
            column.reverse()
            column.append(column[0] if column else 0)
        return self.value


numbers.Integral.register(Meddler)


class StoredOrder(list):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        return iter(list(reversed(list(list.__iter__(self)))))


def forms(kind: str) -> list[str]:
    base = ["list", "tuple", "subclass", "iterator"]
    if kind == "ids":
        return [*base, "object array"]
    codes = INT_CODES + (FLOAT_CODES if kind == "scores" else "")
    dtypes = INT_DTYPES + (FLOAT_DTYPES if kind == "scores" else [])
    return [
        *base,
        *(f"numpy {o}{d}" for d in dtypes for o in "<>"),
        *(f"strided {d}" for d in dtypes),
        *(f"reversed {d}" for d in dtypes),
        *(f"read-only {d}" for d in dtypes),
        *(f"array {c}" for c in codes),
        *(f"memoryview {c}" for c in codes),
    ]


def column_of(values: list[Any], form: str) -> Any:
    """`values` in the given form; buffers hold exactly `values` (the caller keeps them in
    range for the dtype)."""
    if form == "list":
        return list(values)
    if form == "tuple":
        return tuple(values)
    if form == "subclass":
        return StoredOrder(values)
    if form == "iterator":
        return iter(list(values))
    if form == "object array":
        column = np.empty(len(values), dtype=object)
        column[:] = values
        return column
    how, code = form.split(" ")
    if how in ("array", "memoryview"):
        stored = array(code, values)
        return stored if how == "array" else memoryview(stored)
    dtype = np.dtype(code if how == "numpy" else "=" + code)
    if how == "strided":
        spread = np.zeros(2 * len(values), dtype=dtype)
        spread[::2] = values
        return spread[::2]
    if how == "reversed":
        return np.array(values[::-1], dtype=dtype)[::-1]
    column = np.array(values, dtype=dtype)
    column.setflags(write=False)
    return column


def held(values: list[Any], form: str) -> list[Any]:
    """The values a column of this form holds (half and single floats round)."""
    code = form.split(" ")[-1].lstrip("<>")
    rounding = {"f2": np.float16, "f4": np.float32, "f": np.float32}.get(code)
    return [float(rounding(v)) for v in values] if rounding else list(values)


def reference(ids: list[str], tokens: list[int], scores: list[float], budget: int) -> Any:
    if budget == 0:
        return [], 0
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
    kept, left = [], budget
    for i in order:
        if tokens[i] <= left:
            kept.append(i)
            left -= tokens[i]
    if order and not kept:
        kept = [order[0]]
    return kept, sum(tokens[i] for i in kept)


def outcome(service: SkeletonCompressorService, columns: tuple[Any, ...]) -> Any:
    try:
        result = service.compress_arrays(*columns)
    except Exception as error:
        assert isinstance(error, (TypeError, ValueError)), repr(error)
        return type(error), str(error)
    return list(result.indices), result.metadata


@st.composite
def cases(draw: st.DrawFn) -> tuple[Callable[[], tuple[Any, ...]], Any, int]:
    size = draw(st.integers(0, 12))
    names = draw(
        st.lists(
            st.text("ab\u00e9\U0001f600", min_size=1, max_size=3), min_size=size, max_size=size
        )
    )
    tokens = draw(st.lists(st.integers(0, 120), min_size=size, max_size=size))
    score_levels = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 0.1, 0.3])
    scores = draw(st.lists(score_levels, min_size=size, max_size=size))
    id_form = draw(st.sampled_from(forms("ids")))
    token_form = draw(st.sampled_from(forms("tokens")))
    score_form = draw(st.sampled_from(forms("scores")))
    if score_form.split(" ")[-1].lstrip("<>")[:1] in "iubBhHlLqQI":
        scores = [float(round(s)) for s in scores]  # integer buffers hold 0 and 1
        score_values: list[Any] = [int(s) for s in scores]
    else:
        score_values = scores
    budget = draw(st.integers(0, sum(tokens) + 5))
    meddle_at = draw(st.one_of(st.none(), st.integers(0, max(size - 1, 0))))
    if meddle_at is not None and (size == 0 or token_form not in ("list", "tuple")):
        meddle_at = None

    def make() -> tuple[Any, ...]:
        id_column = column_of(names, id_form)
        token_column = column_of(tokens, token_form)
        if meddle_at is not None:
            lists = [c for c in (id_column, token_column) if type(c) is list]
            token_column = list(token_column)
            token_column[meddle_at] = Meddler(tokens[meddle_at], [*lists, token_column])
            if token_form == "tuple":
                token_column = tuple(token_column)
        return id_column, token_column, column_of(score_values, score_form), budget

    read_scores = held(scores, score_form)
    expected: Any = None
    if len(set(names)) == size:
        expected = reference(names, tokens, read_scores, budget)
    return make, expected, size


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_column_form_reads_the_values_it_holds(case: Any) -> None:
    make, expected, size = case
    rust, python = outcome(RUST, make()), outcome(PYTHON, make())
    assert rust == python
    if expected is None:  # a repeated id
        assert rust[0] is FragmentValueError
        assert "duplicate fragment_id" in rust[1]
    else:
        kept, metadata = rust
        assert (kept, metadata.compressed_tokens) == expected
        assert metadata.fragments_total == size
