"""Every public name has a docstring, and so has each public method and property of the
public classes: `help()` shows what it does, its arguments and what it raises."""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterator

import pytest
import skeleton_compressor

PUBLIC = [name for name in skeleton_compressor.__all__ if name != "__version__"]


def _documented(obj: object) -> str:
    return inspect.cleandoc(getattr(obj, "__doc__", None) or "")


def _members() -> Iterator[tuple[str, object]]:
    """Each public class's own public methods and properties (not the dataclass fields, which
    the class's docstring describes, nor what tuple or Exception give)."""
    for name in PUBLIC:
        cls = getattr(skeleton_compressor, name)
        if not isinstance(cls, type):
            continue
        for attribute, member in vars(cls).items():
            if attribute.startswith("_"):
                continue
            if isinstance(member, (classmethod, staticmethod)):
                member = member.__func__
            if isinstance(member, (property, types.GetSetDescriptorType)) or inspect.isroutine(
                member
            ):
                yield f"{name}.{attribute}", member


MEMBERS = dict(_members())


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_is_documented(name: str) -> None:
    obj = getattr(skeleton_compressor, name)
    doc = _documented(obj)
    assert doc, f"{name} has no docstring"
    # A dataclass without a docstring gets its signature as one.
    assert not doc.startswith(f"{name}("), f"{name} has only its generated docstring"


@pytest.mark.parametrize("name", list(MEMBERS))
def test_public_member_is_documented(name: str) -> None:
    assert _documented(MEMBERS[name]), f"{name} has no docstring"


def test_the_walk_finds_the_members_that_matter() -> None:
    expected = {
        "SkeletonCompressorService.compress",
        "SkeletonCompressorService.compress_arrays",
        "SkeletonCompressorService.compress_many",
        "SkeletonCompressorService.explain",
        "SkeletonCompressorService.validate",
        "SkeletonCompressorService.backend",
        "SkeletonCompressor.compress",
        "Plan.spawn_subplan",
        "Plan.rescored",
        "ContextFragment.from_text",
        "SkeletonMetadata.over_budget",
        "SkeletonMetadata.to_dict",
        "TokenCounter.count",
        "TokenCounter.count_many",
        "TokenCounter.encoding",
    }
    assert expected <= set(MEMBERS)


@pytest.mark.parametrize(
    "name", ["compress", "compress_arrays", "explain", "validate_fragments", "fragments_from_texts"]
)
def test_functions_say_what_they_raise(name: str) -> None:
    doc = _documented(getattr(skeleton_compressor, name))
    assert "Raises" in doc or "raise" in doc, name
