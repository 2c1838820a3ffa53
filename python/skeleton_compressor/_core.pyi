# The compiled backend. The Python layer checks arguments first: `fragments` is a plain
# tuple, budgets are ints >= 0, and numeric columns are lists, tuples or 1-D native
# memoryviews.
from array import array
from collections.abc import Sequence
from typing import Any, final

from .types import ContextFragment

_Decisions = tuple[list[bool], list[str], list[int], list[int | None]]

__all__ = [
    "ERROR_KINDS",
    "SCRATCH_LIMITS",
    "Compressor",
    "__version__",
    "release_scratch",
    "retained_scratch_bytes",
]

__version__: str
ERROR_KINDS: tuple[str, ...]
SCRATCH_LIMITS: tuple[int, int]

@final
class Compressor:
    def __new__(
        cls,
        strategy: str,
        min_relevance: float = 0.0,
        on_overflow: str = "keep_top",
        order: str = "ranking",
    ) -> Compressor: ...
    @property
    def strategy(self) -> str: ...
    def validate(self, fragments: tuple[ContextFragment, ...]) -> None: ...
    def compress(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int]: ...
    def compress_many(
        self, fragments: tuple[ContextFragment, ...], skeleton_budgets: list[int]
    ) -> tuple[int, list[tuple[tuple[ContextFragment, ...], int]]]: ...
    def explain(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int, _Decisions]: ...
    def compress_arrays(
        self,
        fragment_ids: Sequence[Any],
        token_counts: Sequence[Any] | memoryview,
        relevance_scores: Sequence[Any] | memoryview,
        required: Sequence[Any] | None,
        groups: Sequence[Any] | None,
        skeleton_budget: int,
    ) -> tuple[array[int], int, int, int]: ...

def retained_scratch_bytes() -> int: ...
def release_scratch() -> None: ...
