"""The interface a planner depends on."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .types import ContextFragment, SkeletonResult

__all__ = ["SkeletonCompressor"]


@runtime_checkable
class SkeletonCompressor(Protocol):
    def compress(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> SkeletonResult: ...
