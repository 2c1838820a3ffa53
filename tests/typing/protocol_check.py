"""Checked by mypy (pyproject.toml): the service is a SkeletonCompressor to a type checker."""

from __future__ import annotations

from skeleton_compressor import (
    ContextFragment,
    Plan,
    SkeletonCompressor,
    SkeletonCompressorService,
    SkeletonResult,
)


def compressor_for_planner() -> SkeletonCompressor:
    return SkeletonCompressorService(backend="auto", strategy="prefix")


def child_of(plan: Plan) -> Plan:
    return plan.spawn_subplan("child", "goal", 100, compressor=SkeletonCompressorService())


def compress_once(compressor: SkeletonCompressor) -> SkeletonResult:
    return compressor.compress((ContextFragment("a", 1, 0.5),), 10)
