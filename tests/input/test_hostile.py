"""Inputs that try to break the backends: each gets a clear error or a correct result, and
both backends give the same one."""

from __future__ import annotations

import decimal
import fractions
import numbers
from typing import Any

import pytest
from skeleton_compressor import ContextFragment, SkeletonCompressorService

F = ContextFragment
RUST = SkeletonCompressorService(backend="rust")
PYTHON = SkeletonCompressorService(backend="python")


def both(fragments: Any, budget: Any = 100) -> Any:
    """The common outcome of both backends: a result, or (error type, message)."""
    outcomes = []
    for service in (RUST, PYTHON):
        try:
            outcomes.append(service.compress(fragments, budget))
        except Exception as error:
            assert isinstance(error, (TypeError, ValueError)), repr(error)
            assert "panic" not in str(error).lower()
            outcomes.append((type(error), str(error)))
    rust, python = outcomes
    if isinstance(rust, tuple):
        assert rust == python
    else:
        assert [id(f) for f in rust.fragments] == [id(f) for f in python.fragments]
        assert rust.metadata == python.metadata
    return rust


def raises(fragments: Any, kind: type[Exception], text: str, budget: Any = 100) -> str:
    outcome = both(fragments, budget)
    assert isinstance(outcome, tuple), outcome
    assert issubclass(outcome[0], kind), outcome  # FragmentTypeError is a TypeError
    assert text in outcome[1], outcome
    return str(outcome[1])


def bare(cls: type, **fields: Any) -> Any:
    """An instance of a ContextFragment subclass with its slots set directly."""
    instance = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(instance, name, value)
    return instance


class Boom(Exception):
    pass


class RaisingId(ContextFragment):
    __slots__ = ()

    @property
    def fragment_id(self) -> str:  # type: ignore[override]
        raise Boom("no id today")


class RaisingScore(ContextFragment):
    __slots__ = ()

    @property
    def relevance_score(self) -> float:  # type: ignore[override]
        raise RuntimeError("relevance unavailable")


def test_attribute_access_that_raises() -> None:
    message = raises(
        (bare(RaisingId, token_count=1, relevance_score=0.5),),
        TypeError,
        "fragments[0]: cannot read fragment_id: Boom: no id today",
    )
    assert message.startswith("fragments[0]")
    fragment = (
        RaisingScore("x", 3, 0.5) if False else bare(RaisingScore, fragment_id="x", token_count=3)
    )
    raises(
        (F("a", 1, 0.5), fragment),
        TypeError,
        "fragments[1] (id 'x'): cannot read relevance_score: RuntimeError: relevance unavailable",
    )
    for service in (RUST, PYTHON):
        with pytest.raises(TypeError) as caught:
            service.compress((fragment,), 10)
        assert isinstance(caught.value.__cause__, RuntimeError)


def test_keyboard_interrupt_is_not_swallowed() -> None:
    class Interrupting(ContextFragment):
        __slots__ = ()

        @property
        def token_count(self) -> int:  # type: ignore[override]
            raise KeyboardInterrupt

    fragment = bare(Interrupting, fragment_id="k", relevance_score=0.5)
    for service in (RUST, PYTHON):
        with pytest.raises(KeyboardInterrupt):
            service.compress((fragment,), 10)


def test_objects_pretending_to_be_fragments() -> None:
    class Liar:
        fragment_id = "liar"
        token_count = 5
        relevance_score = 0.5

        @property
        def __class__(self) -> type:  # type: ignore[override]
            return ContextFragment

    result = both((Liar(), F("real", 5, 0.9)))
    assert [f.fragment_id for f in result.fragments] == ["real", "liar"]

    class BrokenClass:
        @property
        def __class__(self) -> type:  # type: ignore[override]
            raise RuntimeError("no class")

    raises((BrokenClass(),), TypeError, "fragments[0] must be a ContextFragment, got")


def test_fragment_subclasses_work_like_fragments() -> None:
    class Tagged(ContextFragment):
        __slots__ = ("tag",)

    fragments = (
        bare(Tagged, fragment_id="t", token_count=4, relevance_score=0.7, content="", tag=1),
        F("f", 4, 0.9),
    )
    result = both(fragments)
    assert [f.fragment_id for f in result.fragments] == ["f", "t"]


def test_value_subclasses_are_read_as_plain_values() -> None:
    class SneakyStr(str):
        def __lt__(self, other: object) -> bool:
            raise AssertionError("compared with __lt__")

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 0

    class SneakyInt(int):
        def __index__(self) -> int:
            raise AssertionError("read with __index__")

        def __le__(self, other: object) -> bool:
            raise AssertionError

    class SneakyFloat(float):
        def __float__(self) -> float:
            return 0.0

        def __lt__(self, other: object) -> bool:
            raise AssertionError

    fragments = (
        F(SneakyStr("b"), SneakyInt(3), SneakyFloat(0.5)),
        F(SneakyStr("a"), SneakyInt(4), SneakyFloat(0.5)),
        F("c", 2, SneakyFloat(0.9)),
    )
    result = both(fragments, 7)
    assert [str(f.fragment_id) for f in result.fragments] == ["c", "a"]
    raises(
        (F(SneakyStr("a"), 1, 0.5), F(SneakyStr("a"), 1, 0.5)),
        ValueError,
        "duplicate fragment_id 'a' at fragments[0] and fragments[1]",
    )


