"""`Columns`: the checked fragments (or rows), one list per field, and the checks made once
all are read (repeated ids, the variant rules)."""

from __future__ import annotations

from ... import _messages

__all__ = ["Columns"]


class Columns:
    """Checked values, one list per field; index i is fragment (or row) i."""

    __slots__ = (
        "fragment_ids",
        "grouped",
        "negated_scores",
        "original_tokens",
        "required",
        "token_counts",
        "variants",
    )

    def __init__(self) -> None:
        self.fragment_ids: list[str] = []
        self.token_counts: list[int] = []
        self.negated_scores: list[float] = []
        self.required: list[int] = []  # indices of required fragments
        self.grouped: dict[int, str] = {}  # index: group, for fragments in a group
        self.variants: dict[int, str] = {}  # index: variant_of, for fragments that have one
        self.original_tokens = 0

    def rescored(self, negated_scores: list[float]) -> Columns:
        """The same fragments with other relevance (negated, as `negated_scores` holds it)."""
        columns = Columns()
        for name in Columns.__slots__:
            setattr(columns, name, getattr(self, name))
        columns.negated_scores = negated_scores
        return columns

    def finish(self, container: str) -> Columns:
        """Rejects a repeated id (naming its first two places), then breaks of the variant
        rules; and totals the tokens."""
        fragment_ids = self.fragment_ids
        if len(set(fragment_ids)) != len(fragment_ids):
            first_index: dict[str, int] = {}
            for index, fid in enumerate(fragment_ids):
                first = first_index.setdefault(fid, index)
                if first != index:
                    raise _messages.duplicate_error(fid, first, index, container)
        if self.variants:
            self._check_variants(container)
        self.original_tokens = sum(self.token_counts)
        return self

    def _check_variants(self, container: str) -> None:
        """A group's members share its first member's variant_of (else the error is at the
        first member, in input order, that differs); then a variant set has at most one
        required unit (else the error is at the first required member of the unit whose
        first required member comes second in input order)."""
        variants, grouped = self.variants, self.grouped
        group_first: dict[str, int] = {}
        for index, group in grouped.items():  # in input order: filled in index order
            first = group_first.setdefault(group, index)
            if variants.get(index) != variants.get(first):
                raise _messages.variant_group_mismatch_error(
                    self.fragment_ids[index],
                    index,
                    variants.get(index),
                    group,
                    first,
                    variants.get(first),
                    container,
                )
        settled: dict[str, tuple[object, int]] = {}  # variant_of: (its required unit, index)
        for index in self.required:
            variant = variants.get(index)
            if variant is None:
                continue
            unit = grouped.get(index, index)
            first_unit, first = settled.setdefault(variant, (unit, index))
            if first_unit != unit:
                raise _messages.variant_required_twice_error(
                    self.fragment_ids[index], index, variant, first, container
                )
