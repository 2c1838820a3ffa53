"""Every public object pickles and deep-copies, and the copy behaves as the original: a
service sent to a `multiprocessing` pool (spawned, so nothing is inherited) compresses there
as it does here, on both backends."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
from typing import Any

import pytest
from skeleton_compressor import (
    BudgetExceededError,
    CachePricing,
    Child,
    ContextFragment,
    FragmentTypeError,
    FragmentValueError,
    Plan,
    SkeletonCompressorService,
    SkeletonMetadata,
    TokenCounter,
    compress_siblings,
    estimate_cost,
)
from skeleton_compressor._core import Compressor

FRAGMENTS = (
    ContextFragment("a", 40, 0.9, "alpha"),
    ContextFragment("b", 30, 0.8, "beta", group="g"),
    ContextFragment("c", 20, 0.8, "gamma", group="g"),
    ContextFragment("d", 50, 0.3, "delta", variant_of="d"),
    ContextFragment("d#short", 5, 0.2, "d", variant_of="d"),
    ContextFragment("task", 10, 0.5, "the task", required=True),
)


def round_trips(value: Any) -> list[Any]:
    """`value` pickled at every protocol, deep-copied and copied."""
    pickled = [
        pickle.loads(pickle.dumps(value, protocol))
        for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1)
    ]
    return [*pickled, copy.deepcopy(value), copy.copy(value)]


def service_of(backend: str) -> SkeletonCompressorService:
    return SkeletonCompressorService(
        backend=backend,
        strategy="density",
        min_relevance=0.1,
        on_overflow="keep_top",
        order="edges",
    )


def test_a_service_copy_compresses_as_the_original(backend: str) -> None:
    service = service_of(backend)
    expected = service.explain(FRAGMENTS, 80)
    for again in round_trips(service):
        assert type(again) is SkeletonCompressorService
        assert repr(again) == repr(service)
        assert (again.backend, again.strategy, again.policy) == (
            service.backend,
            service.strategy,
            service.policy,
        )
        assert again.explain(FRAGMENTS, 80) == expected
        assert again.compress_many(FRAGMENTS, [0, 60, 500]) == service.compress_many(
            FRAGMENTS, [0, 60, 500]
        )


def test_a_strict_service_copy_raises_as_the_original(backend: str) -> None:
    service = SkeletonCompressorService(backend=backend, on_overflow="strict")
    for again in round_trips(service):
        with pytest.raises(BudgetExceededError):
            again.compress(FRAGMENTS, 5)


def test_the_compiled_compressor_pickles_by_its_options() -> None:
    compressor = Compressor("optimal", 0.25, "raise", "input")
    fragments = FRAGMENTS[:3]
    for again in round_trips(compressor):
        assert type(again) is Compressor
        assert again.__reduce__() == (Compressor, ("optimal", 0.25, "raise", "input", None))
        assert again.compress(fragments, 70) == compressor.compress(fragments, 70)
    limited = Compressor("optimal", 0.25, "raise", "input", 5000)
    for again in round_trips(limited):
        assert again.max_work == 5000


def test_a_service_keeps_its_work_limit_through_a_copy(backend: str) -> None:
    service = SkeletonCompressorService(backend=backend, strategy="optimal", max_work=4321)
    for again in round_trips(service):
        assert (again.max_work, again.backend, again.strategy) == (4321, backend, "optimal")


def test_every_result_and_value_round_trips(backend: str) -> None:
    service = service_of(backend)
    result = service.compress(FRAGMENTS, 80)
    explanation = service.explain(FRAGMENTS, 80)
    indices = service.compress_arrays(["x", "y", "z"], [3, 4, 5], [0.9, 0.5, 0.1], 8)
    siblings = compress_siblings(
        FRAGMENTS, [Child(60), Child(90, {"d": 0.95})], backend=backend, max_value_loss=0.1
    )
    pricing = CachePricing()
    plan = Plan("p", "goal", context=FRAGMENTS).spawn_subplan("c", "sub", 60, compressor=service)
    values: list[Any] = [
        FRAGMENTS[1],
        FRAGMENTS,
        result,
        result.metadata,
        SkeletonMetadata(10, 5, 0.5),
        explanation,
        explanation.decisions[0],
        indices,
        siblings,
        siblings.children[0],
        Child(60, {"a": 0.5}),
        pricing,
        estimate_cost([result.fragments], pricing),
        plan,
        service.policy,
    ]
    for value in values:
        for again in round_trips(value):
            assert type(again) is type(value)
            assert again == value
            assert repr(again) == repr(value)
    for again in round_trips(result.metadata):
        assert again.to_dict() == result.metadata.to_dict()
        assert again.kept_share == result.metadata.kept_share


def test_errors_round_trip_with_their_fields(backend: str) -> None:
    service = SkeletonCompressorService(backend=backend, on_overflow="raise")
    bad: list[tuple[tuple[ContextFragment, ...], int]] = [
        ((ContextFragment("a", 1, 1.5),), 5),
        ((ContextFragment("a", 1, "high"),), 5),  # type: ignore[arg-type]
        ((ContextFragment("a", 10, 0.5),), 5),
    ]
    for fragments, budget in bad:
        with pytest.raises((FragmentValueError, FragmentTypeError, BudgetExceededError)) as caught:
            service.compress(fragments, budget)
        error = caught.value
        for again in round_trips(error):
            assert type(again) is type(error)
            assert str(again) == str(error)
            assert vars(again) == vars(error)


def test_a_token_counter_round_trips() -> None:
    counter = TokenCounter("cl100k_base")
    for again in round_trips(counter):
        assert again.encoding == "cl100k_base"
        assert again.count("hello world") == counter.count("hello world")


def _compress_in_worker(service: SkeletonCompressorService, budget: int) -> tuple[str, Any, Any]:
    result = service.compress(FRAGMENTS, budget)
    return service.backend, result, service.explain(FRAGMENTS, budget).decisions


def test_a_service_works_in_a_spawned_pool(backend: str) -> None:
    service = service_of(backend)
    budgets = [0, 45, 80, 1000]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        answers = pool.starmap(_compress_in_worker, [(service, budget) for budget in budgets])
    for budget, (used, result, decisions) in zip(budgets, answers):
        assert used == backend
        # The fragments came back as copies: equal, not the objects passed in.
        assert result == service.compress(FRAGMENTS, budget)
        assert decisions == service.explain(FRAGMENTS, budget).decisions


def _fails_in_worker(service: SkeletonCompressorService) -> None:
    service.compress((ContextFragment("a", 1, 2.0),), 5)


def test_an_error_in_a_pool_comes_back_whole(backend: str) -> None:
    service = service_of(backend)
    spawned = multiprocessing.get_context("spawn")
    with spawned.Pool(1) as pool, pytest.raises(FragmentValueError) as caught:
        pool.apply(_fails_in_worker, (service,))
    assert caught.value.kind == "relevance_range"
    assert caught.value.index == 0
