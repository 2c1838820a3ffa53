"""The plan model: a plan, its context, and the subplans it spawns."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .protocol import SkeletonCompressor
from .service import SkeletonCompressorService
from .types import _SLOTS, ContextFragment, SkeletonMetadata

__all__ = ["Plan"]


@dataclass(frozen=True, **_SLOTS)
class Plan:
    plan_id: str
    goal: str
    parent_id: str | None = None
    context: tuple[ContextFragment, ...] = ()
    skeleton_metadata: SkeletonMetadata | None = None

    def with_skeleton_metadata(self, metadata: SkeletonMetadata | None) -> Plan:
        if metadata is not None and not isinstance(metadata, SkeletonMetadata):
            raise TypeError(
                f"metadata must be a SkeletonMetadata or None, got {type(metadata).__name__}"
            )
        return dataclasses.replace(self, skeleton_metadata=metadata)

    def spawn_subplan(
        self,
        plan_id: str,
        goal: str,
        skeleton_budget: int,
        *,
        compressor: SkeletonCompressor | None = None,
        relevance: Mapping[str, float] | None = None,
    ) -> Plan:
        """A child plan inheriting the part of this plan's context that fits its budget.

        `compressor` decides how (its strategy and selection policy); `relevance` gives the
        child's own relevance of the parent's fragments by id, for a child whose goal makes
        other fragments relevant (fragments it does not name keep the parent's score).
        """
        if compressor is None:
            compressor = SkeletonCompressorService()
        result = compressor.compress(self.rescored(relevance), skeleton_budget)
        return Plan(plan_id, goal, self.plan_id, result.fragments, result.metadata)

    def rescored(self, relevance: Mapping[str, float] | None) -> tuple[ContextFragment, ...]:
        """This plan's context as a child sees it: each fragment named in `relevance` with
        that relevance score, the others as they are."""
        context = self.context
        if not relevance or not isinstance(context, tuple):
            return context  # the compressor refuses a context that is not a tuple
        return tuple([_rescored(fragment, relevance) for fragment in context])  # type: ignore[misc]

    def to_cli_dict(self) -> dict[str, Any]:
        return {
            "plan_id": self.plan_id,
            "goal": self.goal,
            "parent_id": self.parent_id,
            "context": [
                {
                    "fragment_id": fragment.fragment_id,
                    "token_count": fragment.token_count,
                    "relevance_score": fragment.relevance_score,
                    **({"required": True} if fragment.required else {}),
                    **({"group": fragment.group} if fragment.group is not None else {}),
                }
                for fragment in self.context
            ],
            "skeleton_metadata": (
                None if self.skeleton_metadata is None else self.skeleton_metadata.to_dict()
            ),
        }


def _rescored(fragment: object, relevance: Mapping[str, float]) -> object:
    """The fragment with the child's relevance, when it is a fragment with an id the mapping
    names; anything else as it is, for the compressor to accept or refuse."""
    if not isinstance(fragment, ContextFragment):
        return fragment
    try:
        fragment_id = fragment.fragment_id
    except Exception:
        return fragment
    if not isinstance(fragment_id, str) or str.__str__(fragment_id) not in relevance:
        return fragment
    return dataclasses.replace(fragment, relevance_score=relevance[str.__str__(fragment_id)])
