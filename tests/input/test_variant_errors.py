"""Bad variants, on both backends: each check's kind, index, first index and message, where it
comes in the order of checks (per fragment after `group`; the variant rules after duplicate
ids), and which fragment is named when units have several members.

The Rust core does not check variants yet: its cases fail until it does (run `-k python`).
"""

from __future__ import annotations

from typing import Any

import pytest
from skeleton_compressor import (
    ContextFragment,
    FragmentError,
    FragmentTypeError,
    FragmentValueError,
    SkeletonCompressorService,
)

F = ContextFragment


def caught(call: Any) -> FragmentError:
    with pytest.raises(FragmentError) as info:
        call()
    return info.value


def where(error: FragmentError) -> tuple[str, int, str | None, int | None, str]:
    return error.kind, error.index, error.fragment_id, error.first_index, error.container


def test_a_bad_group_is_told_before_a_bad_variant(service: SkeletonCompressorService) -> None:
    error = caught(lambda: service.compress((F("a", 1, 0.5, group=7, variant_of=3),), 5))  # type: ignore[arg-type]
    assert where(error) == ("group_type", 0, "a", None, "fragments")


def test_a_bad_variant_is_told_before_a_later_fragment(service: SkeletonCompressorService) -> None:
    fragments = (F("a", 1, 0.5, variant_of=""), F("b", -1, 0.5))
    error = caught(lambda: service.compress(fragments, 5))
    assert type(error) is FragmentValueError
    assert where(error) == ("variant_empty", 0, "a", None, "fragments")


def test_duplicate_ids_are_told_before_the_variant_rules(
    service: SkeletonCompressorService,
) -> None:
    fragments = (
        F("a", 1, 0.5, required=True, variant_of="v"),
        F("b", 1, 0.5, required=True, variant_of="v"),
        F("a", 1, 0.5),
    )
    assert where(caught(lambda: service.compress(fragments, 5))) == (
        "duplicate",
        2,
        "a",
        0,
        "fragments",
    )


def test_a_mismatch_is_told_before_a_second_required_unit(
    service: SkeletonCompressorService,
) -> None:
    fragments = (
        F("a", 1, 0.5, required=True, variant_of="v"),
        F("b", 1, 0.5, required=True, variant_of="v"),
        F("c", 1, 0.5, group="g", variant_of="v"),
        F("d", 1, 0.5, group="g", variant_of="w"),
    )
    assert where(caught(lambda: service.compress(fragments, 5))) == (
        "variant_group_mismatch",
        3,
        "d",
        2,
        "fragments",
    )


def test_the_first_member_that_differs_in_input_order_is_named(
    service: SkeletonCompressorService,
) -> None:
    # Group h's mismatch (at 3) comes before group g's (at 4) in input order.
    fragments = (
        F("g1", 1, 0.5, group="g"),
        F("h1", 1, 0.5, group="h", variant_of="x"),
        F("g2", 1, 0.5, group="g"),
        F("h2", 1, 0.5, group="h", variant_of="y"),
        F("g3", 1, 0.5, group="g", variant_of="x"),
    )
    error = caught(lambda: service.compress(fragments, 5))
    assert where(error) == ("variant_group_mismatch", 3, "h2", 1, "fragments")
    assert str(error) == (
        "fragments[3] (id 'h2'): variant_of 'y' differs from 'x', the variant_of of "
        "fragments[1] in group 'h': a group's members share one variant_of"
    )


def test_a_second_required_unit_is_named_at_its_first_required_member(
    service: SkeletonCompressorService,
) -> None:
    """Unit g (members 0 and 3, only 3 required) and unit b (2, required) share a set: b's
    first required member comes first, so the error is at 3, the later unit's."""
    fragments = (
        F("g1", 1, 0.5, group="g", variant_of="v"),
        F("other", 1, 0.5),
        F("b", 1, 0.5, required=True, variant_of="v"),
        F("g2", 1, 0.5, group="g", required=True, variant_of="v"),
        F("g3", 1, 0.5, group="g", required=True, variant_of="v"),
    )
    error = caught(lambda: service.compress(fragments, 5))
    assert where(error) == ("variant_required_twice", 3, "g2", 2, "fragments")
    assert str(error) == (
        "fragments[3] (id 'g2'): required, and so is fragments[2] of another unit with "
        "variant_of 'v': at most one unit of a variant set can be required"
    )


def test_two_required_members_of_one_unit_are_one_required_unit(
    service: SkeletonCompressorService,
) -> None:
    fragments = (
        F("g1", 1, 0.5, group="g", required=True, variant_of="v"),
        F("g2", 1, 0.5, group="g", required=True, variant_of="v"),
        F("other", 1, 0.9, variant_of="v"),
    )
    result = service.explain(fragments, 5)
    assert [(d.kept, d.reason) for d in result.decisions] == [
        (True, "required"),
        (True, "required"),
        (False, "variant_kept"),
    ]


def test_validate_and_compress_many_check_the_variant_rules(
    service: SkeletonCompressorService,
) -> None:
    fragments = (
        F("a", 1, 0.5, required=True, variant_of="v"),
        F("b", 1, 0.5, required=True, variant_of="v"),
    )
    for call in (
        lambda: service.validate(fragments),
        lambda: service.compress_many(fragments, [1, 2]),
        lambda: service.explain(fragments, 1),
    ):
        assert where(caught(call)) == ("variant_required_twice", 1, "b", 0, "fragments")


@pytest.mark.parametrize(
    ("variants", "expected", "error_type"),
    [
        ([None, 3], ("variant_type", 1, "b", None, "rows"), FragmentTypeError),
        ([None, ""], ("variant_empty", 1, "b", None, "rows"), FragmentValueError),
    ],
)
def test_rows_are_checked_as_fragments_are(
    service: SkeletonCompressorService,
    variants: list[Any],
    expected: tuple[Any, ...],
    error_type: type,
) -> None:
    error = caught(
        lambda: service.compress_arrays(["a", "b"], [1, 1], [0.5, 0.5], 5, variants=variants)
    )
    assert type(error) is error_type
    assert where(error) == expected


def test_the_variant_rules_on_rows(service: SkeletonCompressorService) -> None:
    columns = (["a", "b", "c"], [1, 1, 1], [0.5, 0.5, 0.5], 5)
    mismatch = caught(
        lambda: service.compress_arrays(
            *columns, groups=["g", None, "g"], variants=["v", None, None]
        )
    )
    assert where(mismatch) == ("variant_group_mismatch", 2, "c", 0, "rows")
    assert str(mismatch).startswith("rows[2] (id 'c'): variant_of None differs from 'v', ")
    twice = caught(
        lambda: service.compress_arrays(
            *columns, required=[True, False, True], variants=["v", "v", "v"]
        )
    )
    assert where(twice) == ("variant_required_twice", 2, "c", 0, "rows")


def test_a_variants_column_of_another_length(service: SkeletonCompressorService) -> None:
    with pytest.raises(ValueError) as info:
        service.compress_arrays(["a", "b"], [1, 1], [0.5, 0.5], 5, variants=["v"])
    assert str(info.value) == (
        "fragment_ids, token_counts, relevance_scores and variants must have one length, "
        "got 2, 2, 2 and 1"
    )
    with pytest.raises(TypeError) as type_info:
        service.compress_arrays(["a", "b"], [1, 1], [0.5, 0.5], 5, variants="vv")
    assert str(type_info.value) == "variants must be a sequence of None or str, got str"
