"""Variant sets for the value measures: the fractional bound of the multiple-choice knapsack.

Each variant set is a class from which at most one unit is kept (a unit without a variant_of
is a class of one). Taken in fractions that sum to at most 1 per class, the best a class can
give within some tokens lies on the upper convex hull of its (tokens, value) points and the
empty choice (0, 0); the steps along each hull, filled by efficiency across all classes,
give the relaxation's optimum (Sinha and Zoltners).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..value import Densities

__all__ = ["hull_steps", "multiple_choice_bound", "upper_hull", "variant_classes"]


def variant_classes(units: Iterable[int], set_of: Sequence[int]) -> list[list[int]]:
    """The units grouped by variant set, in the order given; a unit of no set alone."""
    classes: list[list[int]] = []
    by_set: dict[int, list[int]] = {}
    for unit in units:
        variant = set_of[unit]
        if variant < 0:
            classes.append([unit])
        else:
            members = by_set.get(variant)
            if members is None:
                by_set[variant] = members = []
                classes.append(members)
            members.append(unit)
    return classes


def upper_hull(members: list[int], values: Sequence[int], tokens: Sequence[int]) -> list[int]:
    """The members on the upper convex hull of their (tokens, value) points and (0, 0), by
    tokens: each of more value than the one before, the efficiency of each step from the one
    before (from (0, 0) for the first) strictly decreasing; the first may take 0 tokens."""
    hull: list[int] = []
    last_tokens, last_value = 0, 0
    before_tokens, before_value = 0, 0  # the vertex before the last, (0, 0) if none
    for unit in sorted(members, key=lambda unit: (tokens[unit], -values[unit])):
        size, value = tokens[unit], values[unit]
        if value <= last_value:
            continue  # no more value for at least as many tokens
        while hull:
            # The last vertex lies on or below the segment from the one before it to this
            # point: not a vertex.
            if (last_value - before_value) * (size - last_tokens) > (value - last_value) * (
                last_tokens - before_tokens
            ):
                break
            hull.pop()
            last_tokens, last_value = before_tokens, before_value
            if len(hull) >= 2:
                before_tokens, before_value = tokens[hull[-2]], values[hull[-2]]
            else:
                before_tokens, before_value = 0, 0
        hull.append(unit)
        before_tokens, before_value = last_tokens, last_value
        last_tokens, last_value = size, value
    return hull


def hull_steps(
    members: list[int], values: Sequence[int], tokens: Sequence[int]
) -> list[tuple[int, int]]:
    """The steps (tokens, value) from (0, 0) along `upper_hull`."""
    steps = []
    last_tokens, last_value = 0, 0
    for unit in upper_hull(members, values, tokens):
        steps.append((tokens[unit] - last_tokens, values[unit] - last_value))
        last_tokens, last_value = tokens[unit], values[unit]
    return steps


def multiple_choice_bound(
    values: Sequence[int],
    tokens: Sequence[int],
    candidates: Iterable[int],
    set_of: Sequence[int],
    capacity: int,
) -> int:
    """`floor` of the most value `candidates` give within `capacity` when each is taken in
    any fraction in [0, 1] and the fractions of one variant set sum to at most 1."""
    step_tokens: list[int] = []
    step_values: list[int] = []
    for members in variant_classes(candidates, set_of):
        for size, value in hull_steps(members, values, tokens):
            step_tokens.append(size)
            step_values.append(value)
    # The steps of one class come in the order of their efficiency, which `Densities` keeps
    # (its ties keep the order given): filling steps by efficiency is the relaxation.
    return Densities(step_values, step_tokens, range(len(step_tokens))).bound(capacity)
