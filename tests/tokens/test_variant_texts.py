"""Variants made from text: `from_text(..., variant_of=)`, `fragments_from_texts(...,
variant_of=)` and `ContextFragment.variants(...)`, with a callable counter (no extension
needed)."""

from __future__ import annotations

import pytest
from skeleton_compressor import ContextFragment, SkeletonCompressorService, fragments_from_texts

F = ContextFragment


def words(text: str) -> int:
    return len(text.split())


def test_from_text_sets_variant_of() -> None:
    made = F.from_text("a", "x y z", 0.5, counter=words, variant_of="file")
    assert made == F("a", 3, 0.5, "x y z", variant_of="file")
    assert F.from_text("a", "x", 0.5, counter=words).variant_of is None


def test_fragments_from_texts_takes_a_variant_of_column() -> None:
    made = fragments_from_texts(
        ["a", "b", "c"],
        ["x y", "x", "z"],
        [0.9, 0.5, 0.1],
        counter=words,
        variant_of=iter(["f", "f", None]),
    )
    assert made == (
        F("a", 2, 0.9, "x y", variant_of="f"),
        F("b", 1, 0.5, "x", variant_of="f"),
        F("c", 1, 0.1, "z"),
    )


def test_fragments_from_texts_rejects_a_bad_variant_of_column() -> None:
    with pytest.raises(ValueError) as lengths:
        fragments_from_texts(["a", "b"], ["x", "y"], [0.5, 0.5], counter=words, variant_of=["f"])
    assert str(lengths.value) == (
        "fragment_ids, contents, relevance_scores and variant_of must have one length, "
        "got 2, 2, 2 and 1"
    )
    with pytest.raises(TypeError) as single:
        fragments_from_texts(["a"], ["x"], [0.5], counter=words, variant_of="f")
    assert str(single.value) == (
        "variant_of must be a column of None or str, one per fragment, got a str"
    )
    with pytest.raises(TypeError) as text:
        fragments_from_texts(["a", "b"], ["x", "y"], [0.5, 0.5], counter=words, variant_of=b"f")
    assert str(text.value).endswith("one per fragment, got a bytes")
    with pytest.raises(TypeError) as unordered:
        fragments_from_texts(["a"], ["x"], [0.5], counter=words, variant_of={"f"})
    assert str(unordered.value) == (
        "variant_of must be a column of None or str, one per fragment, got a set (a set has "
        "no order)"
    )


def test_variants_joins_ids_as_the_plain_strs_they_hold() -> None:
    class OwnAdd(str):
        def __add__(self, other: object) -> str:
            return "made by the subclass"

        def __radd__(self, other: object) -> str:
            return "made by the subclass"

    made = F.variants(OwnAdd("base"), [(OwnAdd(""), "abc", 0.5), ("#o", "a", 0.4)], counter=len)
    assert [fragment.fragment_id for fragment in made] == ["base", "base#o"]


def test_variants_fills_ids_counts_and_variant_of() -> None:
    made = F.variants(
        "main.py",
        [("", "def f(): return 1", 0.9), ("#outline", "def f()", 0.6), ("#name", "f", 0.2)],
        counter=words,
    )
    assert made == (
        F("main.py", 4, 0.9, "def f(): return 1", variant_of="main.py"),
        F("main.py#outline", 2, 0.6, "def f()", variant_of="main.py"),
        F("main.py#name", 1, 0.2, "f", variant_of="main.py"),
    )
    assert F.variants("x", [], counter=words) == ()


@pytest.mark.parametrize(
    ("renderings", "message"),
    [
        (
            [("", "text")],
            "renderings[0] must be a (suffix, content, relevance_score) triple "
            "with a str suffix, got ('', 'text')",
        ),
        (
            ["abc"],
            "renderings[0] must be a (suffix, content, relevance_score) triple "
            "with a str suffix, got 'abc'",
        ),
        (
            [("", "a", 0.5), (1, "b", 0.5)],
            "renderings[1] must be a (suffix, content, "
            "relevance_score) triple with a str suffix, got (1, 'b', 0.5)",
        ),
    ],
)
def test_variants_rejects_what_is_not_a_rendering(renderings: list[object], message: str) -> None:
    with pytest.raises(TypeError) as info:
        F.variants("x", renderings, counter=words)  # type: ignore[arg-type]
    assert str(info.value) == message
    with pytest.raises(TypeError) as base:
        F.variants(3, [("", "a", 0.5)], counter=words)  # type: ignore[arg-type]
    assert str(base.value) == "base_id must be a str, got int"


def test_a_file_degrades_to_its_outline() -> None:
    """The helper's fragments compress as variants: the outline when the whole file does not
    fit, the whole file when it does, never both."""
    made = F.variants(
        "main.py", [("", "a b c d e f g h", 0.9), ("#outline", "a b", 0.6)], counter=words
    )
    service = SkeletonCompressorService(backend="python")
    assert [f.fragment_id for f in service.compress(made, 5).fragments] == ["main.py#outline"]
    assert [f.fragment_id for f in service.compress(made, 100).fragments] == ["main.py"]
