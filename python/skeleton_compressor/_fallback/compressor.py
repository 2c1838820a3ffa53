"""The pure-Python backend: the contract of the Rust core in plain Python.

Used where the extension is not built, and as the reference the benchmarks measure against.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from .._interface import STRATEGIES, CompressedRecords, Decisions
from ..policy import Policy, checked_policy
from ..types import ContextFragment
from .columns import Columns, fragment_columns, row_columns
from .records import compress_records
from .units import Decision, Units
from .value import Densities, fragment_values

__all__ = ["Compressor"]

# For each budget: the kept fragments' indices, their tokens, their value and the bound.
_Selection = tuple[list[int], int, int, int]


class Compressor:
    """One strategy and policy, chosen once; every call checks and compresses its input whole."""

    __slots__ = ("_plain", "_policy", "_strategy")

    def __init__(
        self,
        strategy: str,
        min_relevance: float = 0.0,
        on_overflow: str = "keep_top",
        order: str = "ranking",
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        self._strategy = strategy
        self._policy = checked_policy(min_relevance, on_overflow, order)
        # The walks in rank order under the default policy select on the columns directly.
        self._plain = self._policy == Policy() and strategy in ("greedy", "prefix")

    @property
    def strategy(self) -> str:
        return self._strategy

    @property
    def policy(self) -> Policy:
        return self._policy

    def validate(self, fragments: tuple[ContextFragment, ...]) -> None:
        fragment_columns(fragments)

    def _select(
        self, columns: Columns, budgets: list[int], explain: bool = False
    ) -> tuple[list[_Selection], list[Decision]]:
        """What is kept for each budget; decisions for the first when explaining."""
        ranking = columns.ranking()
        if (
            self._plain
            and not explain
            and not columns.required
            and not columns.grouped
            and not columns.variants
        ):
            return self._select_plain(columns, ranking, budgets), []
        policy = self._policy
        units = Units(
            columns.token_counts,
            columns.negated_scores,
            columns.required,
            columns.grouped,
            ranking,
            policy.min_relevance,
            columns.variants,
        )
        selections = []
        decisions: list[Decision] = []
        for budget in budgets:
            walk = units.walk(budget, self._strategy, policy.on_overflow, explain)
            selections.append((*units.kept_fragments(walk, policy.order), units.bound(budget)))
            if explain and not decisions:
                decisions = units.decisions(walk, budget)
        return selections, decisions

    def _select_plain(
        self, columns: Columns, ranking: list[int], budgets: list[int]
    ) -> list[_Selection]:
        """The walk in rank order on the columns; values are read once a budget is above 0
        (a budget of 0 keeps nothing and bounds nothing)."""
        prefix = self._strategy == "prefix"
        values: list[int] = []
        densities = None
        selections: list[_Selection] = []
        for budget in budgets:
            kept, compressed = columns.select(ranking, budget, prefix)
            if not budget:
                selections.append((kept, compressed, 0, 0))
                continue
            if densities is None:
                values = fragment_values(columns.negated_scores)
                densities = Densities(values, columns.token_counts, range(len(values)))
            value = sum(map(values.__getitem__, kept))
            selections.append((kept, compressed, value, densities.bound(budget)))
        return selections

    def compress(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int, int, int]:
        columns = fragment_columns(fragments)
        [(kept, compressed_tokens, value, bound)], _ = self._select(columns, [skeleton_budget])
        kept_fragments = tuple([fragments[index] for index in kept])
        return kept_fragments, columns.original_tokens, compressed_tokens, value, bound

    def compress_many(
        self, fragments: tuple[ContextFragment, ...], skeleton_budgets: list[int]
    ) -> tuple[int, list[tuple[tuple[ContextFragment, ...], int, int, int]]]:
        columns = fragment_columns(fragments)
        selections, _ = self._select(columns, skeleton_budgets)
        results = [
            (tuple([fragments[index] for index in kept]), compressed_tokens, value, bound)
            for kept, compressed_tokens, value, bound in selections
        ]
        return columns.original_tokens, results

    def explain(
        self, fragments: tuple[ContextFragment, ...], skeleton_budget: int
    ) -> tuple[tuple[ContextFragment, ...], int, int, int, int, Decisions]:
        columns = fragment_columns(fragments)
        [(kept, compressed_tokens, value, bound)], decisions = self._select(
            columns, [skeleton_budget], True
        )
        kept_flags, reasons, ranks, left = (
            (list(c) for c in zip(*decisions)) if decisions else ([], [], [], [])
        )
        return (
            tuple([fragments[index] for index in kept]),
            columns.original_tokens,
            compressed_tokens,
            value,
            bound,
            (kept_flags, reasons, ranks, left),
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
    ) -> tuple[array[int], int, int, int, int, int]:
        columns = row_columns(
            fragment_ids, token_counts, relevance_scores, required, groups, variants
        )
        [(kept, compressed_tokens, value, bound)], _ = self._select(columns, [skeleton_budget])
        rows = len(columns.fragment_ids)
        return array("q", kept), columns.original_tokens, compressed_tokens, rows, value, bound

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
