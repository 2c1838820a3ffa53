"""`skeleton-compressor demo`: a built-in parent plan compressed into three subplans, with
what each child kept and what it dropped, and why."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any, TextIO

from ..plan import Plan
from ..service import SkeletonCompressorService
from ..siblings import Child, SiblingsResult
from ..types import ContextFragment, FragmentDecision, SkeletonMetadata, StrategyName
from .input import writing_output

__all__ = ["load_example", "run_demo"]


def load_example() -> tuple[Plan, list[dict[str, Any]], float]:
    """The built-in example: a parent plan with its context, the subplans to spawn (each
    with its own relevance of the parent's fragments), and the relevance floor."""
    data = json.loads(
        resources.files("skeleton_compressor").joinpath("data/example_plan.json").read_text("utf-8")
    )
    parent = data["parent"]
    context = tuple(
        ContextFragment(
            f["fragment_id"],
            f["token_count"],
            f["relevance_score"],
            f["content"],
            f.get("required", False),
            f.get("group"),
            f.get("variant_of"),
        )
        for f in parent["context"]
    )
    plan = Plan(parent["plan_id"], parent["goal"], context=context)
    return plan, data["subplans"], data["min_relevance"]


# What each reason of a decision means, for the legend (the reasons the demo meets only).
REASONS = {
    "required": "pinned",
    "fits": "fitted the budget left",
    "chosen": "in the best set",
    "top_over_budget": "kept alone, over budget",
    "no_room": "bigger than the budget left",
    "not_chosen": "fits, not in the best set",
    "variant_kept": "another rendering of it kept",
    "after_stop": "after the first that did not fit",
    "below_min_relevance": "under the floor",
    "zero_budget": "budget 0",
}
# The children's budget when packed together as siblings: one budget for all three, as
# siblings that share most have.
SIBLING_BUDGET = 4000
# Rows shown of each child without --verbose: kept ones (required ones always among them),
# and dropped ones (the best-ranked of each reason first).
KEPT_SHOWN, DROPPED_SHOWN = 8, 3
NEXT_STEPS = """
try it on your own fragments (JSON Lines, one {"fragment_id", "token_count", "relevance_score"}
per line; add --explain for every decision, --encoding o200k_base to count tokens from "content"):
  skeleton-compressor compress your_fragments.jsonl --budget 2000
"""


def run_demo(args: argparse.Namespace, out: TextIO) -> None:
    # Written whole once made, so that an error writing it is told from one making it.
    text = io.StringIO()
    _write_demo(args, text)
    with writing_output():
        out.write(text.getvalue())


def _write_demo(args: argparse.Namespace, out: TextIO) -> None:
    parent, subplans, floor = load_example()
    verbose = bool(getattr(args, "verbose", False))
    service = SkeletonCompressorService(
        backend=args.backend, strategy=args.strategy, min_relevance=floor
    )
    total = sum(fragment.token_count for fragment in parent.context)
    children = []
    for spec in subplans:
        relevance = spec.get("relevance")
        budget = spec["skeleton_budget"]
        child = parent.spawn_subplan(
            spec["plan_id"], spec["goal"], budget, compressor=service, relevance=relevance
        )
        explanation = service.explain(parent.rescored(relevance), budget)
        assert [f.fragment_id for f in explanation.result.fragments] == [
            f.fragment_id for f in child.context
        ]
        children.append((spec, child, explanation))
    reasons = [r for r in REASONS if any(d.reason == r for *_, e in children for d in e.decisions)]
    out.write(f"parent {parent.plan_id}: {parent.goal}\n")
    out.write(
        f"  {len(parent.context)} context fragments, {total} tokens; backend {service.backend}, "
        f"strategy {service.strategy}, min_relevance {floor}\n"
        "  the task statement is required in every child; each tool call is grouped with its "
        "output;\n  the largest source files come whole and as an outline (variant_of): a child "
        "keeps at most one;\n  each child scores the parent's fragments for its own goal: "
        "relevance columns parent and child\n"
    )
    out.write("reasons: " + "; ".join(f"{reason}: {REASONS[reason]}" for reason in reasons) + "\n")
    packed = _siblings(parent, subplans, service)
    out.write(_siblings_line(packed) + "\n")
    scores = {fragment.fragment_id: fragment.relevance_score for fragment in parent.context}
    for index, (spec, child, explanation) in enumerate(children):
        metadata = explanation.result.metadata
        out.write(f"\nchild {child.plan_id} (budget {spec['skeleton_budget']}): {child.goal}\n")
        out.write(f"  {_metadata_line(metadata)}\n")
        if index == 0:
            context = parent.rescored(spec.get("relevance"))
            line = _by_value_line(context, spec["skeleton_budget"], service, floor)
            out.write(f"  {line}\n")
        for line in _renderings_kept(explanation.decisions):
            out.write(f"  {line}\n")
        for line in _table(explanation.decisions, scores, verbose):
            out.write(f"  {line}".rstrip() + "\n")
    if verbose:
        for line in _siblings_detail(packed):
            out.write(f"{line}\n")
    out.write(NEXT_STEPS)
    if not verbose:
        out.write("  skeleton-compressor demo --verbose   (every fragment of every child)\n")


def _siblings(
    parent: Plan, subplans: list[dict[str, Any]], service: SkeletonCompressorService
) -> tuple[SiblingsResult, SiblingsResult]:
    """The three children packed together at one budget each (siblings share most when
    their budgets are alike): keeping each solo set, and giving up at most 1% of value."""
    children = [Child(SIBLING_BUDGET, spec.get("relevance")) for spec in subplans]
    return (
        service.compress_siblings(parent.context, children),
        service.compress_siblings(parent.context, children, max_value_loss=0.01),
    )


def _siblings_line(packed: tuple[SiblingsResult, SiblingsResult]) -> str:
    exact, grown = packed
    return (
        f"siblings at {SIBLING_BUDGET} tokens each, billed with prompt caching: "
        f"{exact.independent_cost.ratio:.2f}x alone, {exact.cost.ratio:.2f}x shared first, "
        f"{grown.cost.ratio:.2f}x giving up 1% of value"
    )


def _siblings_detail(packed: tuple[SiblingsResult, SiblingsResult]) -> list[str]:
    """What the children share and what that costs, with `max_value_loss` 0 and 0.01."""
    lines = [
        f"\nsiblings packed together ({SIBLING_BUDGET} tokens each, CachePricing(): a cache "
        "write 1.25x, a read 0.1x, from 1024 tokens):"
    ]
    for loss, result in zip(("0", "0.01"), packed):
        shared = sum(fragment.token_count for fragment in result.shared)
        lines.append(
            f"  max_value_loss {loss}: {len(result.shared)} fragments, {shared} tokens shared; "
            f"billed {result.cost.billed:.0f} of {result.cost.uncached} tokens "
            f"({result.cost.ratio:.2f}x; alone {result.independent_cost.ratio:.2f}x); "
            f"prefix_key {result.prefix_key[:12]}"
        )
    return lines


def _metadata_line(metadata: SkeletonMetadata) -> str:
    over = "  OVER BUDGET" if metadata.over_budget else ""
    return (
        f"kept {metadata.fragments_kept} of {metadata.fragments_total} fragments, "
        f"{metadata.compressed_tokens} of {metadata.original_tokens} tokens; {_value(metadata)}"
        f"{over}"
    )


def _value(metadata: SkeletonMetadata) -> str:
    kept, bound = metadata.value_kept or 0.0, metadata.value_bound or 0.0
    share = f" ({kept / bound:.1%})" if bound else ""
    return f"relevance kept {kept:.2f} of at most {bound:.2f}{share}"


def _by_value_line(
    context: tuple[ContextFragment, ...],
    budget: int,
    service: SkeletonCompressorService,
    floor: float,
) -> str:
    """What the other way of choosing keeps of this child's context: `optimal` beside a
    walk, or `greedy` beside a strategy that chooses by value."""
    other: StrategyName = "greedy" if service.strategy in ("density", "optimal") else "optimal"
    compressor = SkeletonCompressorService(
        backend=service.backend, strategy=other, min_relevance=floor
    )
    metadata = compressor.compress(context, budget).metadata
    share = ""
    if metadata.value_bound:
        share = f" ({metadata.kept_share or 0.0:.1%})"
    return (
        f"--strategy {other} would keep {metadata.fragments_kept} fragments, "
        f"relevance {metadata.value_kept or 0.0:.2f}{share}"
    )


def _renderings_kept(decisions: Sequence[FragmentDecision]) -> list[str]:
    """A line for each thing whose better-ranked rendering did not fit and that was kept
    as another: a file kept as its outline where the whole file did not fit."""
    lines = []
    for kept in decisions:
        thing = kept.fragment.variant_of
        if not kept.kept or thing is None:
            continue
        for whole in decisions:
            if (
                whole.fragment.variant_of == thing
                and whole.reason == "no_room"
                and whole.rank < kept.rank
            ):
                kept_id = kept.fragment.fragment_id
                rendering = kept_id[len(thing) :] if kept_id.startswith(thing) else kept_id
                lines.append(
                    f"{thing} did not fit whole ({whole.fragment.token_count} tokens): kept as "
                    f"{rendering} ({kept.fragment.token_count} tokens)"
                )
                break
    return lines


def _table(
    decisions: Sequence[FragmentDecision], parent_scores: dict[str, float], verbose: bool
) -> list[str]:
    """The child's fragments as a table: the kept ones by rank, then the dropped ones by
    rank, with their tokens, the parent's and the child's relevance, and the reason."""
    kept = sorted((d for d in decisions if d.kept), key=_by_rank)
    dropped = sorted((d for d in decisions if not d.kept), key=_by_rank)
    shown_kept, shown_dropped = kept, dropped
    if not verbose:
        shown_kept = _some_kept(kept)
        shown_dropped = _some_dropped(dropped)
    rows = shown_kept + shown_dropped
    width = max((len(d.fragment.fragment_id) for d in rows), default=11)
    width = max(width, len("fragment_id"))
    lines = [f"{'rank':>4}  {'fragment_id':<{width}}  {'tokens':>6}  {'parent':>6}  child  reason"]
    hidden_run = 0
    for decision in kept:
        if decision in shown_kept:
            if hidden_run:
                lines.append(f"   ... {hidden_run} more kept")
                hidden_run = 0
            lines.append(_row(decision, parent_scores, width))
        else:
            hidden_run += 1
    if hidden_run:
        lines.append(f"   ... {hidden_run} more kept")
    for decision in shown_dropped:
        lines.append(_row(decision, parent_scores, width))
    hidden = [d for d in dropped if d not in shown_dropped]
    if hidden:
        counts: dict[str, int] = {}
        for decision in hidden:
            counts[decision.reason] = counts.get(decision.reason, 0) + 1
        by_reason = ", ".join(f"{count} {reason}" for reason, count in counts.items())
        lines.append(f"   ... {len(hidden)} more dropped: {by_reason}")
    return lines


def _by_rank(decision: FragmentDecision) -> int:
    # Members of a group share a rank; a stable sort lists them in input order.
    return decision.rank


def _some_kept(kept: list[FragmentDecision]) -> list[FragmentDecision]:
    """The required ones and the best-ranked others, at most KEPT_SHOWN in all, by rank."""
    required = [d for d in kept if d.reason == "required"]
    others = [d for d in kept if d.reason != "required"]
    chosen = required + others[: max(KEPT_SHOWN - len(required), 0)]
    return sorted(chosen, key=lambda d: kept.index(d))


def _some_dropped(dropped: list[FragmentDecision]) -> list[FragmentDecision]:
    """The best-ranked dropped fragment of each reason, then the next best, at most
    DROPPED_SHOWN, by rank."""
    chosen: list[FragmentDecision] = []
    for decision in dropped:
        if len(chosen) < DROPPED_SHOWN and all(d.reason != decision.reason for d in chosen):
            chosen.append(decision)
    for decision in dropped:
        if len(chosen) < DROPPED_SHOWN and decision not in chosen:
            chosen.append(decision)
    return sorted(chosen, key=lambda d: dropped.index(d))


def _row(decision: FragmentDecision, parent_scores: dict[str, float], width: int) -> str:
    fragment = decision.fragment
    reason: str = decision.reason
    if reason in ("no_room", "not_chosen") and decision.budget_left is not None:
        reason = f"{reason} ({decision.budget_left} left)"
    parent = parent_scores[fragment.fragment_id]
    return (
        f"{decision.rank + 1:>4}  {fragment.fragment_id:<{width}}  {fragment.token_count:>6}  "
        f"{parent:>6.2f}  {fragment.relevance_score:>5.2f}  {reason}"
    )
