"""Siblings with no value given up, computed plainly: each child's own `compress`, the
fragments every child keeps first in input order, then the child's others in its output
order (`edges` over those units alone, from the child's ranking as `compress` gives it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from skeleton_compressor import (
    CachePricing,
    ContextFragment,
    Plan,
    SkeletonCompressorService,
    SkeletonResult,
    estimate_cost,
)
from skeleton_compressor.pricing import CacheCost


@dataclass(frozen=True)
class ReferenceSiblings:
    shared_ids: list[str]
    outputs: list[list[ContextFragment]]
    solo: list[SkeletonResult]
    cost: CacheCost
    independent_cost: CacheCost


def _units_in_order(fragments: Sequence[ContextFragment]) -> list[list[ContextFragment]]:
    """Fragments in an output of `compress` under `ranking` (a group's members side by
    side), as units: a run of one group is one unit, any other fragment a unit alone."""
    units: list[list[ContextFragment]] = []
    for fragment in fragments:
        if units and fragment.group is not None and units[-1][0].group == fragment.group:
            units[-1].append(fragment)
        else:
            units.append([fragment])
    return units


def reference_siblings(
    parent: tuple[ContextFragment, ...],
    children: Sequence[tuple[int, dict[str, float] | None]],
    backend: str,
    strategy: str,
    min_relevance: float,
    on_overflow: str,
    order: str,
    pricing: CachePricing,
) -> ReferenceSiblings:
    options = {
        "backend": backend,
        "strategy": strategy,
        "min_relevance": min_relevance,
        "on_overflow": on_overflow,
    }
    service = SkeletonCompressorService(order=order, **options)
    by_rank = SkeletonCompressorService(order="ranking", **options)
    plan = Plan("parent", "goal", context=parent)
    contexts = [plan.rescored(relevance) for _, relevance in children]
    solo = [service.compress(context, budget) for context, (budget, _) in zip(contexts, children)]
    kept_ids = [{f.fragment_id for f in result.fragments} for result in solo]
    shared_ids = [f.fragment_id for f in parent if all(f.fragment_id in ids for ids in kept_ids)]
    outputs = []
    for context, (budget, _), result in zip(contexts, children, solo):
        by_id = {f.fragment_id: f for f in context}
        head = [by_id[i] for i in shared_ids]
        if order == "edges":
            ranked = by_rank.compress(context, budget).fragments
            units = [u for u in _units_in_order(ranked) if u[0].fragment_id not in shared_ids]
            units = units[::2] + units[1::2][::-1]
            tail = [f for unit in units for f in unit]
        else:
            tail = [f for f in result.fragments if f.fragment_id not in shared_ids]
        outputs.append(head + tail)
    return ReferenceSiblings(
        shared_ids,
        outputs,
        solo,
        estimate_cost(outputs, pricing),
        estimate_cost([r.fragments for r in solo], pricing),
    )
