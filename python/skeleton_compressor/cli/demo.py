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
from ..types import ContextFragment, FragmentDecision, SkeletonMetadata
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
        )
        for f in parent["context"]
    )
    plan = Plan(parent["plan_id"], parent["goal"], context=context)
    return plan, data["subplans"], data["min_relevance"]


def _metadata_line(metadata: SkeletonMetadata) -> str:
    over = "  OVER BUDGET" if metadata.over_budget else ""
    return (
        f"kept {metadata.fragments_kept} of {metadata.fragments_total} fragments, "
        f"{metadata.compressed_tokens} of {metadata.original_tokens} tokens "
        f"(ratio {metadata.ratio:.3f}, budget {metadata.skeleton_budget}){over}\n"
        f"  {_value(metadata)}"
    )


def _value(metadata: SkeletonMetadata) -> str:
    kept, bound = metadata.value_kept or 0.0, metadata.value_bound or 0.0
    share = f" ({kept / bound:.1%})" if bound else ""
    return f"relevance kept {kept:.2f} of at most {bound:.2f}{share}"


def _by_value_lines(
    fragments: tuple[ContextFragment, ...], budget: int, backend: str, floor: float
) -> list[str]:
    """What `greedy` and `optimal` keep of one child's context, side by side."""
    kept = {}
    lines = ["by strategy, for this child:"]
    for strategy in ("greedy", "optimal"):
        service = SkeletonCompressorService(backend=backend, strategy=strategy, min_relevance=floor)
        result = service.compress(fragments, budget)
        kept[strategy] = {f.fragment_id for f in result.fragments}
        lines.append(f"  {strategy:<8} {_value(result.metadata)}")
    gained = sorted(kept["optimal"] - kept["greedy"])
    lost = sorted(kept["greedy"] - kept["optimal"])
    if gained:
        lines.append(f"  optimal keeps {len(gained)} fragments greedy drops:")
        lines += [f"  {line}" for line in _wrapped(gained, 92)]
    if lost:
        lines.append(f"  in place of {len(lost)} that greedy keeps:")
        lines += [f"  {line}" for line in _wrapped(lost, 92)]
    return lines


def _dropped_lines(decisions: Sequence[FragmentDecision], width: int = 94) -> list[str]:
    """Every dropped fragment, best-ranked first, under the reason it was dropped for."""
    by_reason: dict[str, list[FragmentDecision]] = {}
    for decision in decisions:
        if not decision.kept:
            by_reason.setdefault(decision.reason, []).append(decision)
    lines = []
    for reason, dropped in by_reason.items():
        dropped.sort(key=lambda d: d.rank)
        lines.append(f"dropped {len(dropped)} {reason}:")
        lines += _wrapped([decision.fragment.fragment_id for decision in dropped], width)
    return lines


def _wrapped(names: Sequence[str], width: int = 94) -> list[str]:
    """`names`, comma-separated, in indented lines of at most about `width`."""
    lines = []
    line = ""
    for name in names:
        if line and len(line) + len(name) + 2 > width:
            lines.append(f"  {line},")
            line = ""
        line = f"{line}, {name}" if line else name
    lines.append(f"  {line}")
    return lines


# Measured with `bench --cli` and `bench` on the 2-core machine of the README's "Performance".
_AT_SCALE = """
at scale: `compress` on a file of a million JSON Lines records (107 MB) takes about 0.5 s as a
  process with the Rust backend (6.5 s with the Python one), next to 0.08 s for compressing a
  million fragments already in memory; `skeleton-compressor bench --cli` measures it here
"""


def run_demo(args: argparse.Namespace, out: TextIO) -> None:
    # Written whole once made, so that an error writing it is told from one making it.
    text = io.StringIO()
    _write_demo(args, text)
    with writing_output():
        out.write(text.getvalue())


def _write_demo(args: argparse.Namespace, out: TextIO) -> None:
    parent, subplans, floor = load_example()
    service = SkeletonCompressorService(
        backend=args.backend, strategy=args.strategy, min_relevance=floor
    )
    total = sum(fragment.token_count for fragment in parent.context)
    out.write(f"parent {parent.plan_id}: {parent.goal}\n")
    out.write(
        f"  {len(parent.context)} context fragments, {total} tokens; backend {service.backend}, "
        f"strategy {service.strategy}, min_relevance {floor}\n"
        "  the task statement is required in every child; each tool call is grouped with its "
        "output;\n  each child scores the parent's fragments for its own goal\n"
    )
    for spec in subplans:
        relevance = spec.get("relevance")
        child = parent.spawn_subplan(
            spec["plan_id"],
            spec["goal"],
            spec["skeleton_budget"],
            compressor=service,
            relevance=relevance,
        )
        explanation = service.explain(parent.rescored(relevance), spec["skeleton_budget"])
        out.write(f"\nchild {child.plan_id}: {child.goal}\n")
        width = max((len(f.fragment_id) for f in child.context), default=10)
        out.write(f"  {'#':>3}  {'fragment_id':<{width}}  {'tokens':>6}  {'relevance':>9}  note\n")
        for rank, fragment in enumerate(child.context, start=1):
            note = "required" if fragment.required else fragment.group or ""
            if fragment.group is not None:
                note = f"group {fragment.group}"
            out.write(
                f"  {rank:>3}  {fragment.fragment_id:<{width}}  {fragment.token_count:>6}  "
                f"{fragment.relevance_score:>9.2f}  {note}\n".rstrip()
                + "\n"
            )
        assert child.skeleton_metadata is not None
        out.write(f"  {_metadata_line(child.skeleton_metadata)}\n")
        for line in _dropped_lines(explanation.decisions):
            out.write(f"  {line}\n")
        if spec is subplans[0]:
            rescored = parent.rescored(relevance)
            budget = spec["skeleton_budget"]
            for line in _by_value_lines(rescored, budget, service.backend, floor):
                out.write(f"  {line}\n")
    out.write(_AT_SCALE)
