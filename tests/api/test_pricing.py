"""`CachePricing`, `estimate_cost` and `CacheCost`: the cost of a plan of requests with prompt
caching, against a direct computation over every pair of requests written from the rule
alone, on generated plans and on hand-worked ones; the closed forms; every check.

Pricing is pure Python and calls neither backend, so these tests run once, not once per
backend.
"""

from __future__ import annotations

import dataclasses
import doctest
import math
import pickle
import tracemalloc
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any, overload

import pytest
import skeleton_compressor.pricing
from hypothesis import given, settings
from hypothesis import strategies as st
from skeleton_compressor import (
    CacheCost,
    CachePricing,
    ContextFragment,
    FragmentTypeError,
    FragmentValueError,
    SkeletonMetadata,
    SkeletonResult,
    estimate_cost,
)

Plan = list[list[ContextFragment]]


def _shared_tokens(first: Sequence[ContextFragment], second: Sequence[ContextFragment]) -> int:
    tokens = 0
    for a, b in zip(first, second):
        if (a.fragment_id, a.token_count, a.content) != (b.fragment_id, b.token_count, b.content):
            break
        tokens += a.token_count
    return tokens


def reference_cost(requests: Plan, pricing: CachePricing) -> tuple[float, int, int, int]:
    """The rule as written, comparing every pair of requests, billed summed request by request."""
    billed, uncached, cached_total, written_total = 0.0, 0, 0, 0
    for j, request in enumerate(requests):
        tokens = sum(fragment.token_count for fragment in request)
        earlier = max((_shared_tokens(request, other) for other in requests[:j]), default=0)
        later = max((_shared_tokens(request, other) for other in requests[j + 1 :]), default=0)
        cached = earlier if earlier >= pricing.min_prefix else 0
        longest_later = later if later >= pricing.min_prefix else 0
        written = max(0, longest_later - cached)
        billed += pricing.read * cached + pricing.write * written + (tokens - cached - written)
        uncached += tokens
        cached_total += cached
        written_total += written
    return billed, uncached, cached_total, written_total


def assert_matches_reference(requests: Plan, pricing: CachePricing) -> CacheCost:
    cost = estimate_cost(requests, pricing)
    billed, uncached, cached, written = reference_cost(requests, pricing)
    assert (cost.uncached, cost.cached_tokens, cost.written_tokens) == (uncached, cached, written)
    assert math.isclose(cost.billed, billed, rel_tol=1e-12, abs_tol=1e-9)
    return cost


# A few ids, token counts (0 included) and contents, so that requests often share leading
# fragments, and fragments that share an id often differ in tokens or content.
fragments = st.builds(
    ContextFragment,
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from([0, 1, 7, 300, 700, 1024]),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.sampled_from(["", "text"]),
)
pricings = st.builds(
    CachePricing,
    st.sampled_from([0.0, 1.0, 1.25, 2.0, 3.5]),
    st.sampled_from([0.0, 0.1, 0.25, 1.0]),
    st.sampled_from([0, 1, 7, 1024, 2000, 10**9]),
)


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    """Requests drawn from a small pool, and copies of earlier requests with a changed tail,
    as siblings and successive turns are."""
    pool = draw(st.lists(fragments, min_size=1, max_size=6))
    requests: Plan = []
    for _ in range(draw(st.integers(0, 7))):
        if len(requests) > 0 and draw(st.booleans()):
            base = draw(st.sampled_from(requests))
            keep = draw(st.integers(0, len(base)))
            tail = draw(st.lists(st.sampled_from(pool), max_size=3))
            requests.append([*base[:keep], *tail])
        else:
            requests.append(draw(st.lists(st.sampled_from(pool), max_size=6)))
    return requests


@settings(max_examples=500, deadline=None)
@given(plans(), pricings)
def test_matches_the_pairwise_computation(requests: Plan, pricing: CachePricing) -> None:
    assert_matches_reference(requests, pricing)


@settings(max_examples=100, deadline=None)
@given(plans(), pricings, st.randoms(use_true_random=False))
def test_relevance_does_not_make_fragments_differ(
    requests: Plan, pricing: CachePricing, random: Any
) -> None:
    rescored = [
        [dataclasses.replace(f, relevance_score=random.random()) for f in request]
        for request in requests
    ]
    assert estimate_cost(rescored, pricing) == estimate_cost(requests, pricing)


