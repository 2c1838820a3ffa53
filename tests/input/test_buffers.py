"""Numeric columns given as buffers in any byte order and standard size read as their values."""

from __future__ import annotations

import ctypes

import pytest
from skeleton_compressor import SkeletonCompressorService

np = pytest.importorskip("numpy")

IDS = ["a", "b", "c", "d", "e"]
TOKENS = [300, 70, 2**40, 5, 0]
SCORES = [0.25, 0.5, 0.75, 1.0, 0.0]
BUDGET = 2**40 + 10


def expected(service: SkeletonCompressorService) -> tuple[list[int], int]:
    result = service.compress_arrays(IDS, TOKENS, SCORES, BUDGET)
    return list(result.indices), result.metadata.compressed_tokens


@pytest.mark.parametrize("tokens_dtype", [">i8", "<i8", ">u8", ">q", "=i8", ">i4", "<u4"])
@pytest.mark.parametrize("scores_dtype", [">f8", "<f8", ">f4", "=f4"])
def test_any_byte_order(
    service: SkeletonCompressorService, tokens_dtype: str, scores_dtype: str
) -> None:
    tokens = TOKENS if tokens_dtype[-1] == "8" else [t % 2**31 for t in TOKENS]
    plain = service.compress_arrays(IDS, tokens, SCORES, BUDGET)
    result = service.compress_arrays(
        IDS, np.array(tokens, dtype=tokens_dtype), np.array(SCORES, dtype=scores_dtype), BUDGET
    )
    assert list(result.indices) == list(plain.indices)
    assert result.metadata == plain.metadata


def test_big_endian_values_are_checked_as_their_values(service: SkeletonCompressorService) -> None:
    with pytest.raises(ValueError, match=r"rows\[1\] \(id 'b'\): token_count must be >= 0, got -7"):
        service.compress_arrays(["a", "b"], np.array([3, -7], dtype=">i8"), [0.5, 0.5], 10)
    with pytest.raises(ValueError, match=r"rows\[0\] \(id 'a'\): relevance_score must be in"):
        service.compress_arrays(["a"], [1], np.array([1.5], dtype=">f8"), 10)


@pytest.mark.parametrize("dtype", ["<i4", ">i4", "<u2", ">i2", "|i1"])
def test_standard_size_formats(service: SkeletonCompressorService, dtype: str) -> None:
    column = np.array([4, 9, 1], dtype=dtype)
    assert memoryview(column).itemsize == column.itemsize
    result = service.compress_arrays(["x", "y", "z"], column, [0.1, 0.2, 0.3], 10)
    assert list(result.indices) == [2, 1]
    assert result.metadata.compressed_tokens == 10


def test_a_flag_column_with_a_byte_order_is_read(service: SkeletonCompressorService) -> None:
    # ctypes exports its bools as "<?", which memoryview's tolist refuses.
    flags = (ctypes.c_bool * 3)(False, True, False)
    assert memoryview(flags).format == "<?"
    result = service.compress_arrays(["a", "b", "c"], [1, 2, 1], [0.5, 0.1, 0.4], 2, required=flags)
    assert list(result.indices) == [1]


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("fragment_ids", "fragment_ids must be a sequence of str, got ndarray"),
        ("groups", "groups must be a sequence of None or str, got ndarray"),
        ("required", "required must be a sequence of bool, got ndarray"),
    ],
)
def test_a_column_of_no_dimensions_is_named(
    service: SkeletonCompressorService, column: str, message: str
) -> None:
    columns: dict[str, object] = {"fragment_ids": ["a"], "token_counts": [1]}
    columns["relevance_scores"] = [0.5]
    columns[column] = np.array("a" if column != "required" else True)
    with pytest.raises(TypeError) as raised:
        service.compress_arrays(skeleton_budget=5, **columns)  # type: ignore[arg-type]
    assert str(raised.value) == message
    with pytest.raises(TypeError) as budgets:
        service.compress_many((), np.array(5))
    assert str(budgets.value) == "skeleton_budgets must be an iterable of int, got ndarray"


@pytest.mark.parametrize("kind", [bytes, bytearray])
def test_bytes_are_not_a_numeric_column(service: SkeletonCompressorService, kind: type) -> None:
    with pytest.raises(TypeError) as raised:
        service.compress_arrays(["a", "b"], kind(b"\x01\x02"), [0.5, 0.5], 5)
    assert str(raised.value) == f"token_counts must hold integers or floats, got {kind.__name__}"
