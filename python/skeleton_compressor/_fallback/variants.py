"""Variant sets for the value measures: the fractional bound of the multiple-choice knapsack.

Each variant set is a class from which at most one unit is kept (a unit without a variant_of
is a class of one). Taken in fractions that sum to at most 1 per class, the best a class can
give within some tokens lies on the upper convex hull of its (tokens, value) points and the
empty choice (0, 0); the steps along each hull, filled by efficiency across all classes,
give the relaxation's optimum (Sinha and Zoltners).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .value import Densities

__all__ = ["hull_steps", "multiple_choice_bound", "variant_classes"]


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


def hull_steps(points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The steps (tokens, value) from (0, 0) along the upper convex hull of `points` and
    (0, 0), each adding value, their efficiency (value per token) strictly decreasing; a
    first step of 0 tokens when a point of 0 tokens has value."""
    points.sort(key=lambda point: (point[0], -point[1]))
    hull = [(0, 0)]
    for tokens, value in points:
        if value <= hull[-1][1]:
            continue  # no more value for at least as many tokens
        while len(hull) >= 2:
            (t_a, v_a), (t_b, v_b) = hull[-2], hull[-1]
            # b lies on or below the segment from a to this point: not a vertex.
            if (v_b - v_a) * (tokens - t_b) > (value - v_b) * (t_b - t_a):
                break
            hull.pop()
        hull.append((tokens, value))
    return [(t_b - t_a, v_b - v_a) for (t_a, v_a), (t_b, v_b) in zip(hull, hull[1:])]


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
        for size, value in hull_steps([(tokens[unit], values[unit]) for unit in members]):
            step_tokens.append(size)
            step_values.append(value)
    # The steps of one class come in the order of their efficiency, which `Densities` keeps
    # (its ties keep the order given): filling steps by efficiency is the relaxation.
    return Densities(step_values, step_tokens, range(len(step_tokens))).bound(capacity)