def test_a_hand_worked_plan() -> None:
    a, b, c = (
        ContextFragment("a", 100, 0.9),
        ContextFragment("b", 200, 0.8),
        ContextFragment("c", 50, 0.7),
    )
    d, e = ContextFragment("d", 60, 0.6), ContextFragment("e", 70, 0.5)
    # First: writes a+b (300), which the second reads; the second writes nothing beyond what
    # it read (the third shares only a with it); the third reads a (100).
    cost = estimate_cost([(a, b, c), (a, b, d), (a, e)], CachePricing(min_prefix=0))
    assert cost == CacheCost(1.25 * 300 + 50 + 0.1 * 300 + 60 + 0.1 * 100 + 70, 880, 400, 300)
    assert cost.ratio == cost.billed / 880
    # With 200 tokens the minimum, the third request's 100 shared tokens are plain input.
    assert estimate_cost([(a, b, c), (a, b, d), (a, e)], CachePricing(min_prefix=200)) == CacheCost(
        1.25 * 300 + 50 + 0.1 * 300 + 60 + 170, 880, 300, 300
    )


def test_a_request_writes_only_beyond_what_it_read() -> None:
    a, b, c = (
        ContextFragment("a", 1000, 0.9),
        ContextFragment("b", 500, 0.8),
        ContextFragment("c", 9, 0.1),
    )
    pricing = CachePricing(min_prefix=0)
    # The second reads a from the first, and writes b for the third.
    cost = estimate_cost([(a, c), (a, b, c), (a, b)], pricing)
    assert (cost.cached_tokens, cost.written_tokens) == (1000 + 1500, 1000 + 500)
    assert_matches_reference([[a, c], [a, b, c], [a, b]], pricing)


@pytest.mark.parametrize("count", [2, 3, 5, 20])
@pytest.mark.parametrize(
    "pricing",
    [
        CachePricing(),
        CachePricing.anthropic("1h"),
        CachePricing.gemini(),
        CachePricing(3.0, 0.5, 0),
    ],
    ids=repr,
)
def test_identical_requests_cost_one_write_and_reads(count: int, pricing: CachePricing) -> None:
    request = (ContextFragment("system", 3000, 1.0), ContextFragment("repo", 2500, 0.5))
    cost = estimate_cost([request] * count, pricing)
    assert math.isclose(cost.ratio, (pricing.write + (count - 1) * pricing.read) / count)
    assert (cost.written_tokens, cost.cached_tokens) == (5500, 5500 * (count - 1))


def test_one_request_alone_is_plain_input() -> None:
    cost = estimate_cost([(ContextFragment("a", 5000, 1.0),)])
    assert cost == CacheCost(5000.0, 5000, 0, 0)
    assert cost.ratio == 1.0


@pytest.mark.parametrize("count", [1, 2, 6])
def test_nothing_shared_costs_what_it_costs_uncached(count: int) -> None:
    requests = [
        (ContextFragment(f"own-{j}", 4000, 0.5), ContextFragment("common", 4000, 0.5))
        for j in range(count)
    ]
    cost = estimate_cost(requests)
    assert cost == CacheCost(8000.0 * count, 8000 * count, 0, 0)
    assert cost.ratio == 1.0


@pytest.mark.parametrize(
    "other",
    [
        ContextFragment("b", 2000, 0.5, "text"),  # another id
        ContextFragment("a", 2001, 0.5, "text"),  # another token count
        ContextFragment("a", 2000, 0.5, "text!"),  # another content
    ],
    ids=["id", "token_count", "content"],
)
def test_fragments_differing_in_a_rendered_field_are_not_the_same(other: ContextFragment) -> None:
    first = ContextFragment("a", 2000, 0.5, "text")
    assert estimate_cost([(first,), (other,)]).ratio == 1.0


def test_fragments_differing_only_in_what_is_not_rendered_are_the_same() -> None:
    first = ContextFragment("a", 2000, 0.5, "text")
    second = ContextFragment("a", 2000, 0.1, "text", required=True, group="g", variant_of="v")
    assert estimate_cost([(first,), (second,)]) == estimate_cost([(first,), (first,)])
    assert estimate_cost([(first,), (second,)]).cached_tokens == 2000


