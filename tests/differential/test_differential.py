"""Both backends agree with each other and with a small reference, on generated inputs.

Ids come from all of Unicode, lone surrogates included, and from a tiny alphabet so that
duplicates happen; relevance comes from a few repeated levels so that ties are common.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skeleton_compressor import ContextFragment, SkeletonCompressorService

try:
    import numpy as np
except ImportError:  # the generated values simply leave numpy scalars out
    np = None

EXAMPLES = int(os.environ.get("DIFFERENTIAL_EXAMPLES", "400"))
BACKENDS = {
    (backend, strategy): SkeletonCompressorService(backend=backend, strategy=strategy)
    for backend in ("rust", "python")
    for strategy in ("greedy", "prefix")
}

any_text = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])), min_size=1)
few_letters = st.text(
    st.sampled_from(["a", "B", "é", "\ud800", "\udfff", "\U0001f600"]), min_size=1, max_size=3
)
ids = st.one_of(any_text, few_letters)

levels: list[Any] = [0.0, -0.0, 0, 1, 0.5, 1.0, 0.25, 5e-324, 0.9999999999999999]
if np is not None:
    levels += [np.float32(0.5), np.float64(0.25), np.float32(0.1), np.float64(0.0)]
relevances = st.one_of(st.sampled_from(levels), st.floats(0.0, 1.0))
token_counts = st.one_of(st.sampled_from([0, 1, 2, 100, 2**63 - 1]), st.integers(0, 1_000))

bad_ids: list[Any] = ["", b"id", 7, None]
bad_tokens: list[Any] = [-1, 2**63, 2**70, -(2**70), 1.0, True, "3", None]
bad_relevances: list[Any] = [1.5, -0.1, float("nan"), float("inf"), 2, -1, 2**70, True, "0.5", None]


@st.composite
def fragment_sets(draw: st.DrawFn, valid: bool) -> tuple[ContextFragment, ...]:
    rows = draw(st.lists(st.tuples(ids, token_counts, relevances), max_size=30))
    fragments = [ContextFragment(*row) for row in rows]
    if valid:
        unique = {f.fragment_id: f for f in fragments}
        return tuple(unique.values())
    if fragments and draw(st.booleans()):
        position = draw(st.integers(0, len(fragments) - 1))
        field = draw(st.sampled_from(["fragment_id", "token_count", "relevance_score", "item"]))
        if field == "item":
            fragments[position] = draw(st.sampled_from([None, "fragment", (1, 2)]))  # type: ignore[call-overload]
        else:
            choices = {
                "fragment_id": bad_ids,
                "token_count": bad_tokens,
                "relevance_score": bad_relevances,
            }
            object.__setattr__(fragments[position], field, draw(st.sampled_from(choices[field])))
    return tuple(fragments)


def budgets_for(fragments: tuple[Any, ...]) -> st.SearchStrategy[int]:
    counts = [getattr(f, "token_count", 0) for f in fragments]
    total = sum(c for c in counts if type(c) is int and c >= 0)
    return st.one_of(st.sampled_from([0, 1, total, 10**30]), st.integers(0, total + 5))


def reference(
    fragments: tuple[ContextFragment, ...], budget: int, strategy: str
) -> tuple[list[int], int]:
    """Positions of the kept fragments and their token sum, straight from the rules."""
    order = sorted(
        range(len(fragments)),
        key=lambda i: (-float(fragments[i].relevance_score), fragments[i].fragment_id),
    )
    kept: list[int] = []
    used = 0
    if budget > 0:
        for i in order:
            if used + fragments[i].token_count <= budget:
                kept.append(i)
                used += fragments[i].token_count
            elif strategy == "prefix":
                break
        if not kept and order:
            kept, used = [order[0]], fragments[order[0]].token_count
    return kept, used


def outcome(service: SkeletonCompressorService, fragments: Any, budget: Any) -> Any:
    try:
        return service.compress(fragments, budget)
    except (TypeError, ValueError) as error:
        return type(error), str(error)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), strategy=st.sampled_from(["greedy", "prefix"]))
def test_valid_inputs_agree_with_reference(data: st.DataObject, strategy: str) -> None:
    fragments = data.draw(fragment_sets(valid=True))
    budget = data.draw(budgets_for(fragments))
    expected_positions, expected_tokens = reference(fragments, budget, strategy)
    for backend in ("rust", "python"):
        result = BACKENDS[backend, strategy].compress(fragments, budget)
        assert [id(f) for f in result.fragments] == [id(fragments[i]) for i in expected_positions]
        metadata = result.metadata
        assert metadata.compressed_tokens == expected_tokens
        assert metadata.original_tokens == sum(f.token_count for f in fragments)
        assert (metadata.skeleton_budget, metadata.fragments_total) == (budget, len(fragments))
        assert metadata.fragments_kept == len(expected_positions)
    rust, python = (BACKENDS[b, strategy].compress(fragments, budget) for b in ("rust", "python"))
    assert rust.metadata == python.metadata


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), strategy=st.sampled_from(["greedy", "prefix"]))
def test_any_input_gets_the_same_answer_or_error(data: st.DataObject, strategy: str) -> None:
    fragments = data.draw(fragment_sets(valid=False))
    budget = data.draw(
        st.one_of(budgets_for(fragments), st.sampled_from([-1, 2.0, True, None, "5"]))
    )
    rust = outcome(BACKENDS["rust", strategy], fragments, budget)
    python = outcome(BACKENDS["python", strategy], fragments, budget)
    if isinstance(rust, tuple):
        assert rust == python
    else:
        assert not isinstance(python, tuple), python
        assert [id(f) for f in rust.fragments] == [id(f) for f in python.fragments]
        assert rust.metadata == python.metadata


@settings(max_examples=EXAMPLES // 4, deadline=None)
@given(data=st.data())
def test_compress_many_and_arrays_agree(data: st.DataObject) -> None:
    fragments = data.draw(fragment_sets(valid=True))
    budgets = data.draw(st.lists(budgets_for(fragments), max_size=6))
    for backend in ("rust", "python"):
        service = BACKENDS[backend, "greedy"]
        assert service.compress_many(fragments, budgets) == tuple(
            service.compress(fragments, b) for b in budgets
        )
    columns = (
        [f.fragment_id for f in fragments],
        [f.token_count for f in fragments],
        [f.relevance_score for f in fragments],
    )
    for budget in budgets:
        rust = BACKENDS["rust", "greedy"].compress_arrays(*columns, budget)
        python = BACKENDS["python", "greedy"].compress_arrays(*columns, budget)
        assert rust == python
        assert [fragments[i] for i in rust.indices] == list(
            BACKENDS["rust", "greedy"].compress(fragments, budget).fragments
        )


@pytest.mark.skipif(np is None, reason="numpy is not installed")
@settings(max_examples=EXAMPLES // 4, deadline=None)
@given(data=st.data())
def test_numpy_columns_agree(data: st.DataObject) -> None:
    assert np is not None
    size = data.draw(st.integers(0, 40))
    tokens = np.array(
        data.draw(st.lists(st.integers(-3, 600), min_size=size, max_size=size)), dtype=np.int64
    ).astype(data.draw(st.sampled_from([np.int64, np.int32, np.uint16, np.uint64, np.float64])))
    scores = np.array(
        data.draw(
            st.lists(
                st.sampled_from([0.0, 0.5, 1.0, 0.25, 1.5, float("nan")]),
                min_size=size,
                max_size=size,
            )
        ),
        dtype=data.draw(st.sampled_from([np.float64, np.float32])),
    )
    names = [f"id{i % max(1, data.draw(st.integers(1, size + 1)))}" for i in range(size)]
    budget = data.draw(st.integers(0, 2_000))
    answers = []
    for backend in ("rust", "python"):
        try:
            answers.append(
                BACKENDS[backend, "greedy"].compress_arrays(names, tokens, scores, budget)
            )
        except (TypeError, ValueError) as error:
            answers.append((type(error), str(error)))
    assert answers[0] == answers[1]
