"""The Rust side: everything the compiled extension takes from Python.

The bindings import this module, the one module of the package they import, and look these
up by string, so a rename here breaks the extension only when it runs;
`tests/api/test_for_core.py` checks that the names the Rust sources look up
are these.
"""

from __future__ import annotations

from .._messages import (
    budget_exceeded_error,
    column_lengths_error,
    duplicate_error,
    fragment_error,
    text_type_error,
    texts_type_error,
    unknown_encoding_error,
    unreadable_error,
    variant_group_mismatch_error,
    variant_required_twice_error,
)
from .._records.errors import RecordsError
from ..types import ContextFragment, SkeletonMetadata, SkeletonResult
from .protocol import CompressedRecords

__all__ = [
    "CompressedRecords",
    "ContextFragment",
    "RecordsError",
    "SkeletonMetadata",
    "SkeletonResult",
    "budget_exceeded_error",
    "column_lengths_error",
    "duplicate_error",
    "fragment_error",
    "text_type_error",
    "texts_type_error",
    "unknown_encoding_error",
    "unreadable_error",
    "variant_group_mismatch_error",
    "variant_required_twice_error",
]