def test_str_subclasses_are_read_as_the_text_they_hold() -> None:
    class Text(str):
        def __eq__(self, other: object) -> bool:
            return False

        __hash__ = str.__hash__

    plain = ContextFragment("a", 2000, 0.5, "text")
    subclassed = ContextFragment(Text("a"), 2000, 0.5, Text("text"))
    assert estimate_cost([(plain,), (subclassed,)]).cached_tokens == 2000


@pytest.mark.parametrize("shortfall", [0, 1])
def test_the_minimum_prefix_is_inclusive(shortfall: int) -> None:
    request = (ContextFragment("a", 1024 - shortfall, 1.0),)
    cost = estimate_cost([request, request])
    assert cost.cached_tokens == (0 if shortfall else 1024)
    assert cost.written_tokens == (0 if shortfall else 1024)


def test_no_requests_and_empty_requests_cost_nothing() -> None:
    assert estimate_cost([]) == CacheCost(0.0, 0, 0, 0)
    assert estimate_cost([(), []]).ratio == 1.0
    zero = (ContextFragment("a", 0, 1.0),)
    assert estimate_cost([zero, zero], CachePricing(min_prefix=0)) == CacheCost(0.0, 0, 0, 0)


class _Request(Sequence[ContextFragment]):
    """A sequence that is neither a list nor a tuple."""

    def __init__(self, items: list[ContextFragment]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> ContextFragment: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ContextFragment]: ...
    def __getitem__(self, index: int | slice) -> ContextFragment | Sequence[ContextFragment]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)


def test_any_iterable_of_any_sequences_is_read() -> None:
    a, b = ContextFragment("a", 1500, 0.9), ContextFragment("b", 600, 0.4)
    expected = estimate_cost([(a, b), (a,), (a, b)])
    result = SkeletonResult((a, b), SkeletonMetadata(2100, 2100, 1.0))

    def generated() -> Iterator[Sequence[ContextFragment]]:
        yield result.fragments
        yield _Request([a])
        yield [a, b]

    assert estimate_cost(generated()) == expected
    assert estimate_cost(((a, b), [a], _Request([a, b]))) == expected


def test_the_module_examples_run() -> None:
    failures, tried = doctest.testmod(skeleton_compressor.pricing)
    assert (failures, tried > 0) == (0, True)


# Checks.

GOOD = ContextFragment("a", 10, 0.5)


@pytest.mark.parametrize(
    ("requests", "pattern"),
    [
        (5, r"^requests must be an iterable of sequences of ContextFragment, got int$"),
        (None, r"got NoneType$"),
        ("ab", r"got str$"),
        ({(GOOD,), ()}, r"got set \(a set has no order\)$"),
        (frozenset({(GOOD,)}), r"got frozenset \(a set has no order\)$"),
        (GOOD, r"got ContextFragment$"),
        ([(GOOD,), 3], r"^requests\[1\] must be a sequence of ContextFragment, got int$"),
        ([(GOOD,), "ab"], r"^requests\[1\] must be a sequence of ContextFragment, got str$"),
        ([(GOOD,), {GOOD}], r"^requests\[1\] .* got set \(a set has no order\)$"),
        ([GOOD], r"^requests\[0\] must be a sequence of ContextFragment, got ContextFragment$"),
        (
            [SkeletonResult((GOOD,), SkeletonMetadata(10, 10, 1.0))],
            r"^requests\[0\] .* got SkeletonResult \(pass its \.fragments\)$",
        ),
        (
            [(GOOD,), [GOOD, "x"]],
            r"^requests\[1\]\[1\] must be a ContextFragment, got 'x' \(str\)$",
        ),
        (
            [[ContextFragment(5, 10, 0.5)]],  # type: ignore[arg-type]
            r"^requests\[0\]\[0\]: fragment_id must be a str, got 5 \(int\)$",
        ),
        (
            [[GOOD, ContextFragment("b", "10", 0.5)]],  # type: ignore[arg-type]
            r"^requests\[0\]\[1\] \(id 'b'\): token_count must be an int, got '10' \(str\)$",
        ),
        (
            [[ContextFragment("b", True, 0.5)]],
            r"^requests\[0\]\[0\] \(id 'b'\): token_count must be an int",
        ),
        (
            [[ContextFragment("b", 10, 0.5, None)]],  # type: ignore[arg-type]
            r"^requests\[0\]\[0\] \(id 'b'\): content must be a str, got NoneType$",
        ),
    ],
)
def test_bad_requests_are_type_errors_naming_the_place(requests: Any, pattern: str) -> None:
    with pytest.raises(TypeError, match=pattern):
        estimate_cost(requests)


