"""`bench --variants`: the fragments it times, and the command's figures."""

from __future__ import annotations

import json
from collections import Counter

from skeleton_compressor.cli.bench.fragments import make_fragments
from skeleton_compressor.cli.bench.variants import make_variant_fragments, read_variant_floor
from support.cli_runner import run_cli


def test_a_third_of_the_fragments_render_things_in_sets_of_two_or_three() -> None:
    fragments = make_variant_fragments(3_000)
    plain = make_fragments(3_000)
    sets: dict[str, list[int]] = {}
    for position, fragment in enumerate(fragments):
        if fragment.variant_of is not None:
            sets.setdefault(fragment.variant_of, []).append(position)
    assert sum(map(len, sets.values())) == 1_000
    assert set(Counter(map(len, sets.values()))) == {2, 3}
    for positions in sets.values():
        whole = plain[positions[0]]
        for order, position in enumerate(positions):
            fragment = fragments[position]
            assert fragment.fragment_id == plain[position].fragment_id
            assert fragment.token_count == max(1, whole.token_count // 4**order)
            assert fragment.relevance_score == whole.relevance_score * 0.8**order
    alone = [i for i, fragment in enumerate(fragments) if fragment.variant_of is None]
    assert all(fragments[i] == plain[i] for i in alone)


def test_without_variants_the_same_fragments_have_no_variant_of() -> None:
    fragments = make_variant_fragments(300)
    plain = make_variant_fragments(300, variants=False)
    assert all(fragment.variant_of is None for fragment in plain)
    assert [f.fragment_id for f in plain] == [f.fragment_id for f in fragments]
    assert [f.token_count for f in plain] == [f.token_count for f in fragments]
    assert [f.relevance_score for f in plain] == [f.relevance_score for f in fragments]
    assert read_variant_floor(fragments)[0][3] == fragments[0].variant_of


def test_bench_variants_prints_its_figures() -> None:
    # Both backends must agree on the fragments first: on the Rust backend, with the core's
    # variants.
    completed = run_cli("bench", "--variants", "--sizes", "300", "--json")
    assert completed.returncode == 0, completed.stderr
    [row] = json.loads(completed.stdout)
    assert row["size"] == 300
    assert row["over_plain"] == row["rust_seconds"] / row["plain_seconds"]
    assert row["rust_over_floor"] == row["rust_seconds"] / row["read_floor_seconds"]
