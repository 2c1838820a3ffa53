"""Generated fragments that `compress` accepts, with every policy feature in play: ties,
zero relevance and zero tokens, a few required, groups (`g0` may be a rendering of `v0`)
and variant sets, a group's members sharing their `variant_of` and a set holding at most
one required unit."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st
from skeleton_compressor import ContextFragment


def valid_fragments(
    draw: st.DrawFn,
    count: int,
    most_tokens: int,
    relevances: Sequence[float],
    content: bool = True,
) -> tuple[ContextFragment, ...]:
    """`count` fragments `f0`, `f1`, ... of 0 to `most_tokens` tokens, relevance drawn from
    `relevances`, content `text i` (or none)."""
    group_of = draw(
        st.lists(st.sampled_from([None, None, "g0", "g1"]), min_size=count, max_size=count)
    )
    variant_of_group = {"g0": draw(st.sampled_from([None, "v0"])), "g1": None}
    fragments: list[ContextFragment] = []
    pinned_sets: set[str] = set()
    for i, group in enumerate(group_of):
        variant = (
            variant_of_group[group]
            if group is not None
            else draw(st.sampled_from([None, None, "v0", "v1"]))
        )
        required = draw(st.booleans()) and draw(st.booleans()) and draw(st.booleans())
        if required and variant is not None:
            # Two required units in one variant set are an error; a group's pin is its unit's.
            if variant in pinned_sets and (
                group is None or not any(f.group == group and f.required for f in fragments)
            ):
                required = False
            else:
                pinned_sets.add(variant)
        fragments.append(
            ContextFragment(
                f"f{i}",
                draw(st.integers(0, most_tokens)),
                draw(st.sampled_from(relevances)),
                f"text {i}" if content else "",
                required,
                group,
                variant,
            )
        )
    return tuple(fragments)
