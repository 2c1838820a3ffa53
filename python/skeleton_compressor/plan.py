"""The plan model: a plan, its context, and the subplans it spawns."""

from __future__ import annotations

import dataclasses
import math
import numbers
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import _values
from ._messages import describe
from .pricing import CachePricing
from .protocol import SkeletonCompressor
from .service import SkeletonCompressorService
from .siblings import Child, readable_id, remade
from .types import _SLOTS, ContextFragment, SkeletonMetadata, SkeletonResult

__all__ = ["Plan"]


@dataclass(frozen=True, **_SLOTS)
class Plan:
    """A plan: its id and goal, its parent's id, the context it holds, and the metadata of the
    compression that gave it that context (None for a plan made directly).

    A frozen dataclass; construction checks nothing (the compressor checks the context when
    a subplan is spawned).
    """

    plan_id: str
    goal: str
    parent_id: str | None = None
    context: tuple[ContextFragment, ...] = ()
    skeleton_metadata: SkeletonMetadata | None = None

    def with_skeleton_metadata(self, metadata: SkeletonMetadata | None) -> Plan:
        """A copy of this plan with `metadata` as its `skeleton_metadata`.

        Raises:
            TypeError: `metadata` is neither a `SkeletonMetadata` nor None.
        """
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

        Args:
            plan_id: the child's id.
            goal: the child's goal.
            skeleton_budget: the child's token budget, an int >= 0.
            compressor: decides how (its strategy and selection policy): any
                `SkeletonCompressor`; by default a `SkeletonCompressorService()` (greedy, no
                policy, the best backend available).
            relevance: the child's own relevance of the parent's fragments by id, for a child
                whose goal makes other fragments relevant; fragments it does not name keep
                the parent's score.

        Returns:
            A `Plan` whose `parent_id` is this plan's id, whose `context` is the kept
            fragments (in the compressor's output order) and whose `skeleton_metadata` is
            the compression's metadata.

        Raises:
            TypeError: `compressor` has no `compress` method, or it returns something other
                than a `SkeletonResult`.
            ValueError: `relevance` names an id not in this plan's context (see `rescored`).
            TypeError, ValueError: what the compressor raises for the context or the budget
                (`FragmentTypeError`, `FragmentValueError`, `BudgetExceededError`, ...).
        """
        if compressor is None:
            compressor = SkeletonCompressorService()
        elif not callable(getattr(compressor, "compress", None)):
            raise TypeError(
                "compressor must be a SkeletonCompressor (an object with a compress method), "
                f"got {type(compressor).__name__}"
            )
        result = compressor.compress(self.rescored(relevance), skeleton_budget)
        if not isinstance(result, SkeletonResult):
            raise TypeError(
                f"{type(compressor).__name__}.compress must return a SkeletonResult, "
                f"got {type(result).__name__}"
            )
        return Plan(plan_id, goal, self.plan_id, result.fragments, result.metadata)

    def spawn_subplans(
        self,
        children: Sequence[tuple[str, str, int, Mapping[str, float] | None]],
        *,
        compressor: SkeletonCompressorService | None = None,
        max_value_loss: float = 0.0,
        pricing: CachePricing | None = None,
    ) -> tuple[Plan, ...]:
        """The children of this plan, packed together (`compress_siblings`): the context
        every child keeps comes first in each, in this plan's order, so that a provider's
        prompt cache serves it to all but the first.

        Args:
            children: a sequence of `(plan_id, goal, skeleton_budget, relevance)`, relevance
                the child's own scores by id, or None for this plan's.
            compressor: a `SkeletonCompressorService` (its strategy, policy and backend); by
                default `SkeletonCompressorService()`.
            max_value_loss, pricing: as for `SkeletonCompressorService.compress_siblings`.

        Returns:
            One `Plan` per child, in order, with this plan's id as `parent_id`, the child's
            packed context and its metadata.

        Raises:
            TypeError: `children` is not a sequence of 4-tuples (named `children[i]`), or
                `compressor` is not a `SkeletonCompressorService`.
            What `compress_siblings` raises.
        """
        if compressor is None:
            compressor = SkeletonCompressorService()
        elif not isinstance(compressor, SkeletonCompressorService):
            raise TypeError(
                f"compressor must be a SkeletonCompressorService, got {type(compressor).__name__}"
            )
        if isinstance(children, (str, bytes)) or not isinstance(children, Sequence):
            raise TypeError(
                "children must be a sequence of (plan_id, goal, skeleton_budget, relevance), "
                f"got {type(children).__name__}"
            )
        specs = []
        for position, spec in enumerate(children):
            if not isinstance(spec, tuple) or len(spec) != 4:
                raise TypeError(
                    f"children[{position}] must be a tuple (plan_id, goal, skeleton_budget, "
                    f"relevance), got {type(spec).__name__}"
                )
            specs.append(spec)
        packed = compressor.compress_siblings(
            self.context,
            [Child(budget, relevance) for _, _, budget, relevance in specs],
            max_value_loss=max_value_loss,
            pricing=pricing,
        )
        return tuple(
            Plan(plan_id, goal, self.plan_id, result.fragments, result.metadata)
            for (plan_id, goal, _, _), result in zip(specs, packed.children)
        )

    def rescored(self, relevance: Mapping[str, float] | None) -> tuple[ContextFragment, ...]:
        """This plan's context as a child sees it: each fragment named in `relevance` with
        that relevance score, the others as they are.

        Args:
            relevance: the child's relevance scores by `fragment_id`, or None for the
                parent's own. The scores are checked by the compressor, as any
                `relevance_score` is.

        Raises:
            TypeError: `relevance` is neither None nor a mapping.
            ValueError: `relevance` names an id that no fragment of the context has (when
                every fragment's id can be read; a context with a fragment whose id cannot
                be read is left to the compressor, which names that fragment).
            FragmentTypeError: a fragment to rescore has a field that cannot be read.
        """
        # Said here: a str or a list of pairs would fail below with a message about them.
        if relevance is not None and not isinstance(relevance, Mapping):
            raise TypeError(
                "relevance must be None or a Mapping of fragment_id to score, "
                f"got {type(relevance).__name__}"
            )
        context = self.context
        if not relevance or not isinstance(context, tuple):
            return context  # the compressor refuses a context that is not a tuple
        # A tuple subclass is read as the items it stores, as the compressor reads it.
        fragments: list[object] = list(tuple.__iter__(context))
        known = _context_ids(fragments)
        named: dict[str, object] = {}
        unknown = []
        for key in relevance:
            plain = str.__str__(key) if isinstance(key, str) else None
            if known is not None and plain not in known:
                unknown.append(key)
            elif plain is not None:
                named[plain] = relevance[key]
        if unknown:
            more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
            raise ValueError(
                f"relevance names fragment_id {unknown[0]!r}{more}, which is not in the "
                f"context of plan {self.plan_id!r}"
            )
        return tuple(
            _rescored(fragment, index, named)  # type: ignore[misc]
            for index, fragment in enumerate(fragments)
        )

    def to_cli_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready data: ids, goal, the context's fragments (their ids, token
        counts and scores, with `required`, `group` and `variant_of` where set; not their
        content) and the metadata as `SkeletonMetadata.to_dict` gives it (or None).

        A number or name of another type than JSON's (numpy's, a `Fraction`, a subclass) is
        given as the plain int, float or str it stands for; the fields are not otherwise
        checked (the compressor checks them).

        Raises:
            TypeError: a field that JSON cannot hold even so (bytes, a `Decimal`, NaN, a
                `required` that is not a bool), named `context[i].field`.
        """
        return {
            "plan_id": self.plan_id,
            "goal": self.goal,
            "parent_id": self.parent_id,
            "context": [
                _cli_fragment(fragment, index) for index, fragment in enumerate(self.context)
            ],
            "skeleton_metadata": (
                None if self.skeleton_metadata is None else self.skeleton_metadata.to_dict()
            ),
        }


def _cli_fragment(fragment: ContextFragment, index: int) -> dict[str, Any]:
    def field(name: str, default: object = None) -> object:
        value = getattr(fragment, name, default)
        ready = _json_ready(value)
        if ready is None or type(ready) in (str, int, bool) or _finite_float(ready):
            return ready
        raise TypeError(f"context[{index}].{name} cannot be written as JSON: {describe(value)}")

    record = {
        "fragment_id": field("fragment_id"),
        "token_count": field("token_count"),
        "relevance_score": field("relevance_score"),
    }
    required = field("required", False)
    if required not in (True, False):
        raise TypeError(f"context[{index}].required must be a bool, got {describe(required)}")
    if required:
        record["required"] = True
    for name in ("group", "variant_of"):
        value = field(name)
        if value is not None:
            record[name] = value
    return record


def _json_ready(value: object) -> object:
    """`value` as `json` can write it: a str, int or float subclass, or another integer or
    real number (numpy's, a `Fraction`), as the plain value it stands for; else as it is."""
    kind = type(value)
    if value is None or kind in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if _values._is_numpy_bool(value):
        return bool(value)
    try:
        if isinstance(value, int) or hasattr(kind, "__index__"):
            return operator.index(value)  # type: ignore[arg-type]
        if isinstance(value, numbers.Real):
            return float(value)
    except Exception:  # a number that cannot say what it stands for: as it is
        pass
    return value


def _finite_float(value: object) -> bool:
    return type(value) is float and math.isfinite(value)


def _context_ids(fragments: list[object]) -> set[str] | None:
    """The ids of the context's fragments as plain str, or None when one cannot be read."""
    ids = set()
    for fragment in fragments:
        fragment_id = readable_id(fragment)
        if fragment_id is None:
            return None
        ids.add(fragment_id)
    return ids


def _rescored(fragment: object, index: int, named: dict[str, object]) -> object:
    """The fragment with the child's relevance, when it is a fragment with an id the child
    names; anything else as it is, for the compressor to accept or refuse."""
    fragment_id = readable_id(fragment)
    if fragment_id is None or fragment_id not in named:
        return fragment
    return remade(fragment, index, named[fragment_id])  # type: ignore[arg-type]
