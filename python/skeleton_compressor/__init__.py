"""skeleton-compressor: pick the context a child plan inherits from its parent.

The most relevant fragments that fit the child's token budget, in one deterministic order,
with metadata saying what the compression did.
"""

from __future__ import annotations

from .errors import BudgetExceededError, FragmentError, FragmentTypeError, FragmentValueError
from .plan import Plan
from .pricing import CacheCost, CachePricing, estimate_cost
from .protocol import SkeletonCompressor
from .service import (
    SkeletonCompressorService,
    compress,
    compress_arrays,
    compress_siblings,
    explain,
    validate_fragments,
)
from .siblings import Child, SiblingsResult
from .text_fragments import fragments_from_texts
from .tokens import TokenCounter
from .types import (
    BackendName,
    ContextFragment,
    DecisionReason,
    EncodingName,
    FragmentDecision,
    OnOverflowName,
    OrderName,
    SkeletonExplanation,
    SkeletonIndices,
    SkeletonMetadata,
    SkeletonResult,
    StrategyName,
)
from .validation import DEFAULT_MAX_WORK

# Cargo.toml's version: compiled into the extension, and given to the distribution by maturin.
try:
    from ._core import __version__
except ImportError:
    from importlib.metadata import version as _distribution_version

    __version__ = _distribution_version("skeleton-compressor")

__all__ = [
    "DEFAULT_MAX_WORK",
    "BackendName",
    "BudgetExceededError",
    "CacheCost",
    "CachePricing",
    "Child",
    "ContextFragment",
    "DecisionReason",
    "EncodingName",
    "FragmentDecision",
    "FragmentError",
    "FragmentTypeError",
    "FragmentValueError",
    "OnOverflowName",
    "OrderName",
    "Plan",
    "SiblingsResult",
    "SkeletonCompressor",
    "SkeletonCompressorService",
    "SkeletonExplanation",
    "SkeletonIndices",
    "SkeletonMetadata",
    "SkeletonResult",
    "StrategyName",
    "TokenCounter",
    "__version__",
    "compress",
    "compress_arrays",
    "compress_siblings",
    "estimate_cost",
    "explain",
    "fragments_from_texts",
    "validate_fragments",
]
