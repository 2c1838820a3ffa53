"""Turns and siblings make several `optimal` solves, each under `max_work`: a result is exact
only when every solve that decided it finished, since one stopped short may refuse a reuse
or a shared set that holds. Whatever says it is exact is what no limit gives."""

from __future__ import annotations

import random

from skeleton_compressor import Child, ContextFragment, SkeletonResult, compress, compress_siblings


def _correlated(tokens: list[int], spread: int) -> tuple[ContextFragment, ...]:
    """Relevance the tokens plus a constant, scaled: a set of most value is hard to prove."""
    top = max(tokens) + spread
    return tuple(ContextFragment(f"f{i}", t, (t + spread) / top) for i, t in enumerate(tokens))


def _seen(result: SkeletonResult) -> tuple[list[str], dict[str, object]]:
    return [fragment.fragment_id for fragment in result.fragments], result.metadata.to_dict()


def test_a_turn_whose_fill_stopped_short_is_not_exact(backend: str) -> None:
    # The call without `previous` finishes within 300 steps; the fill that reuses f1 does
    # not, keeps too little and is refused, so the turn reuses nothing.
    fragments = _correlated([276, 651, 308, 182, 450, 607], 100)
    previous = (fragments[1], fragments[3])

    def turn(max_work: int | None) -> SkeletonResult:
        return compress(
            fragments,
            1237,
            strategy="optimal",
            backend=backend,
            max_work=max_work,
            previous=previous,
            max_value_loss=0.1,
        )

    alone = compress(fragments, 1237, strategy="optimal", backend=backend, max_work=300)
    assert alone.metadata.exact is True
    whole, short = turn(None), turn(300)
    assert _seen(whole)[0] == ["f1", "f2", "f0"]
    assert (whole.metadata.reused_tokens, whole.metadata.exact) == (651, True)
    assert (short.metadata.reused_tokens, short.metadata.exact) == (0, False)


def test_siblings_whose_growth_stopped_short_are_not_exact(backend: str) -> None:
    # Each child's own call finishes within 200 steps; the re-solves that try a larger
    # shared set do not.
    fragments = _correlated([96, 22, 66, 73, 18, 85], 10)
    scores = {"f0": 0.822, "f1": 0.013, "f2": 0.001, "f3": 0.215, "f4": 0.222, "f5": 0.439}
    children = [Child(180), Child(120, scores)]

    def siblings(max_work: int | None) -> list[SkeletonResult]:
        packed = compress_siblings(
            fragments,
            children,
            strategy="optimal",
            backend=backend,
            max_work=max_work,
            max_value_loss=0.2,
        )
        return list(packed.children)

    rescored = tuple(
        ContextFragment(f.fragment_id, f.token_count, scores[f.fragment_id]) for f in fragments
    )
    for context, budget in ((fragments, 180), (rescored, 120)):
        alone = compress(context, budget, strategy="optimal", backend=backend, max_work=200)
        assert alone.metadata.exact is True
    whole, short = siblings(None), siblings(200)
    assert [child.metadata.exact for child in whole] == [True, True]
    assert [child.metadata.exact for child in short] == [False, False]
    assert [_seen(child) for child in short] != [_seen(child) for child in whole]


def test_a_child_is_exact_only_when_every_childs_call_finished(backend: str) -> None:
    # With no loss each child keeps its own selection, but what it shares, and so its
    # output's order, the other decides: the first child's call stops short within 200
    # steps, the second's finishes.
    fragments = _correlated([35, 61, 77, 93, 50], 10)
    scores = {"f0": 0.714, "f1": 0.921, "f2": 0.395, "f3": 0.801, "f4": 0.445}
    rescored = tuple(
        ContextFragment(f.fragment_id, f.token_count, scores[f.fragment_id]) for f in fragments
    )
    alone = [
        compress(context, budget, strategy="optimal", backend=backend, max_work=200)
        for context, budget in ((fragments, 158), (rescored, 105))
    ]
    assert [result.metadata.exact for result in alone] == [False, True]
    packed = compress_siblings(
        fragments,
        [Child(158), Child(105, scores)],
        strategy="optimal",
        backend=backend,
        max_work=200,
    )
    assert [child.metadata.exact for child in packed.children] == [False, False]


def test_a_turn_or_siblings_said_exact_keep_what_no_limit_keeps(backend: str) -> None:
    rng = random.Random(5)
    said = {True: 0, False: 0}
    for _ in range(120):
        fragments = _correlated([rng.randint(1, 100) for _ in range(rng.randint(5, 9))], 10)
        budget = sum(fragment.token_count for fragment in fragments) // 2
        previous = rng.sample(fragments, 3)
        scores = {fragment.fragment_id: rng.random() for fragment in fragments}
        children = [Child(budget), Child(budget * 2 // 3, scores)]
        limited, unlimited = rng.choice([100, 300, 1_000, 3_000, 10_000, 30_000]), None
        turns = [
            compress(
                fragments,
                budget,
                strategy="optimal",
                backend=backend,
                max_work=limit,
                previous=previous,
                max_value_loss=0.1,
            )
            for limit in (limited, unlimited)
        ]
        packed = [
            compress_siblings(
                fragments,
                children,
                strategy="optimal",
                backend=backend,
                max_work=limit,
                max_value_loss=0.2,
            ).children
            for limit in (limited, unlimited)
        ]
        for short, whole in [(turns[0], turns[1]), *zip(packed[0], packed[1])]:
            assert whole.metadata.exact is True
            exact = bool(short.metadata.exact)
            said[exact] += 1
            if exact:
                assert _seen(short) == _seen(whole)
    # The limits cross: many results finish, many stop short.
    assert said[True] > 50 and said[False] > 50, said
