"""Arguments of the wrong shape are refused where they are passed, with a message about them:
a str is no sequence of items (it iterates as characters), and no triple either."""

from __future__ import annotations

from typing import Any

import pytest
from skeleton_compressor import (
    ContextFragment,
    Plan,
    SkeletonCompressorService,
    fragments_from_texts,
)


def characters(text: str) -> int:
    return len(text)


@pytest.mark.parametrize(
    ("renderings", "message"),
    [
        (["abc"], r"renderings\[0\] must be a \(suffix, content, relevance_score\) triple"),
        ([b"abc"], r"renderings\[0\] must be a \(suffix, content, relevance_score\) triple"),
        ([("", "text")], r"renderings\[0\] must be a \(suffix, content, relevance_score\)"),
        ("abc", "renderings must be an iterable of .* triples, got str"),
        (None, "renderings must be an iterable of .* triples, got NoneType"),
        (3, "renderings must be an iterable of .* triples, got int"),
        # The fragments would come in the set's order, which changes with the hash seed.
        ({("", "a", 0.5)}, r"renderings must be .* triples, got set \(a set has no order\)"),
    ],
)
def test_variants_refuses_what_is_no_rendering(renderings: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        ContextFragment.variants("x", renderings, counter=characters)


def test_variants_of_a_subclass_are_of_that_class(service: SkeletonCompressorService) -> None:
    class Note(ContextFragment):
        pass

    made = Note.variants("x", [("", "full text", 0.9), ("#short", "text", 0.5)], counter=len)
    assert [type(f) for f in made] == [Note, Note]
    assert service.compress(made, 100).fragments == (made[0],)


@pytest.mark.parametrize("column", ["fragment_ids", "contents", "relevance_scores"])
@pytest.mark.parametrize("text", ["ab", b"ab", {"a", "b"}, frozenset({0.5, 0.4})])
def test_fragments_from_texts_refuses_a_str_or_a_set_as_a_column(column: str, text: Any) -> None:
    # A set's order is not its rows': its ids would meet other rows' contents.
    columns: dict[str, Any] = {
        "fragment_ids": ["a", "b"],
        "contents": ["x", "y"],
        "relevance_scores": [0.5, 0.5],
    }
    columns[column] = text
    with pytest.raises(TypeError, match=f"{column} must be a column, one item per fragment"):
        fragments_from_texts(**columns, counter=characters)


@pytest.mark.parametrize("relevance", ["a", [("a", 0.5)], 0.5])
def test_a_child_s_relevance_must_be_a_mapping(
    service: SkeletonCompressorService, relevance: Any
) -> None:
    parent = Plan("p", "goal", context=(ContextFragment("a", 1, 0.5),))
    with pytest.raises(TypeError, match="relevance must be None or a Mapping of fragment_id"):
        parent.spawn_subplan("c", "goal", 5, compressor=service, relevance=relevance)
