"""Step definitions for features/skeleton_compressor.feature, run on both backends."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, scenarios, then, when
from skeleton_compressor import (
    ContextFragment,
    Plan,
    SkeletonCompressor,
    SkeletonCompressorService,
    SkeletonMetadata,
)
from support.scenario_outcome import run_step

scenarios("skeleton_compressor.feature")


def _error(outcome: dict[str, Any], kind: type[Exception]) -> Exception:
    error = outcome.get("error")
    assert isinstance(error, kind), (
        f"expected {kind.__name__}, got {error!r} / {outcome.get('result')!r}"
    )
    return error


# --- Given ---------------------------------------------------------------------


@given("a skeleton compressor service", target_fixture="compressor")
def compressor(backend: str) -> SkeletonCompressorService:
    return SkeletonCompressorService(backend=backend)


@given("context fragments with total tokens 1000", target_fixture="fragments")
def thousand_tokens() -> tuple[ContextFragment, ...]:
    # Ten fragments of 100 tokens, already in ranking order.
    return tuple(ContextFragment(f"frag-{i}", 100, round(1.0 - i / 20, 2)) for i in range(10))


@given(parsers.parse("three fragments with equal relevance {score:g}"), target_fixture="fragments")
def equal_relevance(score: float) -> tuple[ContextFragment, ...]:
    return tuple(ContextFragment(fid, 10, score) for fid in ("charlie", "alpha", "bravo"))


@given(
    parsers.parse("fragments with relevances {a:g}, {b:g}, and {c:g}"), target_fixture="fragments"
)
def three_relevances(a: float, b: float, c: float) -> tuple[ContextFragment, ...]:
    return tuple(ContextFragment(f"r{i}", 10, s) for i, s in enumerate((a, b, c)))


@given("an empty fragment list", target_fixture="fragments")
def no_fragments() -> tuple[ContextFragment, ...]:
    return ()


@given(parsers.parse("a single fragment with {tokens:d} tokens"), target_fixture="fragments")
def single_fragment(tokens: int) -> tuple[ContextFragment, ...]:
    return (ContextFragment("only", tokens, 0.5),)


@given("a fragment with negative token count", target_fixture="fragments")
def negative_tokens() -> tuple[ContextFragment, ...]:
    return (ContextFragment("neg", -5, 0.5),)


@given("a fragment with empty fragment_id", target_fixture="fragments")
def empty_id() -> tuple[ContextFragment, ...]:
    return (ContextFragment("", 10, 0.5),)


@given("a fragment with relevance 1.5", target_fixture="fragments")
def relevance_too_high() -> tuple[ContextFragment, ...]:
    return (ContextFragment("high", 10, 1.5),)


@given(
    parsers.parse(
        "a skeleton metadata with ratio {ratio:g} and {original:d} original tokens "
        "and {compressed:d} compressed"
    ),
    target_fixture="metadata",
)
def given_metadata(ratio: float, original: int, compressed: int) -> SkeletonMetadata:
    return SkeletonMetadata(original_tokens=original, compressed_tokens=compressed, ratio=ratio)


# --- When ----------------------------------------------------------------------


@when(parsers.parse("I compress with skeleton_budget {budget:d}"))
def compress_with(
    compressor: SkeletonCompressorService,
    fragments: tuple[ContextFragment, ...],
    budget: int,
    outcome: dict[str, Any],
) -> None:
    run_step(outcome, lambda: compressor.compress(fragments, budget))


@when("I compress with a non-tuple fragments argument")
def compress_list(compressor: SkeletonCompressorService, outcome: dict[str, Any]) -> None:
    as_list = [ContextFragment("a", 10, 0.5)]
    run_step(outcome, lambda: compressor.compress(as_list, 100))  # type: ignore[arg-type]


@when("I compress with a tuple containing a non-fragment item")
def compress_foreign_item(compressor: SkeletonCompressorService, outcome: dict[str, Any]) -> None:
    mixed = (ContextFragment("a", 10, 0.5), {"fragment_id": "b"})
    run_step(outcome, lambda: compressor.compress(mixed, 100))  # type: ignore[arg-type]


@when("I compress with a non-integer skeleton_budget")
def compress_float_budget(
    compressor: SkeletonCompressorService,
    fragments: tuple[ContextFragment, ...],
    outcome: dict[str, Any],
) -> None:
    run_step(outcome, lambda: compressor.compress(fragments, 500.0))  # type: ignore[arg-type]


@when("I create skeleton metadata with compressed exceeding original")
def metadata_exceeding(outcome: dict[str, Any]) -> None:
    run_step(
        outcome, lambda: SkeletonMetadata(original_tokens=100, compressed_tokens=200, ratio=2.0)
    )


@when("I attach skeleton_metadata to a plan", target_fixture="plan")
def attach_metadata(metadata: SkeletonMetadata) -> Plan:
    return Plan("plan-1", "inherit context").with_skeleton_metadata(metadata)


@when("I check that SkeletonCompressorService satisfies the SkeletonCompressor protocol")
def check_protocol(compressor: SkeletonCompressorService, outcome: dict[str, Any]) -> None:
    outcome["result"] = isinstance(compressor, SkeletonCompressor)


# --- Then ----------------------------------------------------------------------


@then("the compressor should raise a ValueError for invalid budget")
def value_error_budget(outcome: dict[str, Any]) -> None:
    assert "skeleton_budget must be >= 0" in str(_error(outcome, ValueError))


@then("the compressor should raise a TypeError for invalid budget type")
def type_error_budget(outcome: dict[str, Any]) -> None:
    assert "skeleton_budget must be an int" in str(_error(outcome, TypeError))


@then("the compressor should raise a TypeError")
def type_error(outcome: dict[str, Any]) -> None:
    assert "fragments must be a tuple" in str(_error(outcome, TypeError))


@then("the compressor should raise a TypeError for invalid item")
def type_error_item(outcome: dict[str, Any]) -> None:
    assert str(_error(outcome, TypeError)).startswith("fragments[1] must be a ContextFragment")


@then("the compressor should raise a ValueError for invalid fragment")
def value_error_fragment(outcome: dict[str, Any]) -> None:
    assert str(_error(outcome, ValueError)).startswith("fragments[0]")


@then(parsers.parse('the compressor should raise a ValueError mentioning "{text}"'))
def value_error_mentioning(outcome: dict[str, Any], text: str) -> None:
    assert text in str(_error(outcome, ValueError))


@then("a validation error should be raised for compressed exceeding original")
def metadata_error(outcome: dict[str, Any]) -> None:
    message = str(_error(outcome, ValueError))
    assert "compressed_tokens must not exceed original_tokens" in message


@then("the result should contain zero fragments")
def zero_fragments(outcome: dict[str, Any]) -> None:
    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"].fragments == ()
    assert outcome["result"].metadata.compressed_tokens == 0


@then("the result should contain one fragment")
def one_fragment(outcome: dict[str, Any], fragments: tuple[ContextFragment, ...]) -> None:
    assert "error" not in outcome, outcome.get("error")
    assert len(outcome["result"].fragments) == 1
    assert outcome["result"].fragments[0] is fragments[0]


@then("all fragments should be returned unchanged")
def all_unchanged(outcome: dict[str, Any], fragments: tuple[ContextFragment, ...]) -> None:
    kept = outcome["result"].fragments
    assert len(kept) == len(fragments)
    assert all(a is b for a, b in zip(kept, fragments))
    assert outcome["result"].metadata.ratio == 1.0


@then(parsers.parse("compressed tokens should be at most {limit:d}"))
def at_most(outcome: dict[str, Any], limit: int) -> None:
    metadata = outcome["result"].metadata
    assert sum(f.token_count for f in outcome["result"].fragments) == metadata.compressed_tokens
    assert 0 < metadata.compressed_tokens <= limit
    assert not metadata.over_budget


@then("fragments should be ordered by fragment_id ascending")
def ordered_by_id(outcome: dict[str, Any]) -> None:
    ids = [f.fragment_id for f in outcome["result"].fragments]
    assert ids == ["alpha", "bravo", "charlie"]


@then(parsers.parse("the first fragment should have relevance {score:g}"))
def first_relevance(outcome: dict[str, Any], score: float) -> None:
    assert outcome["result"].fragments[0].relevance_score == score


@then(parsers.parse("the last fragment should have relevance {score:g}"))
def last_relevance(outcome: dict[str, Any], score: float) -> None:
    assert outcome["result"].fragments[-1].relevance_score == score


@then("the plan should expose skeleton metadata in cli dict")
def plan_cli_dict(plan: Plan, metadata: SkeletonMetadata) -> None:
    exposed = plan.to_cli_dict()["skeleton_metadata"]
    assert exposed == metadata.to_dict()
    assert exposed["ratio"] == 0.5
    assert exposed["original_tokens"] == 1000
    assert exposed["compressed_tokens"] == 500


@then("the structural subtype assertion should pass")
def protocol_passes(outcome: dict[str, Any]) -> None:
    assert outcome["result"] is True