@pytest.mark.parametrize(
    ("fragment", "pattern"),
    [
        (ContextFragment("", 10, 0.5), r"^requests\[0\]\[0\]: fragment_id must be non-empty$"),
        (ContextFragment("b", -1, 0.5), r"\(id 'b'\): token_count must be >= 0, got -1$"),
        (ContextFragment("b", 2**63, 0.5), r"token_count must be <= 2\*\*63 - 1"),
    ],
)
def test_bad_values_are_value_errors_naming_the_place(
    fragment: ContextFragment, pattern: str
) -> None:
    with pytest.raises(FragmentValueError, match=pattern):
        estimate_cost([[fragment]])


def test_fragment_errors_are_the_library_s() -> None:
    with pytest.raises(FragmentTypeError) as caught:
        estimate_cost([[GOOD], [GOOD, 3]])  # type: ignore[list-item]
    error = caught.value
    assert (error.kind, error.index, error.container) == ("not_fragment", 1, "requests[1]")


def test_a_bad_request_after_good_ones_is_found_before_anything_is_returned() -> None:
    def generated() -> Iterator[object]:
        yield [GOOD] * 3
        yield [GOOD] * 3
        yield 7

    with pytest.raises(TypeError, match=r"^requests\[2\]"):
        estimate_cost(generated())  # type: ignore[arg-type]


@pytest.mark.parametrize("pricing", [None, {"write": 1.25}, (1.25, 0.1, 1024), "anthropic"])
def test_pricing_must_be_cache_pricing(pricing: Any) -> None:
    with pytest.raises(TypeError, match=r"^pricing must be a CachePricing, got "):
        estimate_cost([[GOOD]], pricing)