def test_fragments_changed_after_construction() -> None:
    changed = F("before", 10, 0.5)
    object.__setattr__(changed, "fragment_id", "after")
    object.__setattr__(changed, "token_count", 20)
    assert [f.fragment_id for f in both((changed,)).fragments] == ["after"]
    object.__setattr__(changed, "relevance_score", 7)
    raises(
        (changed,),
        ValueError,
        "fragments[0] (id 'after'): relevance_score must be in [0, 1], got 7",
    )
    deleted = F("gone", 1, 0.5)
    object.__delattr__(deleted, "token_count")
    raises(
        (deleted,), TypeError, "fragments[0] (id 'gone'): cannot read token_count: AttributeError"
    )


def test_one_fragment_twice() -> None:
    fragment = F("twice", 1, 0.5)
    raises(
        (fragment, F("x", 1, 0.1), fragment),
        ValueError,
        "duplicate fragment_id 'twice' at fragments[0] and fragments[2]",
    )


@pytest.mark.parametrize(
    ("budget", "kind", "text"),
    [
        (True, TypeError, "skeleton_budget must be an int, got True (bool)"),
        (10.0, TypeError, "skeleton_budget must be an int, got 10.0 (float)"),
        (decimal.Decimal(10), TypeError, "got Decimal('10') (Decimal)"),
        (fractions.Fraction(10), TypeError, "skeleton_budget must be an int"),
        ("10", TypeError, "skeleton_budget must be an int"),
        (None, TypeError, "skeleton_budget must be an int"),
        (-(10**30), ValueError, "skeleton_budget must be >= 0"),
    ],
)
def test_bad_budgets(budget: Any, kind: type[Exception], text: str) -> None:
    raises((F("a", 1, 0.5),), kind, text, budget)


def test_numpy_budgets_and_values() -> None:
    np = pytest.importorskip("numpy")
    fragments = (F("a", np.int64(5), np.float32(0.75)), F("b", np.uint8(7), np.float64(0.5)))
    for budget in (np.int64(6), np.uint64(12), np.int8(0)):
        both(fragments, budget)
    raises(fragments, TypeError, "skeleton_budget must be an int", np.float64(6))
    raises(fragments, TypeError, "skeleton_budget must be an int", np.bool_(True))
    raises((F("a", np.uint64(2**64 - 1), 0.5),), ValueError, "token_count must be <= 2**63 - 1")
    raises((F("a", 1, np.float32(1.5)),), ValueError, "relevance_score must be in [0, 1], got")
    raises((F("a", np.float64(1.0), 0.5),), TypeError, "token_count must be an int")


@pytest.mark.parametrize(
    ("fragment", "kind", "text"),
    [
        (
            F("a", 2**64, 0.5),
            ValueError,
            "token_count must be <= 2**63 - 1, got 18446744073709551616",
        ),
        (F("a", -(2**70), 0.5), ValueError, "token_count must be >= 0"),
        (
            F("a", 10**5000, 0.5),
            ValueError,
            "token_count must be <= 2**63 - 1, got <int of 16610 bits>",
        ),
        (F("a", 1, 2**70), ValueError, "relevance_score must be in [0, 1]"),
        (F("a", 1, -(2**70)), ValueError, "relevance_score must be in [0, 1]"),
        (F("a", 1, fractions.Fraction(10**400)), ValueError, "relevance_score must be in [0, 1]"),
        (F("a", 1, decimal.Decimal("0.5")), TypeError, "relevance_score must be a real number"),
        (F("a", 1, complex(0.5)), TypeError, "relevance_score must be a real number"),
        (F("a", False, 0.5), TypeError, "token_count must be an int, got False (bool)"),
        (F("a", 1, True), TypeError, "relevance_score must be a real number, got True (bool)"),
        (F("\ud800", -1, 0.5), ValueError, "fragments[0] (id '\\ud800'): token_count must be >= 0"),
        (F("x" * 500, -1, 0.5), ValueError, "..."),
    ],
)
def test_out_of_range_and_odd_values(
    fragment: ContextFragment, kind: type[Exception], text: str
) -> None:
    message = raises((fragment,), kind, text)
    assert len(message) < 300


def test_values_whose_conversion_raises() -> None:
    class BadIndex:
        def __index__(self) -> int:
            raise RuntimeError("no index")

    import numbers

    numbers.Integral.register(BadIndex)
    error = raises((F("a", BadIndex(), 0.5),), TypeError, "token_count must be an int")
    assert "BadIndex" in error

    class BadFloat:
        def __float__(self) -> float:
            raise RuntimeError("no float")

        def __repr__(self) -> str:
            raise RuntimeError("no repr either")

    numbers.Real.register(BadFloat)
    raises(
        (F("a", 1, BadFloat()),),
        TypeError,
        "relevance_score must be a real number, got <BadFloat object> (BadFloat)",
    )


