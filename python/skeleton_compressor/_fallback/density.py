"""The `density` strategy's set: the walk by density, or the single item of most value."""

from __future__ import annotations

from collections.abc import Sequence

from .value import Densities

__all__ = ["density_set"]


def density_set(
    densities: Densities,
    ranked: list[int],
    capacity: int,
    set_of: Sequence[int] | None = None,
) -> list[int]:
    """Walks the items by density keeping each that fits in what is left (and, with variant
    sets `set_of[item]`, -1 for none, passing over an item whose set already has one kept);
    then the item of most value that fits `capacity` (the first of `ranked`, the items in
    rank order, of that value) replaces them if it alone is worth more."""
    values, tokens = densities.values, densities.tokens
    kept = []
    kept_value = 0
    left = capacity
    if set_of is None:
        for item in densities.exact_order():
            size = tokens[item]
            if size <= left:
                left -= size
                kept.append(item)
                kept_value += values[item]
            elif not left:
                break  # zero-token items come first: none of the rest fits
    else:
        taken: set[int] = set()
        for item in densities.exact_order():
            size = tokens[item]
            if size <= left:
                variant = set_of[item]
                if variant >= 0:
                    if variant in taken:
                        continue
                    taken.add(variant)
                left -= size
                kept.append(item)
                kept_value += values[item]
            elif not left:
                break
    fitting = [item for item in ranked if tokens[item] <= capacity]
    if fitting:
        best = max(fitting, key=values.__getitem__)
        if values[best] > kept_value:
            return [best]
    return kept
