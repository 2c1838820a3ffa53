"""compress_arrays on both backends, beside numpy.lexsort on the same columns (sort only)."""

from __future__ import annotations

import functools
from array import array
from typing import Any

import pytest
from conftest import budget_of, fragments_of, rounds_for
from skeleton_compressor import compress_arrays

np = pytest.importorskip("numpy")


@functools.cache
def columns_of(size: int) -> tuple[list[str], Any, Any, Any]:
    fragments = fragments_of(size)
    ids = [f.fragment_id for f in fragments]
    tokens = np.array([f.token_count for f in fragments], dtype=np.int64)
    scores = np.array([f.relevance_score for f in fragments], dtype=np.float64)
    return ids, tokens, scores, np.array(ids)


@pytest.mark.parametrize("implementation", ["rust", "python", "numpy-lexsort"])
def test_compress_arrays(benchmark, size: int, implementation: str) -> None:  # type: ignore[no-untyped-def]
    ids, tokens, scores, id_array = columns_of(size)
    budget = budget_of(size)
    benchmark.group = f"compress_arrays {size:>9,} rows"
    if implementation == "numpy-lexsort":
        # The columns already converted: lexsort is charged for sorting alone.
        call = lambda: np.lexsort((id_array, -scores))  # noqa: E731
    else:
        call = lambda: compress_arrays(ids, tokens, scores, budget, backend=implementation)  # noqa: E731
    benchmark.pedantic(call, rounds=rounds_for(size), warmup_rounds=1)


def test_results_agree_with_lexsort_order() -> None:
    ids, tokens, scores, id_array = columns_of(1_000)
    everything = int(tokens.sum())
    kept = compress_arrays(ids, tokens, scores, everything, backend="rust").indices
    assert isinstance(kept, array)
    assert np.frombuffer(kept, dtype=np.int64).tolist() == np.lexsort((id_array, -scores)).tolist()