@pytest.mark.slow
def test_a_million_equal_scores() -> None:
    fragments = tuple(F(f"id-{(i * 7919) % 1_000_003:07d}", 1, 0.5) for i in range(1_000_000))
    result = RUST.compress(fragments, 10**9)
    assert [f.fragment_id for f in result.fragments] == sorted(f.fragment_id for f in fragments)
    assert RUST.compress(fragments[:200_000], 5_000) == PYTHON.compress(fragments[:200_000], 5_000)


class Meddling:
    """A relevance whose conversion runs `action` first."""

    def __init__(self, action: Any) -> None:
        self.action = action

    def __float__(self) -> float:
        self.action()
        return 0.5


numbers.Real.register(Meddling)


def test_ids_replaced_mid_read_rank_as_they_were_read() -> None:
    for service in (RUST, PYTHON):
        victim = F("".join(["a-", "victim"]), 1, 0.5)

        def replace(victim: ContextFragment = victim) -> None:
            object.__setattr__(victim, "fragment_id", "".join(["z-", "replaced"]))

        other = F("m-other", 1, Meddling(replace))
        result = service.compress((victim, other), 10)
        assert [id(f) for f in result.fragments] == [id(victim), id(other)]
        assert victim.fragment_id == "z-replaced"


def test_a_duplicate_is_judged_on_the_ids_read() -> None:
    for service in (RUST, PYTHON):
        first = F("".join(["d", "up"]), 1, 0.5)

        def rename(first: ContextFragment = first) -> None:
            object.__setattr__(first, "fragment_id", "".join(["re", "named"]))

        fragments = (first, F("x", 1, Meddling(rename)), F("dup", 1, 0.5))
        with pytest.raises(ValueError, match=r"'dup' at fragments\[0\] and fragments\[2\]"):
            service.compress(fragments, 10)

        later = F("later", 1, 0.5)

        def clash(later: ContextFragment = later) -> None:
            object.__setattr__(later, "fragment_id", "".join(["ear", "lier"]))

        # Renamed before it is read: the id read is the new one.
        clashing = (F("earlier", 1, Meddling(clash)), later)
        with pytest.raises(ValueError, match=r"'earlier' at fragments\[0\] and fragments\[1\]"):
            service.compress(clashing, 10)


def test_compress_called_again_from_inside_a_conversion() -> None:
    inner = tuple(F(f"inner-{i}", i % 7, (i % 5) / 5) for i in range(500))
    expected_inner = RUST.compress(inner, 300)
    seen = []

    class Reentrant:
        def __float__(self) -> float:
            seen.append(RUST.compress(inner, 300))
            return 0.75

    import numbers

    numbers.Real.register(Reentrant)
    outer = (*(F(f"outer-{i}", 3, 0.5) for i in range(1_000)), F("re", 3, Reentrant()))
    result = RUST.compress(outer, 30)
    assert result.fragments[0].fragment_id == "re"
    assert seen == [expected_inner]
    first_ids = sorted(f"outer-{i}" for i in range(1_000))[:9]
    assert [f.fragment_id for f in result.fragments] == ["re", *first_ids]
    assert result.metadata.compressed_tokens == 30


@pytest.mark.slow
def test_ids_replaced_by_another_thread_during_a_large_compress() -> None:
    import threading

    size = 300_000
    fragments = tuple(F(f"same-{i:07d}", 1, 0.5) for i in range(size))
    stop = threading.Event()

    def meddle() -> None:
        # Every replacement keeps the ids' order, so whichever ids a call reads, it ranks the
        # fragments in input order.
        n = 0
        while not stop.is_set():
            i = n % size
            object.__setattr__(fragments[i], "fragment_id", f"same-{i:07d}-{n}")
            n += 1

    thread = threading.Thread(target=meddle)
    thread.start()
    try:
        for _ in range(5):
            result = RUST.compress(fragments, 10**9)
            assert all(a is b for a, b in zip(result.fragments, fragments))
            assert len(result.fragments) == size
    finally:
        stop.set()
        thread.join()


class Sly(int):
    """An int whose comparisons lie."""

    def __lt__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return True


class SlyIndex:
    """An Integral whose __index__ returns a lying int subclass (Python 3.9 passes it on)."""

    def __index__(self) -> int:
        return Sly(3)


numbers.Integral.register(SlyIndex)


@pytest.mark.filterwarnings("ignore:__index__ returned non-int:DeprecationWarning")
def test_an_index_that_returns_a_lying_int_subclass_is_read_as_its_value() -> None:
    result = both((F("a", SlyIndex(), 0.5), F("b", 2, 0.4)), 5)
    assert [f.fragment_id for f in result.fragments] == ["a", "b"]
    assert result.metadata.compressed_tokens == 5
    result = both((F("a", 3, 0.5), F("b", 2, 0.4)), SlyIndex())
    assert result.metadata.skeleton_budget == 3
    assert [f.fragment_id for f in result.fragments] == ["a"]
