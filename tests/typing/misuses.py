"""Mistakes mypy --strict must refuse, each marked with the error it must give: strict mode
reports an ignore that nothing needed, so `python -m mypy` fails if any one of them passes,
and tests/api/test_typing.py checks each line's error code without the ignores."""

from __future__ import annotations

from skeleton_compressor import (
    Child,
    ContextFragment,
    SkeletonCompressorService,
    SkeletonMetadata,
    TokenCounter,
    compress,
    compress_arrays,
    compress_siblings,
    explain,
    validate_fragments,
)
from skeleton_compressor.integrations.haystack import SkeletonDocumentPacker
from skeleton_compressor.integrations.langchain import SkeletonDocumentCompressor, pack_messages
from skeleton_compressor.integrations.llamaindex import SkeletonNodePostprocessor
from skeleton_compressor.integrations.pydantic_ai import SkeletonHistoryProcessor

FRAGMENTS = (ContextFragment("a", 10, 0.9),)


def misspelt_names(name: str) -> None:
    SkeletonCompressorService(strategy="best")  # type: ignore[arg-type]
    SkeletonCompressorService(backend="gpu")  # type: ignore[arg-type]
    SkeletonCompressorService(strategy=name)  # type: ignore[arg-type]
    compress(FRAGMENTS, 10, on_overflow="ignore")  # type: ignore[arg-type]
    compress(FRAGMENTS, 10, order="random")  # type: ignore[arg-type]
    explain(FRAGMENTS, 10, strategy="Greedy")  # type: ignore[arg-type]
    compress_arrays(["a"], [1], [0.5], 10, backend="c")  # type: ignore[arg-type]
    compress_siblings(FRAGMENTS, [Child(10)], strategy="fast")  # type: ignore[arg-type]
    validate_fragments(FRAGMENTS, backend="fortran")  # type: ignore[arg-type]
    TokenCounter("p50k_base")  # type: ignore[arg-type]
    ContextFragment.from_text("a", "text", 0.5, counter="gpt2")  # type: ignore[arg-type]


def optional_values(metadata: SkeletonMetadata) -> None:
    print(metadata.value_kept / metadata.value_bound)  # type: ignore[operator]
    print(metadata.kept_share * 100)  # type: ignore[operator]


def names_given_back(service: SkeletonCompressorService) -> None:
    if service.backend == "auto":  # type: ignore[comparison-overlap]
        print("never: the backend in use is rust or python")
    decision = explain(FRAGMENTS, 10).decisions[0]
    if decision.reason == "fit":  # type: ignore[comparison-overlap]
        print("never: the reason is fits")


def a_str_is_no_rendering() -> None:
    ContextFragment.variants("x", ["abc"])  # type: ignore[list-item]


def misspelt_adapter_options() -> None:
    SkeletonDocumentCompressor(2000, strategy="best")  # type: ignore[arg-type]
    SkeletonDocumentCompressor(2000, token_counter="gpt2")  # type: ignore[arg-type]
    pack_messages([], skeleton_budget=1000, strategy="newest")  # type: ignore[call-overload]
    SkeletonNodePostprocessor(2000, on_overflow="drop")  # type: ignore[arg-type]
    SkeletonNodePostprocessor(2000, metadata_mode="text")  # type: ignore[arg-type]
    SkeletonDocumentPacker(2000, backend="gpu")  # type: ignore[arg-type]
    SkeletonDocumentPacker(2000, scores="minmax")  # type: ignore[arg-type]
    SkeletonHistoryProcessor(4000, strategy="fast")  # type: ignore[arg-type]
