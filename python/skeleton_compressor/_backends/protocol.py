"""What both backends offer, and the names they share: the `BackendCompressor` protocol, the
strategy names, and the types of what a backend returns.

Both backends offer one class, `Compressor(strategy, min_relevance, on_overflow, order)`, that
satisfies `BackendCompressor`; mypy checks the compiled one through its stub, `_core.pyi`.
`loader.make_compressor` checks the options before either is made: the Python one takes them
as checked, the compiled one checks them again, so that the core is safe on its own.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..types import ContextFragment

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    from ..types import OnOverflowName, OrderName, SkeletonResult, StrategyName

__all__ = [
    "STRATEGIES",
    "BackendCompressor",
    "CompressedRecords",
    "CompressorFactory",
    "Decisions",
    "KeptArray",
    "PackedSiblings",
]

STRATEGIES = ("greedy", "prefix", "density", "optimal")

# `CacheCost`'s fields: billed, uncached, cached and written tokens.
CostFields = tuple[float, int, int, int]
# Siblings packed in one call: the shared fragments, one result per child, the cost, the
# independent cost, and the text the prefix key digests.
PackedSiblings = tuple[
    tuple[ContextFragment, ...], tuple["SkeletonResult", ...], CostFields, CostFields, bytes
]

# What `explain` decided, as columns with one item per fragment: kept, reason, rank and
# budget_left.
Decisions = tuple[list[bool], list[str], list[int], list["int | None"]]


class KeptArray(Protocol):
    """The kept records, written as a JSON array of their bytes in the input."""

    def write_to(self, out: SupportsWrite[bytes]) -> None: ...


class CompressedRecords(NamedTuple):
    """What `compress_records` and `compress_record_file` return: the kept records, the
    tokens of all records and of the kept ones, how many records were read and kept, the
    input's form (`array`, `lines` or `wrapped`), when explaining each record's id with the
    decisions, the value kept and its bound, in units of 2**-32, the relevance kept, summed
    exactly, and whether the selection is exactly the strategy's (False when `optimal`
    reached its work limit)."""

    kept: KeptArray
    original_tokens: int
    compressed_tokens: int
    records: int
    records_kept: int
    form: str
    decisions: tuple[list[str], Decisions] | None
    value_kept: int
    value_bound: int
    relevance_kept: float
    exact: bool


class BackendCompressor(Protocol):
    """What a backend does once the Python layer has checked the arguments' shapes:
    `fragments` is a plain tuple, budgets are plain ints >= 0, and numeric columns are lists,
    tuples or one-dimensional native memoryviews. Each result carries, after the token counts
    (and the row count of `compress_arrays`), the value kept and its bound as ints in units of
    2**-32, then the relevance kept: the kept fragments' relevances as read, summed exactly
    and rounded once (what `math.fsum` gives); each ends with whether the selection is exact
    (False only where `optimal` reached `max_work`). The record methods take the command line's
    input and raise `RecordsError` for a bad one."""

    @property
    def strategy(self) -> str: ...

    @property
    def max_work(self) -> int | None: ...

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
    ) -> tuple[tuple[ContextFragment, ...], int, int, int, int, float, int, Decisions | None, bool]:
        """`compress` (or `explain`) reusing what `previous` sent first (docs/turns.md):
        the kept fragments, the original and compressed tokens, the value kept and its
        bound, the relevance kept, the reused tokens, the decisions when explaining, and
        whether exact. `previous` holds only `ContextFragment`s; `max_value_loss` and
        `headroom` are floats in [0, 1)."""
        ...

    def compress_siblings(
        self,
        fragments: tuple[ContextFragment, ...],
        relevances: tuple[Mapping[str, float] | None, ...],
        skeleton_budgets: tuple[int, ...],
        max_value_loss: float,
        write: float,
        read: float,
        min_prefix: int,
    ) -> PackedSiblings | None:
        """Children of the parent `fragments` packed together (`siblings.py`), each with its
        relevance mapping (or None) and checked budget, priced at `write`, `read` and
        `min_prefix` (at most 2**128 - 1): the shared fragments, one `SkeletonResult` per
        child, the fields of the cost and of the independent cost, and the text the prefix
        key digests. None where the general path in `siblings.py` decides (for the Python
        backend, always)."""
        ...

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
    ) -> tuple[array[int], int, int, int, int, int, float, int, bool]:
        """The kept rows, the original and compressed tokens, the row count, the value kept
        and its bound, the relevance kept, the reused tokens, and whether exact. `previous`:
        checked row numbers of this call, in an earlier output's order."""
        ...

    def compress_records(
        self,
        data: bytes,
        skeleton_budget: int,
        explain: bool = False,
        encoding: str | None = None,
    ) -> CompressedRecords: ...

    def compress_record_file(
        self, path: str, skeleton_budget: int, encoding: str | None = None
    ) -> CompressedRecords | bytes:
        """The records of the file at `path`, opened once (a pipe gives its bytes once), as
        `compress_records` compresses them; or the file's bytes, read from that one handle,
        for `compress_records` to compress or to word their problem. Raises `OSError` as
        `open` does."""
        ...


CompressorFactory = Callable[
    ["StrategyName", float, "OnOverflowName", "OrderName", "int | None"], BackendCompressor
]
