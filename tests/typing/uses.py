"""Checked by mypy --strict (pyproject.toml, and tests/api/test_typing.py): what users write
passes, with the closed sets of names as literals and the metadata's share without a
division by an Optional."""

from __future__ import annotations

from typing import Literal, assert_type

from skeleton_compressor import (
    BackendName,
    ContextFragment,
    DecisionReason,
    EncodingName,
    OnOverflowName,
    OrderName,
    SkeletonCompressorService,
    StrategyName,
    TokenCounter,
    compress,
    explain,
)
from skeleton_compressor.integrations.haystack import SkeletonDocumentPacker
from skeleton_compressor.integrations.langchain import SkeletonDocumentCompressor, pack_messages
from skeleton_compressor.integrations.llamaindex import SkeletonNodePostprocessor
from skeleton_compressor.integrations.pydantic_ai import SkeletonHistoryProcessor


class Note(ContextFragment):
    """A user's own fragment type: the constructors give it back."""


def readme_strategies(fragments: tuple[ContextFragment, ...]) -> list[str]:
    lines = []
    for strategy in ("greedy", "optimal"):
        metadata = compress(fragments, 600, strategy=strategy).metadata
        lines.append(f"{strategy}: {metadata.value_kept:.2f}, {metadata.kept_share:.0%}")
    return lines


def share_kept(fragments: tuple[ContextFragment, ...]) -> float:
    share = compress(fragments, 100).metadata.kept_share
    return 0.0 if share is None else share * 100


def options_from_settings(
    backend: BackendName, strategy: StrategyName, on_overflow: OnOverflowName, order: OrderName
) -> SkeletonCompressorService:
    service = SkeletonCompressorService(
        backend=backend, strategy=strategy, on_overflow=on_overflow, order=order
    )
    assert_type(service.backend, Literal["rust", "python"])
    assert_type(service.strategy, StrategyName)
    assert_type(service.policy.order, OrderName)
    return service


def reasons(fragments: tuple[ContextFragment, ...]) -> list[DecisionReason]:
    decisions = explain(fragments, 100, strategy="density").decisions
    return [d.reason for d in decisions if d.reason in ("no_room", "not_chosen")]


def counted(encoding: EncodingName) -> tuple[Note, ...]:
    note = Note.from_text("note", "some text", 0.5, counter=encoding)
    assert_type(note, Note)
    renderings = Note.variants("main.py", [("", "def f(): ...", 0.9)], counter=TokenCounter())
    assert_type(renderings, tuple[Note, ...])
    return (note, *renderings)


def adapters_from_settings(strategy: StrategyName, order: OrderName) -> None:
    SkeletonDocumentCompressor(2000, "cl100k_base", strategy=strategy, order=order)
    pack_messages([], skeleton_budget=1000, strategy="density", with_metadata=True)
    SkeletonNodePostprocessor(2000, strategy="optimal", metadata_mode="none")
    SkeletonDocumentPacker(2000, on_overflow="raise", scores="strict", missing_score=0.5)
    SkeletonHistoryProcessor(4000, "o200k_base", strategy=strategy)