@pytest.mark.parametrize("field", ["write", "read"])
@pytest.mark.parametrize(
    ("value", "error", "pattern"),
    [
        ("1", TypeError, r"must be a real number, got str$"),
        (None, TypeError, r"must be a real number, got NoneType$"),
        (True, TypeError, r"must be a real number, got bool$"),
        (1j, TypeError, r"must be a real number, got complex$"),
        (-0.5, ValueError, r"must be a finite number >= 0, got -0\.5$"),
        (-1, ValueError, r"must be a finite number >= 0, got -1$"),
        (math.nan, ValueError, r"must be a finite number >= 0, got nan$"),
        (math.inf, ValueError, r"must be a finite number >= 0, got inf$"),
        (10**400, ValueError, r"must be a finite number >= 0, got 10{76}\.\.\.$"),
    ],
)
def test_prices_are_checked(
    field: str, value: object, error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=f"^{field} {pattern}"):
        CachePricing(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "error", "pattern"),
    [
        (1024.0, TypeError, r"^min_prefix must be an int, got float$"),
        (True, TypeError, r"^min_prefix must be an int, got bool$"),
        ("1024", TypeError, r"^min_prefix must be an int, got str$"),
        (None, TypeError, r"^min_prefix must be an int, got NoneType$"),
        (-1, ValueError, r"^min_prefix must be >= 0, got -1$"),
    ],
)
def test_the_minimum_prefix_is_checked(value: object, error: type[Exception], pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        CachePricing(min_prefix=value)  # type: ignore[arg-type]


def test_prices_are_kept_as_plain_numbers() -> None:
    class Count(int):
        pass

    pricing = CachePricing(write=2, read=Fraction(1, 4), min_prefix=Count(512))  # type: ignore[arg-type]
    assert (pricing.write, pricing.read, pricing.min_prefix) == (2.0, 0.25, 512)
    assert (type(pricing.write), type(pricing.read), type(pricing.min_prefix)) == (
        float,
        float,
        int,
    )
    assert math.copysign(1.0, CachePricing(read=-0.0).read) == 1.0
    assert CachePricing(0, 0, 0) == CachePricing(0.0, 0.0, 0)

    class OwnInt(int):
        def __float__(self) -> float:
            return 0.5

    class OwnFloat(float):
        def __float__(self) -> float:
            return 99.0

    # An int or float subclass is read as the plain value it holds.
    pricing = CachePricing(write=OwnInt(3), read=OwnFloat(0.1))
    assert (pricing.write, pricing.read) == (3.0, 0.1)


def test_a_billed_total_past_a_float_is_said_as_such() -> None:
    fragment = ContextFragment("h", 2**63 - 1, 0.5)
    with pytest.raises(ValueError, match=r"^the billed total is past the largest float at"):
        estimate_cost([(fragment,)] * 3, CachePricing(write=1e300, read=1e300))


def test_a_str_subclass_content_is_made_plain_once_per_object() -> None:
    # A content in every request (numpy's str_, as fragments_from_texts makes of an array)
    # is copied to a plain str once, not once per request.
    class Text(str):
        pass

    fragment = ContextFragment("doc", 250_000, 0.5, Text("x" * 1_000_000))
    tracemalloc.start()
    try:
        cost = estimate_cost([(fragment,)] * 200)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert cost.cached_tokens == 199 * 250_000
    assert peak < 20 * 1_000_000, f"{peak / 1e6:.0f} MB"


def test_the_defaults_and_the_presets() -> None:
    assert CachePricing() == CachePricing(1.25, 0.1, 1024)
    assert CachePricing.anthropic() == CachePricing.anthropic("5m") == CachePricing(1.25, 0.1, 1024)
    assert CachePricing.anthropic("1h") == CachePricing(2.0, 0.1, 1024)
    assert CachePricing.openai() == CachePricing(1.25, 0.1, 1024)
    assert CachePricing.gemini() == CachePricing(1.0, 0.1, 4096)


@pytest.mark.parametrize("preset", ["anthropic", "openai", "gemini"])
def test_each_preset_says_its_figures_source_and_date(preset: str) -> None:
    doc = getattr(CachePricing, preset).__doc__
    pricing = getattr(CachePricing, preset)()
    assert "2026-12" in doc
    assert "documentation" in doc
    assert f"{pricing.min_prefix:,}" in doc
    for figure in (pricing.write, pricing.read):
        assert f"{figure}x" in doc


@pytest.mark.parametrize(
    ("ttl", "error", "pattern"),
    [
        ("10m", ValueError, r"^ttl must be one of 5m, 1h, got '10m'$"),
        ("", ValueError, r"^ttl must be one of 5m, 1h, got ''$"),
        (5, TypeError, r"^ttl must be a str, got int$"),
        (None, TypeError, r"^ttl must be a str, got NoneType$"),
    ],
)
def test_the_anthropic_lifetime_is_checked(
    ttl: object, error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        CachePricing.anthropic(ttl)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "error", "pattern"),
    [
        (
            (1.0, 10, 6, 5),
            ValueError,
            r"^cached_tokens \+ written_tokens must not exceed uncached, got 6 \+ 5 > 10$",
        ),
        ((-1.0, 10, 0, 0), ValueError, r"^billed must be a finite number >= 0"),
        ((math.nan, 10, 0, 0), ValueError, r"^billed must be a finite number >= 0"),
        (("1", 10, 0, 0), TypeError, r"^billed must be a real number, got str$"),
        ((1.0, 10.0, 0, 0), TypeError, r"^uncached must be an int, got float$"),
        ((1.0, 10, -1, 0), ValueError, r"^cached_tokens must be >= 0, got -1$"),
        ((1.0, 10, 0, True), TypeError, r"^written_tokens must be an int, got bool$"),
    ],
)
def test_a_cost_is_checked(
    arguments: tuple[Any, ...], error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        CacheCost(*arguments)


def test_a_cost_s_ratio() -> None:
    assert CacheCost(0.0, 0, 0, 0).ratio == 1.0
    assert CacheCost(45.0, 100, 50, 0).ratio == 0.45
    assert CacheCost(125.0, 100, 0, 100).ratio == 1.25


@pytest.mark.parametrize(
    "value",
    [CachePricing.anthropic("1h"), CachePricing(0.0, 0.0, 0), CacheCost(595.0, 880, 400, 300)],
    ids=repr,
)
def test_values_are_frozen_and_pickle(value: CachePricing | CacheCost) -> None:
    name = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, name, 1.0)
    copy = pickle.loads(pickle.dumps(value))
    assert copy == value
    assert type(copy) is type(value)
    assert hash(copy) == hash(value)
