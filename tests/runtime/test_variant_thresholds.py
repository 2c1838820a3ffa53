"""Variants past the Rust core's thresholds (the GIL release and the second thread that looks
for duplicates, from 20,000 fragments), and variant names that only the general reading path
takes: each answer the same on both backends, the fallback being checked against the oracle
on small inputs (tests/differential/test_variant_reference.py)."""

from __future__ import annotations

import random

import pytest
from skeleton_compressor import (
    ContextFragment,
    FragmentValueError,
    SkeletonCompressorService,
    compress_arrays,
)

F = ContextFragment
SIZE = 30_000
STRATEGIES = ("greedy", "prefix", "density", "optimal")


def with_variants(size: int, seed: int) -> tuple[ContextFragment, ...]:
    """A third of the fragments in variant sets of two or three renderings (a full text, an
    outline, a summary), some sets a group's rendering, a few settled by a required one."""
    rng = random.Random(seed)
    fragments: list[ContextFragment] = []
    thing = 0
    while len(fragments) < size:
        if rng.random() < 0.2:
            name = f"thing-{thing}"
            thing += 1
            pinned = rng.random() < 0.02
            for rendering in range(rng.choice((2, 3))):
                tokens = rng.randint(1, 2_000) // (1 + 4 * rendering)
                grouped = rendering == 1 and rng.random() < 0.3
                fragments.append(
                    F(
                        f"{name}/{rendering}",
                        tokens,
                        round(rng.random(), 3),
                        required=pinned and rendering == 0,
                        group=f"{name}-group" if grouped else None,
                        variant_of=name,
                    )
                )
                if grouped:
                    fragments.append(
                        F(
                            f"{name}/{rendering}-part",
                            5,
                            0.1,
                            group=f"{name}-group",
                            variant_of=name,
                        )
                    )
        else:
            fragments.append(
                F(f"plain-{len(fragments)}", rng.randint(0, 2_000), round(rng.random(), 3))
            )
    rng.shuffle(fragments)
    return tuple(fragments)


FRAGMENTS = with_variants(SIZE, 7)
TOTAL = sum(f.token_count for f in FRAGMENTS)


def ids(fragments: tuple[ContextFragment, ...]) -> list[str]:
    return [f.fragment_id for f in fragments]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_large_inputs_with_variants_select_alike(strategy: str) -> None:
    rust, python = (
        SkeletonCompressorService(
            backend=backend, strategy=strategy, min_relevance=0.05, max_work=None
        )
        for backend in ("rust", "python")
    )
    # The fallback's optimal takes seconds a budget at this size: two budgets for it. No work
    # limit: the backends agree wherever both finish, and the fallback's default limit stops
    # it short on this input.
    budgets = [0, TOTAL // 50] if strategy == "optimal" else [0, TOTAL // 10, TOTAL // 2, TOTAL]
    many = rust.compress_many(FRAGMENTS, budgets)
    assert many == python.compress_many(FRAGMENTS, budgets)
    units_kept: dict[str, set[str]] = {}
    for f in many[1].fragments:
        if f.variant_of is not None:
            units_kept.setdefault(f.variant_of, set()).add(f.group or f.fragment_id)
    assert units_kept
    assert all(len(units) == 1 for units in units_kept.values())
    explained = rust.explain(FRAGMENTS, budgets[1])
    assert explained == python.explain(FRAGMENTS, budgets[1])
    assert explained.result == many[1]
    reasons = {decision.reason for decision in explained.decisions}
    assert "variant_kept" in reasons
    columns = (
        ids(FRAGMENTS),
        [f.token_count for f in FRAGMENTS],
        [f.relevance_score for f in FRAGMENTS],
    )
    named = {
        "required": [f.required for f in FRAGMENTS],
        "groups": [f.group for f in FRAGMENTS],
        "variants": [f.variant_of for f in FRAGMENTS],
    }
    arrays = [
        compress_arrays(
            *columns,
            budgets[1],
            backend=backend,
            strategy=strategy,
            min_relevance=0.05,
            max_work=None,
            **named,
        )
        for backend in ("rust", "python")
    ]
    assert arrays[0] == arrays[1]
    assert [FRAGMENTS[row].fragment_id for row in arrays[0].indices] == ids(many[1].fragments)


@pytest.mark.parametrize("late", [True, False])
def test_a_late_duplicate_wins_over_an_earlier_broken_variant_rule(late: bool) -> None:
    fragments = list(FRAGMENTS)
    # Two required renderings of one thing (fragments[10] and [20] renamed to share it).
    fragments[10] = F("pinned-a", 3, 0.5, required=True, variant_of="twice")
    fragments[20] = F("pinned-b", 3, 0.5, required=True, variant_of="twice")
    if late:
        fragments[-1] = F(fragments[5].fragment_id, 1, 0.5)
    errors = []
    for backend in ("rust", "python"):
        with pytest.raises(FragmentValueError) as raised:
            SkeletonCompressorService(backend=backend).compress(tuple(fragments), 1_000)
        errors.append(raised.value)
    rust, python = errors
    assert (rust.kind, rust.index, rust.first_index, str(rust)) == (
        python.kind,
        python.index,
        python.first_index,
        str(python),
    )
    if late:
        assert (rust.kind, rust.index, rust.first_index) == ("duplicate", SIZE - 1, 5)
    else:
        assert (rust.kind, rust.index, rust.first_index) == ("variant_required_twice", 20, 10)


class Name(str):
    """A str subclass: read as the str it holds, on the general path."""


class Fragment(ContextFragment):
    """A subclass: read by attribute, not from the slots."""


NAMED = [
    ("outline", "outline"),
    (Name("outline"), "outline"),
    ("out\udc80line", "out\udc80line"),
]


@pytest.mark.parametrize(("name", "plain"), NAMED)
@pytest.mark.parametrize("kind", [F, Fragment])
def test_names_read_on_every_path_make_the_same_sets(
    name: str, plain: str, kind: type[ContextFragment]
) -> None:
    fragments = (
        kind("a-full", 50, 0.9, variant_of=name),
        kind("a-outline", 10, 0.8, variant_of=plain),
        F("b", 30, 0.7),
        kind("c-full", 40, 0.6, variant_of="other"),
        kind("c-outline", 5, 0.5, variant_of="other"),
    )
    for backend in ("rust", "python"):
        service = SkeletonCompressorService(backend=backend)
        result = service.explain(fragments, 60)
        assert ids(result.result.fragments) == ["a-full", "c-outline"]
        reasons = [decision.reason for decision in result.decisions]
        assert reasons == ["fits", "variant_kept", "no_room", "no_room", "fits"]
