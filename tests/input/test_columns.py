"""`compress_arrays` on hostile columns: each call reads one snapshot of its columns, both
backends read the same rows, and nothing reaches the user as a Rust panic."""

from __future__ import annotations

import numbers
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest
from skeleton_compressor import FragmentTypeError, SkeletonCompressorService
from skeleton_compressor._messages import describe

RUST = SkeletonCompressorService(backend="rust")
PYTHON = SkeletonCompressorService(backend="python")

Columns = tuple[Any, Any, Any, Any]


def outcome(service: SkeletonCompressorService, columns: Columns) -> Any:
    """The kept rows and metadata, or (error type, message)."""
    try:
        result = service.compress_arrays(*columns)
    except Exception as error:
        assert isinstance(error, (TypeError, ValueError)), repr(error)
        return type(error), str(error)
    return list(result.indices), result.metadata


def both(make: Callable[[], Columns]) -> Any:
    """The common outcome of both backends, each on columns made afresh by `make` (user code
    in the columns may change them)."""
    rust, python = outcome(RUST, make()), outcome(PYTHON, make())
    assert rust == python
    return rust


class Tokens:
    """A token count whose `__index__` runs `action` first."""

    def __init__(self, value: int, action: Callable[[], object]) -> None:
        self.value, self.action = value, action

    def __index__(self) -> int:
        self.action()
        return self.value


numbers.Integral.register(Tokens)


class Score:
    """A relevance whose `__float__` runs `action` first."""

    def __init__(self, value: float, action: Callable[[], object]) -> None:
        self.value, self.action = value, action

    def __float__(self) -> float:
        self.action()
        return self.value


numbers.Real.register(Score)


def test_a_budget_that_grows_the_ids_is_read_before_the_columns() -> None:
    def make() -> Columns:
        ids = ["a", "b"]

        class Budget:
            def __index__(self) -> int:
                ids.extend(["c", "d", "e"])
                return 10

        numbers.Integral.register(Budget)
        return ids, array("q", [1, 2]), array("d", [0.5, 0.4]), Budget()

    assert both(make) == (
        ValueError,
        "fragment_ids, token_counts and relevance_scores must have one length, got 5, 2 and 2",
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda ids: ids.pop(),
        lambda ids: ids.clear(),
        lambda ids: ids.append("late"),
        lambda ids: ids.reverse(),
        lambda ids: ids.__setitem__(slice(None), ["x"] * 9),
    ],
    ids=["pop", "clear", "append", "reverse", "replace"],
)
def test_ids_changed_by_a_token_count_are_read_as_they_were(change: Any) -> None:
    def make() -> Columns:
        ids = ["a", "b", "c", "d"]
        tokens = [1, Tokens(2, lambda: change(ids)), 3, 4]
        return ids, tokens, [0.1, 0.9, 0.5, 0.3], 100

    kept, metadata = both(make)
    assert kept == [1, 2, 3, 0]
    assert metadata.fragments_total == 4
    assert metadata.fragments_kept == 4
    assert metadata.original_tokens == 10


def test_numeric_columns_changed_while_read_are_read_as_they_were() -> None:
    def make() -> Columns:
        tokens: list[Any] = [5, 6, 7]
        scores: list[Any] = [0.2, 0.3, 0.4]

        def meddle() -> None:
            tokens[:] = [10**9, -1]
            scores.clear()

        scores[0] = Score(0.2, meddle)
        return ["a", "b", "c"], tokens, scores, 100

    kept, metadata = both(make)
    assert kept == [2, 1, 0]
    assert metadata.original_tokens == 18
    assert metadata.fragments_total == 3


def test_a_budget_that_shrinks_the_ids() -> None:
    def make() -> Columns:
        ids = ["a", "b"]

        class Budget:
            def __index__(self) -> int:
                ids.pop()
                return 10

        numbers.Integral.register(Budget)
        return ids, [1, 2], [0.5, 0.4], Budget()

    assert both(make) == (
        ValueError,
        "fragment_ids, token_counts and relevance_scores must have one length, got 1, 2 and 2",
    )


class RevList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        return reversed(list(list.__iter__(self)))

    def __getitem__(self, index: Any) -> Any:
        return list.__getitem__(self, -1 - index) if isinstance(index, int) else None

    def __len__(self) -> int:
        return 99


class RevTuple(tuple):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        return reversed(tuple(tuple.__iter__(self)))

    def __len__(self) -> int:
        return 0


