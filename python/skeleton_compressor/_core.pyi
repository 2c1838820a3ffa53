# The compiled backend. The Python layer checks arguments first: `fragments` is a plain
# tuple, budgets are ints >= 0, and numeric columns are lists, tuples or 1-D memoryviews.
from array import array
from collections.abc import Sequence

from .types import ContextFragment

def validate(fragments: tuple[ContextFragment, ...]) -> None: ...
def compress(
    fragments: tuple[ContextFragment, ...], skeleton_budget: int, prefix: bool
) -> tuple[tuple[ContextFragment, ...], int, int]: ...
def compress_many(
    fragments: tuple[ContextFragment, ...], skeleton_budgets: list[int], prefix: bool
) -> tuple[int, list[tuple[tuple[ContextFragment, ...], int]]]: ...
def compress_arrays(
    fragment_ids: Sequence[object],
    token_counts: Sequence[object] | memoryview,
    relevance_scores: Sequence[object] | memoryview,
    skeleton_budget: int,
    prefix: bool,
) -> tuple[array[int], int, int]: ...
