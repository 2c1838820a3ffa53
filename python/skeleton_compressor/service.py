"""SkeletonCompressorService and the module-level shortcuts over it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from .backend import ENVIRONMENT_VARIABLE, load_backend
from .fallback import STRATEGIES
from .types import ContextFragment, SkeletonIndices, SkeletonMetadata, SkeletonResult
from .validation import checked_budget, checked_budgets, checked_columns, checked_fragments

__all__ = [
    "STRATEGIES",
    "SkeletonCompressorService",
    "compress",
    "compress_arrays",
    "validate_fragments",
]


class SkeletonCompressorService:
    """Compresses parent context for a child plan; satisfies `SkeletonCompressor`.

    `backend` is "auto", "rust" or "python"; `.backend` tells which one is in use.
    `strategy` is "greedy" (skip what does not fit, go on) or "prefix" (stop at the first
    fragment that does not fit).
    """

    __slots__ = ("_backend", "_compressor")

    def __init__(self, *, backend: str = "auto", strategy: str = "greedy") -> None:
        if not isinstance(strategy, str) or strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        if not isinstance(backend, str):
            raise ValueError(f"backend must be one of auto, rust, python, got {backend!r}")
        self._backend, compressor_class = load_backend(backend)
        self._compressor = compressor_class(strategy)

    @property
    def backend(self) -> str:
        return self._backend

    @property
    def strategy(self) -> str:
        return self._compressor.strategy

    def __repr__(self) -> str:
        return f"SkeletonCompressorService(backend={self._backend!r}, strategy={self.strategy!r})"

    def validate(self, fragments: tuple[ContextFragment, ...]) -> None:
        """Raises the first problem with `fragments`, as `compress` would."""
        self._compressor.validate(checked_fragments(fragments))

    def compress(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> SkeletonResult:
        fragments = checked_fragments(fragments)
        budget = checked_budget(skeleton_budget)
        kept, original, compressed = self._compressor.compress(fragments, budget)
        metadata = SkeletonMetadata.of(original, compressed, budget, len(fragments), len(kept))
        return SkeletonResult(kept, metadata)

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
                kept, SkeletonMetadata.of(original, compressed, budget, total, len(kept))
            )
            for budget, (kept, compressed) in zip(budgets, packed)
        )

    def compress_arrays(
        self,
        fragment_ids: Sequence[str],
        token_counts: Any,
        relevance_scores: Any,
        skeleton_budget: int,
    ) -> SkeletonIndices:
        """`compress` on columns: row i is (fragment_ids[i], token_counts[i],
        relevance_scores[i]). Returns the kept row numbers in ranking order as an int64
        `array.array` (numpy.frombuffer wraps it without a copy), and the metadata."""
        ids, tokens, scores = checked_columns(fragment_ids, token_counts, relevance_scores)
        budget = checked_budget(skeleton_budget)
        kept, original, compressed, rows = self._compressor.compress_arrays(
            ids, tokens, scores, budget
        )
        metadata = SkeletonMetadata.of(original, compressed, budget, rows, len(kept))
        return SkeletonIndices(kept, metadata)


_shared: dict[tuple[str, str, str], SkeletonCompressorService] = {}


def _service(backend: str, strategy: str) -> SkeletonCompressorService:
    key = (backend, strategy, os.environ.get(ENVIRONMENT_VARIABLE, ""))
    service = _shared.get(key)
    if service is None:
        service = _shared[key] = SkeletonCompressorService(backend=backend, strategy=strategy)
    return service


def compress(
    fragments: tuple[ContextFragment, ...],
    skeleton_budget: int,
    *,
    strategy: str = "greedy",
    backend: str = "auto",
) -> SkeletonResult:
    return _service(backend, strategy).compress(fragments, skeleton_budget)


def compress_arrays(
    fragment_ids: Sequence[str],
    token_counts: Any,
    relevance_scores: Any,
    skeleton_budget: int,
    *,
    strategy: str = "greedy",
    backend: str = "auto",
) -> SkeletonIndices:
    return _service(backend, strategy).compress_arrays(
        fragment_ids, token_counts, relevance_scores, skeleton_budget
    )


def validate_fragments(fragments: tuple[ContextFragment, ...], *, backend: str = "auto") -> None:
    """Runs the fragment checks and raises on the first failure."""
    _service(backend, "greedy").validate(fragments)
