"""The Python backend's `Compressor`: a strategy and policy, and the calls `BackendCompressor`
names.

Used where the extension is not built, and as the reference the benchmarks measure against.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from math import fsum

from ...policy import Policy
from ...pricing import CachePricing
from ...types import (
    ContextFragment,
    OnOverflowName,
    OrderName,
    SkeletonMetadata,
    SkeletonResult,
    StrategyName,
)
from ..protocol import CompressedRecords, Decisions, PackedSiblings
from .columns import Columns
from .compress import Selection, selections
from .read import fragment_columns, row_columns
from .records import compress_records
from .siblings import packed_siblings
from .turns import Turn, matched_rows, turn
from .units import Decision

__all__ = ["Compressor"]


class Compressor:
    """One strategy and policy, chosen once and checked before (`make_compressor`); every call
    checks and compresses its input whole."""

    __slots__ = ("_max_work", "_plain", "_policy", "_strategy")

    def __init__(
        self,
        strategy: StrategyName,
        min_relevance: float = 0.0,
        on_overflow: OnOverflowName = "keep_top",
        order: OrderName = "ranking",
        max_work: int | None = None,
    ) -> None:
        self._strategy = strategy
        self._max_work = max_work
        self._policy = Policy(min_relevance, on_overflow, order)
        # The walks in rank order under the default policy select on the columns directly.
        self._plain = self._policy == Policy() and strategy in ("greedy", "prefix")

    @property
    def strategy(self) -> StrategyName:
        return self._strategy

    @property
    def policy(self) -> Policy:
        return self._policy

    @property
    def max_work(self) -> int | None:
        return self._max_work

    def validate(self, fragments: tuple[ContextFragment, ...]) -> None:
        fragment_columns(fragments)

    def _select(
        self, columns: Columns, budgets: list[int], explain: bool = False
    ) -> tuple[list[Selection], list[Decision]]:
        return selections(
            columns, budgets, self._strategy, self._policy, self._plain, explain, self._max_work
        )

    def compress(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int, int, int, float, bool]:
        columns = fragment_columns(fragments)
        [(kept, compressed_tokens, value, bound, exact)], _ = self._select(
            columns, [skeleton_budget]
        )
        kept_fragments = tuple([fragments[index] for index in kept])
        # `_relevance`, inline: this is the call planners make many times a second.
        negated = columns.negated_scores
        if len(kept) == 1:
            relevance = 0.0 - negated[kept[0]]
        else:
            relevance = 0.0 - fsum(map(negated.__getitem__, kept))
        return (
            kept_fragments,
            columns.original_tokens,
            compressed_tokens,
            value,
            bound,
            relevance,
            exact,
        )

    def compress_result(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> SkeletonResult:
        kept, original, compressed, value, bound, relevance, exact = self.compress(
            fragments, skeleton_budget
        )
        metadata = SkeletonMetadata.of(
            original,
            compressed,
            skeleton_budget,
            len(fragments),
            len(kept),
            value,
            bound,
            0,
            relevance,
            exact,
        )
        return SkeletonResult(kept, metadata)

    def compress_many(
        self, fragments: tuple[ContextFragment, ...], skeleton_budgets: list[int]
    ) -> tuple[int, list[tuple[tuple[ContextFragment, ...], int, int, int, float, bool]]]:
        columns = fragment_columns(fragments)
        selections, _ = self._select(columns, skeleton_budgets)
        results = [
            (
                tuple([fragments[index] for index in kept]),
                compressed_tokens,
                value,
                bound,
                _relevance(columns, kept),
                exact,
            )
            for kept, compressed_tokens, value, bound, exact in selections
        ]
        return columns.original_tokens, results

    def explain(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int, int, int, float, Decisions, bool]:
        columns = fragment_columns(fragments)
        [(kept, compressed_tokens, value, bound, exact)], decisions = self._select(
            columns, [skeleton_budget], True
        )
        return (
            tuple([fragments[index] for index in kept]),
            columns.original_tokens,
            compressed_tokens,
            value,
            bound,
            _relevance(columns, kept),
            _decision_columns(decisions),
            exact,
        )

    def compress_turn(
        self,
        fragments: tuple[ContextFragment, ...],
        skeleton_budget: int,
        previous: tuple[ContextFragment, ...],
        max_value_loss: float,
        headroom: float,
        explain: bool,
    ) -> tuple[tuple[ContextFragment, ...], int, int, int, int, float, int, Decisions | None, bool]:
        columns = fragment_columns(fragments)
        matched = matched_rows(fragments, columns, previous)
        kept, compressed_tokens, value, bound, reused_tokens, decisions, exact = self._turn(
            columns, skeleton_budget, matched, max_value_loss, headroom, explain
        )
        return (
            tuple([fragments[index] for index in kept]),
            columns.original_tokens,
            compressed_tokens,
            value,
            bound,
            _relevance(columns, kept),
            reused_tokens,
            _decision_columns(decisions) if explain else None,
            exact,
        )

    def _turn(
        self,
        columns: Columns,
        budget: int,
        matched: list[int],
        max_value_loss: float,
        headroom: float,
        explain: bool,
    ) -> Turn:
        """The call reusing the `matched` rows (docs/turns.md)."""
        if not matched:  # nothing to reuse: the call itself, on the plain path where it can be
            [(kept, compressed_tokens, value, bound, exact)], decisions = self._select(
                columns, [budget], explain
            )
            return Turn(kept, compressed_tokens, value, bound, 0, decisions, exact)
        return turn(
            columns,
            budget,
            self._strategy,
            self._policy,
            matched,
            max_value_loss,
            headroom,
            explain,
            self._max_work,
        )

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
        """At `max_value_loss=0`, the children packed in one call; None otherwise (and for
        what that call does not take): `siblings.py` packs them over `compress`."""
        if max_value_loss:
            return None
        return packed_siblings(
            lambda columns, budget: self._select(columns, [budget])[0][0],
            self._policy.order,
            fragments,
            relevances,
            skeleton_budgets,
            CachePricing(write, read, min_prefix),
        )

    def compress_arrays(
        self,
        fragment_ids: Sequence[object],
        token_counts: Sequence[object] | memoryview,
        relevance_scores: Sequence[object] | memoryview,
        required: Sequence[object] | None,
        groups: Sequence[object] | None,
        skeleton_budget: int,
        variants: Sequence[object] | None = None,
        previous: list[int] | None = None,
        max_value_loss: float = 0.0,
        headroom: float = 0.0,
    ) -> tuple[array[int], int, int, int, int, int, float, int, bool]:
        columns = row_columns(
            fragment_ids, token_counts, relevance_scores, required, groups, variants
        )
        # The rows are checked rows of this call: all of them match.
        kept, compressed_tokens, value, bound, reused_tokens, _, exact = self._turn(
            columns, skeleton_budget, previous or [], max_value_loss, headroom, False
        )
        return (
            array("q", kept),
            columns.original_tokens,
            compressed_tokens,
            len(columns.fragment_ids),
            value,
            bound,
            _relevance(columns, kept),
            reused_tokens,
            exact,
        )

    def compress_records(
        self,
        data: bytes,
        skeleton_budget: int,
        explain: bool = False,
        encoding: str | None = None,
    ) -> CompressedRecords:
        return compress_records(self, data, skeleton_budget, explain, encoding)

    def compress_record_file(
        self, path: str, skeleton_budget: int, encoding: str | None = None
    ) -> CompressedRecords | bytes:
        """The file's bytes: this backend reads every input whole, with `compress_records`."""
        with open(path, "rb") as handle:
            return handle.read()


def _relevance(columns: Columns, kept: list[int]) -> float:
    """The relevance of the `kept` rows, summed exactly and rounded once, as the Rust core
    sums it. `0.0 -` turns the columns' negated sum back, and `-0.0` (nothing kept) into 0.0."""
    negated = columns.negated_scores
    if len(kept) == 1:  # the common small call: one float, exact as it is
        return 0.0 - negated[kept[0]]
    return 0.0 - fsum(map(negated.__getitem__, kept))


def _decision_columns(decisions: list[Decision]) -> Decisions:
    """The decisions as columns: kept, reason, rank and budget_left."""
    kept, reasons, ranks, left = (
        (list(column) for column in zip(*decisions)) if decisions else ([], [], [], [])
    )
    return kept, reasons, ranks, left