@pytest.mark.parametrize("kind", [RevList, RevTuple])
def test_list_and_tuple_subclasses_are_read_as_the_items_they_store(kind: type) -> None:
    kept, metadata = both(
        lambda: (kind(["a", "b", "c"]), kind([1, 2, 3]), kind([0.9, 0.5, 0.1]), 3)
    )
    assert kept == [0, 1]
    assert metadata.fragments_total == 3
    assert metadata.compressed_tokens == 3


class Loud:
    """Counts how often it is shown."""

    shown = 0

    def __repr__(self) -> str:
        Loud.shown += 1
        return "<loud>"


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_a_huge_bad_value_costs_only_what_its_message_shows(backend: str) -> None:
    service = SkeletonCompressorService(backend=backend)
    huge = [Loud()] * 1_000_000
    Loud.shown = 0
    with pytest.raises(TypeError) as raised:
        service.compress_arrays(["a"], [huge], [0.5], 10)
    assert Loud.shown <= 24
    assert str(raised.value) == (
        "rows[0] (id 'a'): token_count must be an int, got "
        "[<loud>, <loud>, <loud>, <loud>, <loud>, <loud>, <loud>, <loud>, <loud>, <lou... (list)"
    )


def test_describe_is_bounded_by_what_it_shows() -> None:
    assert describe((1,)) == "(1,)"
    assert describe(set()) == "set()"
    assert describe({"k": [1, 2]}) == "{'k': [1, 2]}"
    assert describe(frozenset({3})) == "frozenset({3})"
    assert describe([[[[[1]]]]]) == "[[[[...]]]]"
    assert describe(10**2000) == "<int of 6644 bits>"  # more digits than Python 3.11 prints
    assert describe(2**64) == "18446744073709551616"
    assert describe("x" * 10**7) == "'" + "x" * 76 + "..."
    Loud.shown = 0
    shown = describe({Loud() for _ in range(100_000)})
    assert Loud.shown <= 24
    assert shown.startswith("{<loud>, <loud>,") and shown.endswith("...")
    assert describe({i: Loud() for i in range(100_000)}).startswith("{0: <loud>, 1: <loud>")
    assert Loud.shown <= 48


np = pytest.importorskip("numpy")


@pytest.mark.parametrize("order", ["<", ">", "="])
def test_half_floats_are_read_as_their_values(order: str) -> None:
    scores = np.array([0.25, 0.5, 0.75, 0.0999755859375], dtype=f"{order}f2")
    kept, metadata = both(lambda: (["a", "b", "c", "d"], [1, 1, 1, 1], scores, 3))
    assert kept == [2, 1, 0]
    plain = both(lambda: (["a", "b", "c", "d"], [1, 1, 1, 1], [float(s) for s in scores], 3))
    assert plain == (kept, metadata)
    assert both(lambda: (["a"], np.array([1.5], dtype="f2"), [0.5], 3)) == (
        FragmentTypeError,
        "rows[0] (id 'a'): token_count must be an int, got 1.5 (float)",
    )


def test_object_arrays_are_read_as_the_objects_they_hold() -> None:
    tokens = np.array([3, 4], dtype=object)
    kept, _ = both(lambda: (np.array(["a", "b"], dtype=object), tokens, [0.2, 0.8], 10))
    assert kept == [1, 0]


@pytest.mark.parametrize(
    ("column", "message"),
    [
        (
            np.array([True, False]),
            "token_counts must hold integers or floats, got a buffer of format '?' "
            "(booleans, which are not token counts or scores)",
        ),
        (
            np.array([1 + 2j, 3j]),
            "token_counts must hold integers or floats, got a buffer of format 'Zd' "
            "(complex numbers)",
        ),
        (
            np.array([1.0, 2.0], dtype=np.longdouble),
            "token_counts must hold integers or floats, got a buffer of format 'g' "
            "(long doubles: convert them to float64)",
        ),
        (
            np.array([[1, 2]]),
            "token_counts must be one-dimensional, got a buffer with 2 dimensions",
        ),
    ],
    ids=["bool", "complex", "longdouble", "2d"],
)
def test_buffers_that_do_not_hold_numbers_say_why(column: Any, message: str) -> None:
    if column.dtype == np.longdouble and column.itemsize == 8:
        pytest.skip("long double is a double here")
    assert both(lambda: (["a", "b"], column, [0.5, 0.5], 10)) == (TypeError, message)


@pytest.mark.parametrize("at", range(3))
@pytest.mark.parametrize("kind", [set, frozenset])
def test_a_set_is_no_column(at: int, kind: type) -> None:
    # A set of str iterates in an order that changes with the hash seed: its rows would too.
    columns: list[Any] = [["a", "b"], [1, 2], [0.5, 0.25], 10]
    columns[at] = kind(columns[at])
    name, what = [
        ("fragment_ids", "a sequence of str"),
        ("token_counts", "a sequence of numbers or a numeric buffer"),
        ("relevance_scores", "a sequence of numbers or a numeric buffer"),
    ][at]
    assert both(lambda: tuple(columns)) == (
        TypeError,
        f"{name} must be {what}, got {kind.__name__} (a set has no order)",
    )


