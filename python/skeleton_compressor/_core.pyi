# The compiled backend. The Python layer checks arguments first: `fragments` is a plain
# tuple, budgets are ints >= 0, and numeric columns are lists, tuples or 1-D native
# memoryviews.
from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, final

from _typeshed import SupportsWrite

from ._backends.protocol import CompressedRecords, Decisions, PackedSiblings
from .types import (
    ContextFragment,
    EncodingName,
    OnOverflowName,
    OrderName,
    SkeletonResult,
    StrategyName,
)

__all__ = [
    "COUNT_THRESHOLDS",
    "ENCODINGS",
    "ERROR_KINDS",
    "RECORD_PROBLEMS",
    "Compressor",
    "KeptRecords",
    "TokenCounter",
    "__version__",
    "_encoding_tokens",
    "_loaded_encodings",
    "backend_variable",
]

__version__: str
ERROR_KINDS: tuple[str, ...]
RECORD_PROBLEMS: tuple[str, ...]
ENCODINGS: tuple[str, ...]
# Bytes of text from which counting releases the GIL, and from which it uses several threads.
COUNT_THRESHOLDS: tuple[int, int]

@final
class Compressor:
    def __new__(
        cls,
        strategy: StrategyName,
        min_relevance: float = 0.0,
        on_overflow: OnOverflowName = "keep_top",
        order: OrderName = "ranking",
        max_work: int | None = None,
    ) -> Compressor: ...
    @property
    def strategy(self) -> StrategyName: ...
    @property
    def max_work(self) -> int | None: ...
    def __reduce__(
        self,
    ) -> tuple[
        type[Compressor], tuple[StrategyName, float, OnOverflowName, OrderName, int | None]
    ]: ...
    def validate(self, fragments: tuple[ContextFragment, ...]) -> None: ...
    def compress(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int, int, int, float, bool]: ...
    def compress_result(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> SkeletonResult: ...
    def compress_many(
        self, fragments: tuple[ContextFragment, ...], skeleton_budgets: list[int]
    ) -> tuple[int, list[tuple[tuple[ContextFragment, ...], int, int, int, float, bool]]]: ...
    def explain(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int, int, int, float, Decisions, bool]: ...
    def compress_turn(
        self,
        fragments: tuple[ContextFragment, ...],
        skeleton_budget: int,
        previous: tuple[ContextFragment, ...],
        max_value_loss: float,
        headroom: float,
        explain: bool,
    ) -> tuple[
        tuple[ContextFragment, ...], int, int, int, int, float, int, Decisions | None, bool
    ]: ...
    def compress_siblings(
        self,
        fragments: tuple[ContextFragment, ...],
        relevances: tuple[Mapping[str, float] | None, ...],
        skeleton_budgets: tuple[int, ...],
        max_value_loss: float,
        write: float,
        read: float,
        min_prefix: int,
    ) -> PackedSiblings | None: ...
    def compress_arrays(
        self,
        fragment_ids: Sequence[Any],
        token_counts: Sequence[Any] | memoryview,
        relevance_scores: Sequence[Any] | memoryview,
        required: Sequence[Any] | None,
        groups: Sequence[Any] | None,
        skeleton_budget: int,
        variants: Sequence[Any] | None = None,
        previous: list[int] | None = None,
        max_value_loss: float = 0.0,
        headroom: float = 0.0,
    ) -> tuple[array[int], int, int, int, int, int, float, int, bool]: ...
    def compress_records(
        self,
        data: bytes,
        skeleton_budget: int,
        explain: bool = False,
        encoding: str | None = None,
    ) -> CompressedRecords: ...
    def compress_record_file(
        self,
        path: str,
        skeleton_budget: int,
        encoding: str | None = None,
    ) -> CompressedRecords | bytes: ...

@final
class KeptRecords:
    def __len__(self) -> int: ...
    def write_to(self, out: SupportsWrite[bytes]) -> None: ...

@final
class TokenCounter:
    def __new__(cls, encoding: EncodingName = "o200k_base") -> TokenCounter: ...
    @property
    def encoding(self) -> EncodingName: ...
    def count(self, text: str) -> int: ...
    def count_many(self, texts: Iterable[str]) -> list[int]: ...
    def __reduce__(self) -> tuple[type[TokenCounter], tuple[EncodingName]]: ...

# SKELETON_COMPRESSOR_BACKEND from the process environment: "" when unset, None when not
# UTF-8.
def backend_variable() -> str | None: ...

# For tests: the bytes of every token by rank, and the encodings whose tables are loaded.
def _encoding_tokens(encoding: str) -> list[bytes]: ...
def _loaded_encodings() -> list[str]: ...
