"""One compression of checked columns, for each budget: the kept fragments, their tokens,
their value and the bound. The walk in rank order on the columns when nothing needs units
(the plain path); units otherwise (the policy path)."""

from __future__ import annotations

from ...policy import Policy
from .columns import Columns
from .packing import packed
from .ranking import ranking
from .units import Decision, Units
from .value import Densities, fragment_values

__all__ = ["Selection", "policy_units", "selections"]

# For each budget: the kept fragments' indices, their tokens, their value, the bound, and
# whether the selection is exact.
Selection = tuple[list[int], int, int, int, bool]


def selections(
    columns: Columns,
    budgets: list[int],
    strategy: str,
    policy: Policy,
    plain: bool,
    explain: bool = False,
    max_work: int | None = None,
) -> tuple[list[Selection], list[Decision]]:
    """What is kept for each budget; decisions for the first when explaining. `plain`: the
    strategy walks in rank order under the default policy. `optimal` does at most `max_work`
    per budget."""
    ranked = ranking(columns)
    if (
        plain
        and not explain
        and not columns.required
        and not columns.grouped
        and not columns.variants
    ):
        return _plain_selections(columns, ranked, budgets, strategy == "prefix"), []
    units = policy_units(columns, ranked, policy, max_work)
    found = []
    decisions: list[Decision] = []
    for budget in budgets:
        walk = units.walk(budget, strategy, policy.on_overflow, explain)
        found.append((*units.kept_fragments(walk, policy.order), units.bound(budget), walk.exact))
        if explain and not decisions:
            decisions = units.decisions(walk, budget)
    return found, decisions


def policy_units(
    columns: Columns, ranked: list[int], policy: Policy, max_work: int | None = None
) -> Units:
    """The units of the policy path, from the columns and their ranking."""
    return Units(
        columns.token_counts,
        columns.negated_scores,
        columns.required,
        columns.grouped,
        ranked,
        policy.min_relevance,
        columns.variants,
        max_work,
    )


def _plain_selections(
    columns: Columns, ranked: list[int], budgets: list[int], prefix: bool
) -> list[Selection]:
    """The walk in rank order on the columns; values are read once a budget is above 0
    (a budget of 0 keeps nothing and bounds nothing)."""
    values: list[int] = []
    densities = None
    found: list[Selection] = []
    for budget in budgets:
        kept, compressed = packed(columns.token_counts, ranked, budget, prefix)
        if not budget:
            found.append((kept, compressed, 0, 0, True))
            continue
        if densities is None:
            values = fragment_values(columns.negated_scores)
            densities = Densities(values, columns.token_counts, range(len(values)))
        value = sum(map(values.__getitem__, kept))
        found.append((kept, compressed, value, densities.bound(budget), True))
    return found