def test_ordered_iterables_are_columns() -> None:
    # Only sets are refused for their order: dict views, ranges, deques and generators keep
    # the order they were made in.
    scores = {"a": 0.5, "b": 0.25, "c": 0.75}
    tokens = dict(zip(scores, [1, 2, 3]))
    plain = both(lambda: (["a", "b", "c"], [1, 2, 3], [0.5, 0.25, 0.75], 10))
    assert plain[0] == [2, 0, 1]
    assert both(lambda: (scores.keys(), tokens.values(), scores.values(), 10)) == plain
    assert both(lambda: (deque(scores), range(1, 4), (s for s in scores.values()), 10)) == plain


@pytest.mark.parametrize("column", ["groups", "variants"])
def test_a_set_of_names_is_no_column(column: str) -> None:
    for service in (RUST, PYTHON):
        with pytest.raises(TypeError) as caught:
            service.compress_arrays(["a"], [1], [0.5], 10, **{column: {"x"}})
        assert str(caught.value) == (
            f"{column} must be a sequence of None or str, got set (a set has no order)"
        )


@pytest.mark.parametrize("at", range(3))
def test_a_masked_array_with_masked_rows_is_refused(at: int) -> None:
    # Its buffer and its items hold the values beneath the mask, which the rows would keep;
    # with nothing masked, they are its values.
    columns: list[Any] = [
        np.array(["a", "b"], dtype=object),
        np.array([1, 2]),
        np.array([0.5, 0.25]),
        10,
    ]
    plain = both(lambda: tuple(columns))
    unmasked = list(columns)
    unmasked[at] = np.ma.masked_array(columns[at], mask=[False, False])
    assert both(lambda: tuple(unmasked)) == plain
    columns[at] = np.ma.masked_array(columns[at], mask=[False, True])
    name = ["fragment_ids", "token_counts", "relevance_scores"][at]
    assert both(lambda: tuple(columns)) == (
        TypeError,
        f"{name} has masked rows, which would be read as the values beneath the mask: "
        "fill them or leave those rows out",
    )


@pytest.mark.parametrize("column", ["required", "groups", "variants"])
def test_a_masked_optional_column_is_refused(column: str) -> None:
    values = np.array([False]) if column == "required" else np.array(["x"], dtype=object)
    masked = np.ma.masked_array(values, mask=[True])
    for service in (RUST, PYTHON):
        with pytest.raises(TypeError, match=f"^{column} has masked rows"):
            service.compress_arrays(["a"], [1], [0.5], 10, **{column: masked})


def test_numpy_datetimes_are_values_of_the_wrong_type() -> None:
    column = np.array([1, 2], dtype="datetime64[s]")
    error_type, message = both(lambda: (["a", "b"], column, [0.5, 0.5], 10))
    assert error_type is FragmentTypeError
    assert message.startswith("rows[0] (id 'a'): token_count must be an int, got ")


def test_ids_shared_with_a_thread_that_changes_them() -> None:
    # Another thread appends to and pops from the ids between and during calls. A call reads
    # either the ids as they were (and then agrees with the fallback on them) or a longer
    # list (and then says the columns' lengths differ); never anything else.
    size = 2_000
    ids = [f"id-{i:05d}" for i in range(size)]
    tokens = np.arange(1, size + 1, dtype=np.int64)
    scores = np.linspace(0.0, 1.0, size)
    expected = PYTHON.compress_arrays(list(ids), tokens, scores, size * 10)
    mismatch = (
        f"fragment_ids, token_counts and relevance_scores must have one length, got {size + 1}, "
        f"{size} and {size}"
    )
    stop = threading.Event()

    def meddle() -> None:
        while not stop.is_set():
            ids.append("intruder")
            ids.pop()

    thread = threading.Thread(target=meddle)
    thread.start()
    outcomes = {"ok": 0, "mismatch": 0}
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            for service in (RUST, PYTHON):
                try:
                    result = service.compress_arrays(ids, tokens, scores, size * 10)
                except ValueError as error:
                    assert str(error) == mismatch
                    outcomes["mismatch"] += 1
                else:
                    assert list(result.indices) == list(expected.indices)
                    assert result.metadata == expected.metadata
                    outcomes["ok"] += 1
    finally:
        stop.set()
        thread.join()
    assert outcomes["ok"] > 0, outcomes
