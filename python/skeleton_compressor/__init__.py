"""skeleton-compressor: pick the context a child plan inherits from its parent.

The most relevant fragments that fit the child's token budget, in one deterministic order,
with metadata saying what the compression did.
"""

from __future__ import annotations

from .plan import Plan
from .protocol import SkeletonCompressor
from .service import (
    SkeletonCompressorService,
    compress,
    compress_arrays,
    validate_fragments,
)
from .types import ContextFragment, SkeletonIndices, SkeletonMetadata, SkeletonResult

__version__ = "0.1.0"

__all__ = [
    "ContextFragment",
    "Plan",
    "SkeletonCompressor",
    "SkeletonCompressorService",
    "SkeletonIndices",
    "SkeletonMetadata",
    "SkeletonResult",
    "__version__",
    "compress",
    "compress_arrays",
    "validate_fragments",
]
