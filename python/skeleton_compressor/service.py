"""SkeletonCompressorService and the module-level shortcuts over it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Any

from ._interface import STRATEGIES
from ._values import plain_str
from .backend import ENVIRONMENT_VARIABLE, load_backend
from .policy import Policy, checked_policy
from .types import (
    ContextFragment,
    FragmentDecision,
    SkeletonExplanation,
    SkeletonIndices,
    SkeletonMetadata,
    SkeletonResult,
)
from .validation import checked_budget, checked_budgets, checked_columns, checked_fragments

_new_tuple = tuple.__new__

__all__ = [
    "SkeletonCompressorService",
    "compress",
    "compress_arrays",
    "explain",
    "validate_fragments",
]


def _checked_strategy(strategy: object) -> str:
    """The strategy's plain str (a subclass's own `__eq__` cannot pass for one)."""
    text = plain_str(strategy)
    if text not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    return text


class SkeletonCompressorService:
    """Compresses parent context for a child plan; satisfies `SkeletonCompressor`.

    `backend` is "auto", "rust" or "python"; `.backend` tells which one is in use.
    `strategy` is "greedy" (walk the ranking, skip what does not fit, go on), "prefix" (stop
    at the first fragment that does not fit), "density" (walk by relevance per token, or keep
    the single best unit if it is worth more: at least half the optimum) or "optimal" (the
    most total relevance that fits, exactly). Every result's metadata has `value_kept` and
    `value_bound`, an upper bound on what any selection within the budget keeps.
    `min_relevance` keeps units below it out unless required; `on_overflow` ("keep_top",
    "strict", "raise") says what happens when the budget cannot be met; `order` ("ranking",
    "input", "edges") is the order of the kept fragments.
    """

    __slots__ = ("_backend", "_compressor", "_policy")

    def __init__(
        self,
        *,
        backend: str = "auto",
        strategy: str = "greedy",
        min_relevance: float = 0.0,
        on_overflow: str = "keep_top",
        order: str = "ranking",
    ) -> None:
        strategy = _checked_strategy(strategy)
        self._policy = checked_policy(min_relevance, on_overflow, order)
        if not isinstance(backend, str):
            raise ValueError(f"backend must be one of auto, rust, python, got {backend!r}")
        self._backend, compressor_class = load_backend(backend)
        self._compressor = compressor_class(strategy, *self._policy)

    @property
    def backend(self) -> str:
        return self._backend

    @property
    def strategy(self) -> str:
        return self._compressor.strategy

    @property
    def policy(self) -> Policy:
        """`min_relevance`, `on_overflow` and `order`."""
        return self._policy

    def __repr__(self) -> str:
        options = "".join(
            f", {name}={value!r}"
            for name, value, default in zip(self._policy._fields, self._policy, Policy())
            if value != default
        )
        return (
            f"SkeletonCompressorService(backend={self._backend!r}, strategy={self.strategy!r}"
            f"{options})"
        )

    def validate(self, fragments: tuple[ContextFragment, ...]) -> None:
        """Raises the first problem with `fragments`, as `compress` would."""
        self._compressor.validate(checked_fragments(fragments))

    def compress(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> SkeletonResult:
        fragments = checked_fragments(fragments)
        budget = checked_budget(skeleton_budget)
        kept, original, compressed, value, bound = self._compressor.compress(fragments, budget)
        metadata = SkeletonMetadata.of(
            original, compressed, budget, len(fragments), len(kept), value, bound
        )
        return SkeletonResult(kept, metadata)

    def explain(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> SkeletonExplanation:
        """`compress`, and why each fragment was kept or dropped: raises what `compress`
        raises, and otherwise returns its result with one decision per fragment."""
        fragments = checked_fragments(fragments)
        budget = checked_budget(skeleton_budget)
        kept, original, compressed, value, bound, decisions = self._compressor.explain(
            fragments, budget
        )
        metadata = SkeletonMetadata.of(
            original, compressed, budget, len(fragments), len(kept), value, bound
        )
        # A backend gives the decisions as columns; each is made into the named tuple without
        # a Python-level call per fragment.
        rows = zip(fragments, *decisions)
        made = tuple(map(_new_tuple, repeat(FragmentDecision, len(fragments)), rows))
        return SkeletonExplanation(SkeletonResult(kept, metadata), made)

    def compress_many(
        self, fragments: tuple[ContextFragment, ...], skeleton_budgets: Iterable[int]
    ) -> tuple[SkeletonResult, ...]:
        """One result per budget, each equal to `compress(fragments, budget)`; the fragments
        are checked and ranked once."""
        fragments = checked_fragments(fragments)
        budgets = checked_budgets(skeleton_budgets)
        original, packed = self._compressor.compress_many(fragments, budgets)
        total = len(fragments)
        return tuple(
            SkeletonResult(
                kept,
                SkeletonMetadata.of(original, compressed, budget, total, len(kept), value, bound),
            )
            for budget, (kept, compressed, value, bound) in zip(budgets, packed)
        )

    def compress_arrays(
        self,
        fragment_ids: Sequence[str],
        token_counts: Any,
        relevance_scores: Any,
        skeleton_budget: int,
        *,
        required: Any = None,
        groups: Any = None,
    ) -> SkeletonIndices:
        """`compress` on columns: row i is (fragment_ids[i], token_counts[i],
        relevance_scores[i]), with `required[i]` and `groups[i]` when those columns are given.
        Returns the kept row numbers in output order as an int64 `array.array`
        (numpy.frombuffer wraps it without a copy), and the metadata."""
        columns = checked_columns(fragment_ids, token_counts, relevance_scores, required, groups)
        budget = checked_budget(skeleton_budget)
        kept, original, compressed, rows, value, bound = self._compressor.compress_arrays(
            *columns, budget
        )
        metadata = SkeletonMetadata.of(original, compressed, budget, rows, len(kept), value, bound)
        return SkeletonIndices(kept, metadata)


_shared: dict[tuple[Any, ...], SkeletonCompressorService] = {}


def _service(
    backend: str, strategy: str, policy: tuple[object, object, object] = Policy()
) -> SkeletonCompressorService:
    # Keyed on the checked, plain values: a subclass's own `__eq__` cannot pick another
    # service, and invalid options raise here as the constructor would raise them.
    strategy = _checked_strategy(strategy)
    checked = checked_policy(*policy)
    key = (backend, strategy, checked, os.environ.get(ENVIRONMENT_VARIABLE, ""))
    try:
        service = _shared.get(key)
    except TypeError:  # an unhashable backend or strategy: refused by the constructor
        service = None
    if service is None:
        min_relevance, on_overflow, order = checked
        service = SkeletonCompressorService(
            backend=backend,
            strategy=strategy,
            min_relevance=min_relevance,
            on_overflow=on_overflow,
            order=order,
        )
        if len(_shared) < 64:
            _shared[key] = service
    return service


def compress(
    fragments: tuple[ContextFragment, ...],
    skeleton_budget: int,
    *,
    strategy: str = "greedy",
    backend: str = "auto",
    min_relevance: float = 0.0,
    on_overflow: str = "keep_top",
    order: str = "ranking",
) -> SkeletonResult:
    service = _service(backend, strategy, (min_relevance, on_overflow, order))
    return service.compress(fragments, skeleton_budget)


def explain(
    fragments: tuple[ContextFragment, ...],
    skeleton_budget: int,
    *,
    strategy: str = "greedy",
    backend: str = "auto",
    min_relevance: float = 0.0,
    on_overflow: str = "keep_top",
    order: str = "ranking",
) -> SkeletonExplanation:
    service = _service(backend, strategy, (min_relevance, on_overflow, order))
    return service.explain(fragments, skeleton_budget)


def compress_arrays(
    fragment_ids: Sequence[str],
    token_counts: Any,
    relevance_scores: Any,
    skeleton_budget: int,
    *,
    required: Any = None,
    groups: Any = None,
    strategy: str = "greedy",
    backend: str = "auto",
    min_relevance: float = 0.0,
    on_overflow: str = "keep_top",
    order: str = "ranking",
) -> SkeletonIndices:
    service = _service(backend, strategy, (min_relevance, on_overflow, order))
    return service.compress_arrays(
        fragment_ids,
        token_counts,
        relevance_scores,
        skeleton_budget,
        required=required,
        groups=groups,
    )


def validate_fragments(fragments: tuple[ContextFragment, ...], *, backend: str = "auto") -> None:
    """Runs the fragment checks and raises on the first failure."""
    _service(backend, "greedy").validate(fragments)
