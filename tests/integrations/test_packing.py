"""The packing every adapter shares: its checks name the adapter's items, on both backends."""

from __future__ import annotations

import math

import pytest
from skeleton_compressor import FragmentTypeError, FragmentValueError
from skeleton_compressor.integrations._packing import Packing, missing_score_error


def words(text: str) -> int:
    return len(text.split())


def test_counts_come_from_the_counter(backend: str) -> None:
    packing = Packing(10, words, backend=backend)
    assert packing.token_counts(["a b c", "", "d"], "documents") == [3, 0, 1]


def test_a_text_that_is_not_a_str_is_named(backend: str) -> None:
    packing = Packing(10, words, backend=backend)
    with pytest.raises(TypeError, match=r"^documents\[1\] must be a str, got 5 \(int\)$"):
        packing.token_counts(["a", 5], "documents")


def test_a_str_subclass_is_counted_as_the_plain_str_it_holds(backend: str) -> None:
    class Text(str):
        def split(self, *args: object, **kwargs: object) -> list[str]:
            raise AssertionError("the counter is given the plain str")

    seen: list[type] = []

    def counted(text: str) -> int:
        seen.append(type(text))
        return len(text.split())

    packing = Packing(10, counted, backend=backend)
    assert packing.token_counts([Text("a b"), "c"], "nodes") == [2, 1]
    assert seen == [str, str]
    # A built-in encoding counts the held text too.
    assert Packing(10, "o200k_base", backend=backend).token_counts([Text("a b")], "x") == [2]


def test_a_callables_bad_count_is_the_librarys_error(backend: str) -> None:
    packing = Packing(10, lambda text: -1 if text == "bad" else 1, backend=backend)
    counts = packing.token_counts(["ok", "bad"], "nodes")
    with pytest.raises(FragmentValueError) as raised:
        packing.select(counts, [0.5, 0.5], "nodes", ids=["n0", "n1"])
    assert (raised.value.kind, raised.value.index, raised.value.container) == (
        "token_negative",
        1,
        "nodes",
    )
    assert str(raised.value) == "nodes[1] (id 'n1'): token_count must be >= 0, got -1"


def test_scores_are_checked_and_the_item_named(backend: str) -> None:
    packing = Packing(10, words, backend=backend)
    with pytest.raises(FragmentValueError) as out_of_range:
        packing.select([1, 1], [0.5, 1.5], "documents", ids=["a", "b"])
    assert (
        str(out_of_range.value)
        == "documents[1] (id 'b'): relevance_score must be in [0, 1], got 1.5"
    )
    with pytest.raises(FragmentTypeError) as not_a_number:
        packing.select([1], ["0.5"], "documents", ids=[None])
    assert str(not_a_number.value) == (
        "documents[0]: relevance_score must be a real number, got '0.5' (str)"
    )


@pytest.mark.parametrize(
    ("counts", "scores", "kind", "index"),
    [
        ([3, -1, 2], [0.5] * 3, "token_negative", 1),
        ([2**63, 1], [0.5] * 2, "token_too_large", 0),
        ([1, True], [0.5] * 2, "token_type", 1),
        ([1, 1, 1], [math.nan, 0.5, 0.5], "relevance_range", 0),
        ([1, 1, 1], [0.5, math.nan, 0.5], "relevance_range", 1),
        ([1, 1], [0.5, -0.25], "relevance_range", 1),
        ([1, 1], [1.0000001, 0.5], "relevance_range", 0),
        ([1, 1], [math.inf, -math.inf], "relevance_range", 0),
        ([1, 1], [0.5, 2], "relevance_range", 1),
    ],
)
def test_plain_columns_are_checked_at_every_edge(
    backend: str, counts: list[object], scores: list[object], kind: str, index: int
) -> None:
    # Columns of plain ints and floats are checked whole before one by one.
    packing = Packing(10, words, backend=backend)
    with pytest.raises((FragmentTypeError, FragmentValueError)) as raised:
        packing.select(counts, scores, "documents")
    assert (raised.value.kind, raised.value.index, raised.value.container) == (
        kind,
        index,
        "documents",
    )


def test_plain_columns_at_their_bounds_are_kept(backend: str) -> None:
    packing = Packing(2**63 - 1, words, backend=backend)
    kept = packing.select([0, 2**62, 2**62 - 2, 1], [0.0, -0.0, 1.0, 1], "documents")
    assert sorted(kept.indices) == [0, 1, 2, 3]
    assert kept.metadata.compressed_tokens == 2**63 - 1


def test_ties_keep_input_order_past_ten_items(backend: str) -> None:
    # Row names are zero-padded, so row 10 does not rank between rows 1 and 2.
    packing = Packing(3, words, backend=backend)
    kept = packing.select([1] * 12, [0.5] * 12, "documents")
    assert list(kept.indices) == [0, 1, 2]
    assert kept.metadata.fragments_total == 12


def test_the_services_order(backend: str) -> None:
    packing = Packing(5, words, backend=backend)
    assert list(packing.select([2, 2, 2], [0.1, 0.5, 0.9], "items").indices) == [2, 1]
    in_input_order = Packing(5, words, order="input", backend=backend)
    assert list(in_input_order.select([2, 2, 2], [0.1, 0.5, 0.9], "items").indices) == [1, 2]
    assert list(in_input_order.select([2, 2], [0.1, 0.9], "items").indices) == [0, 1]


def test_options_are_checked_when_made() -> None:
    with pytest.raises(ValueError, match="strategy must be one of"):
        Packing(10, words, strategy="best")
    with pytest.raises(ValueError, match="skeleton_budget must be >= 0, got -1"):
        Packing(-1, words)
    with pytest.raises(TypeError, match="skeleton_budget must be an int"):
        Packing(1.5, words)  # type: ignore[arg-type]


def test_a_missing_score_names_the_item() -> None:
    error = missing_score_error("nodes", 2, "n2", "score is None", "give it one")
    assert isinstance(error, FragmentTypeError)
    assert (error.kind, error.index, error.fragment_id) == ("relevance_type", 2, "n2")
    assert str(error) == ("nodes[2] (id 'n2'): no relevance score: score is None (give it one)")
