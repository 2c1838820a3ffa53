"""The interface a planner depends on."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .types import ContextFragment, SkeletonResult

__all__ = ["SkeletonCompressor"]


@runtime_checkable
class SkeletonCompressor(Protocol):
    """What a planner needs of a compressor: one `compress` method.

    Runtime-checkable: `isinstance(obj, SkeletonCompressor)` is true for any object with a
    `compress` method. `SkeletonCompressorService` implements it; `Plan.spawn_subplan`
    accepts any implementation.
    """

    def compress(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> SkeletonResult:
        """The part of `fragments` a child inherits within `skeleton_budget` tokens, as a
        `SkeletonResult`. Raises TypeError or ValueError for bad input (the library's
        implementation raises `FragmentError` subclasses for bad fragments)."""
        ...
