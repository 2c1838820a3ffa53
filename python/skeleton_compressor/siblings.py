"""Children of one parent packed together: what every child keeps comes first, in the
parent's input order, so that a provider's prompt cache serves it to every child but the
first.

The Rust backend packs them in one call to its core (`compress_siblings` on the compiled
`Compressor`). The steps here are the same over a backend's own `compress` (its solo result,
or the same call with the shared units marked required): the Python backend's way, and the
Rust backend's for the inputs its one call leaves to them. Each child is checked in turn
here, so errors are worded as `compress` words them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from . import _messages, _values
from ._messages import describe
from .errors import FragmentError
from .policy import Policy
from .pricing import (
    _DEFAULT_PRICING,
    CacheCost,
    CachePricing,
    FragmentKey,
    _fragment_key,
    cost_fields,
    estimate_cost,
)
from .types import _SLOTS, ContextFragment, SkeletonMetadata, SkeletonResult
from .validation import checked_budget, checked_fragments, checked_share

if TYPE_CHECKING:
    from ._backends.protocol import BackendCompressor

__all__ = ["Child", "SiblingsResult", "pack_siblings", "readable_id"]

# Trials of a larger shared set made at most, each up to one `compress` per child: the
# growth costs a bounded multiple of the solo calls, whatever the number of candidates.
_MAX_TRIALS = 24
# No prompt has this many tokens (the core counts them in 128 bits): a longer minimum
# caches nothing, as this one does.
_MAX_PREFIX = 2**128 - 1


@dataclass(frozen=True, **_SLOTS)
class Child:
    """One child of a parent: its token budget, and its own relevance of the parent's
    fragments by `fragment_id` (None: the parent's scores; ids it does not name keep theirs).

    Construction checks nothing; `compress_siblings` checks every child before it keeps
    anything.
    """

    skeleton_budget: int
    relevance: Mapping[str, float] | None = None


@dataclass(frozen=True, **_SLOTS)
class SiblingsResult:
    """Children of one parent, packed together.

    Fields:
        shared: the fragments every child keeps (the parent's objects, in input order); each
            child's output starts with them.
        children: one `SkeletonResult` per child, in the children's order: its fragments as
            the child scored them, and the metadata of its selection.
        cost: `estimate_cost` of the children's outputs sent in order.
        independent_cost: the same for the children's solo results, as `compress` orders them.
        prefix_key: a hex digest (SHA-256) of the shared fragments' ids, token counts and
            contents: the same for every sibling and on every run, for a provider's cache key.
    """

    shared: tuple[ContextFragment, ...]
    children: tuple[SkeletonResult, ...]
    cost: CacheCost
    independent_cost: CacheCost
    prefix_key: str


class _Units(NamedTuple):
    """The parent's units: each fragment's unit, each unit's members in input order (units
    numbered by their first member), and each unit's variant set name (None for none)."""

    unit_of: list[int]
    members: list[list[int]]
    variant: list[str | None]
    required: list[bool]
    tokens: list[int]


class _Selection(NamedTuple):
    kept: frozenset[int]  # units
    fragments: int
    compressed: int
    value: int  # in units of 2**-32
    relevance: float  # summed exactly


# The checks of a score, which a child's relevance may fail for a fragment of the parent.
_SCORE_KINDS = frozenset({"relevance_type", "relevance_range"})


class _Sibling(NamedTuple):
    """A child, checked: its context as it scores it, its budget, its solo result."""

    context: tuple[ContextFragment, ...]
    budget: int
    solo: tuple[ContextFragment, ...]
    solo_selection: _Selection
    original: int
    bound: int
    # Whether the solo result is exact (`optimal` did not reach `max_work`).
    exact: bool = True


def pack_siblings(
    compressor: BackendCompressor,
    policy: Policy,
    fragments: object,
    children: object,
    max_value_loss: object,
    pricing: object,
) -> SiblingsResult:
    """See `SkeletonCompressorService.compress_siblings`."""
    wanted = _checked_children(children)
    try:
        return _packed(compressor, policy, fragments, wanted, max_value_loss, pricing)
    except FragmentError as error:
        try:
            said = _said_of_the_child(error, fragments, wanted)
        except Exception:  # a mapping that fails when asked again: the error stands as it is
            said = None
        if said is None:
            raise
        raise said from None


def _said_of_the_child(
    error: FragmentError, fragments: object, children: list[Child]
) -> FragmentError | None:
    """`error` named after the child whose score it is about, when it is: each child's
    context is checked in turn, so it is the first child that gives that fragment a bad
    score (its own, or when it names none, the parent's; then None)."""
    if error.kind not in _SCORE_KINDS or not isinstance(fragments, tuple):
        return None
    fragment_id, index = error.fragment_id, error.index
    for position, child in enumerate(children):
        scores = child.relevance
        named = bool(scores) and fragment_id in scores  # type: ignore[operator]
        score = scores[fragment_id] if named else fragments[index].relevance_score  # type: ignore[index]
        try:
            _values.relevance(score, index, "", "fragments")
        except FragmentError:
            return _messages.rescored_error(error, position) if named else None
    return None


def _packed(
    compressor: BackendCompressor,
    policy: Policy,
    fragments: object,
    wanted: list[Child],
    max_value_loss: object,
    pricing: object,
) -> SiblingsResult:
    share = checked_share(max_value_loss, "max_value_loss")
    prices = _checked_pricing(pricing)
    parent = checked_fragments(fragments)
    if wanted:
        packed = _packed_at_once(compressor, parent, wanted, share, prices)
        if packed is not None:
            return packed
    loss = Fraction(share)
    ids = [readable_id(fragment) for fragment in parent]
    known = set(ids)
    contexts = []
    for position, child in enumerate(wanted):
        context = _rescored(parent, ids, known, child.relevance, position)
        budget = _child_budget(child.skeleton_budget, position)
        compressor.validate(context)
        contexts.append((context, budget))
    if not wanted:
        compressor.validate(parent)  # checked as `compress` checks it, children or none
    # The children's outputs are priced and keyed by their contents, which `compress` does
    # not read: each must be a str, whichever child keeps it, before anything is kept.
    for index, fragment in enumerate(parent):
        _fragment_key(fragment, index, "fragments")
    units = _units(parent)
    siblings = []
    for context, budget in contexts:
        kept, original, compressed, value, bound, relevance, exact = compressor.compress(
            context, budget
        )
        selection = _Selection(
            _kept_units(kept, context, units), len(kept), compressed, value, relevance
        )
        siblings.append(_Sibling(context, budget, kept, selection, original, bound, exact))
    selections = [sibling.solo_selection for sibling in siblings]
    outputs = _arranged(siblings, selections, units, policy)
    cost = estimate_cost(outputs, prices)
    # What a child shares, and with a loss what it keeps, the others decide too.
    all_exact = all(sibling.exact for sibling in siblings)
    if loss and len(siblings) > 1:
        grown, grown_exact = _grown(compressor, policy, siblings, units, loss, prices, cost)
        all_exact = all_exact and grown_exact
        if grown is not None:
            selections, outputs, cost = grown
    results = tuple(
        SkeletonResult(output, _metadata(sibling, selection, len(parent), all_exact))
        for sibling, selection, output in zip(siblings, selections, outputs)
    )
    shared_units = _shared(selections)
    shared = tuple(parent[i] for i in sorted(_fragments_of(shared_units, units)))
    return SiblingsResult(
        shared,
        results,
        cost,
        estimate_cost([sibling.solo for sibling in siblings], prices),
        prefix_key(shared),
    )


def _packed_at_once(
    compressor: BackendCompressor,
    parent: tuple[ContextFragment, ...],
    wanted: list[Child],
    share: float,
    prices: CachePricing,
) -> SiblingsResult | None:
    """The backend's own packing of every child in one call (the compiled core's), or None
    where the steps below must run: they check each child in turn and word every error."""
    try:
        budgets = tuple(checked_budget(child.skeleton_budget) for child in wanted)
    except (TypeError, ValueError):
        return None
    packed = compressor.compress_siblings(
        parent,
        tuple(child.relevance for child in wanted),
        budgets,
        share,
        prices.write,
        prices.read,
        min(prices.min_prefix, _MAX_PREFIX),
    )
    if packed is None:
        return None
    shared, results, cost, independent, text = packed
    return SiblingsResult(
        shared,
        results,
        CacheCost(*cost),
        CacheCost(*independent),
        hashlib.sha256(text).hexdigest(),
    )


def prefix_key(shared: tuple[ContextFragment, ...]) -> str:
    """SHA-256 of the fragments' `(fragment_id, token_count, content)` as compact ASCII
    JSON: the same bytes on every platform and Python version."""
    keys = [_fragment_key(fragment, index, "shared") for index, fragment in enumerate(shared)]
    return hashlib.sha256(prefix_text(keys)).hexdigest()


def prefix_text(keys: list[FragmentKey]) -> bytes:
    """The text a prefix key digests: the shared fragments' keys as compact ASCII JSON."""
    return json.dumps(keys, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _checked_children(children: object) -> list[Child]:
    # A set's order is not the children's: each result answers the child at its place.
    unordered = (str, bytes, Mapping, *_messages.UNORDERED)
    if isinstance(children, unordered) or not isinstance(children, Iterable):
        got = _messages.form_name(children)
        raise TypeError(f"children must be a sequence of Child, got {got}")
    checked = []
    for position, child in enumerate(children):
        if not isinstance(child, Child):
            raise TypeError(f"children[{position}] must be a Child, got {type(child).__name__}")
        relevance = child.relevance
        if relevance is not None and not isinstance(relevance, Mapping):
            raise TypeError(
                f"children[{position}].relevance must be a Mapping of fragment_id to score "
                f"or None, got {type(relevance).__name__}"
            )
        checked.append(child)
    return checked


def _checked_pricing(pricing: object) -> CachePricing:
    if pricing is None:
        return _DEFAULT_PRICING
    if not isinstance(pricing, CachePricing):
        raise TypeError(f"pricing must be a CachePricing or None, got {type(pricing).__name__}")
    return pricing


def _child_budget(budget: object, position: int) -> int:
    try:
        return checked_budget(budget)
    except (TypeError, ValueError) as error:
        raise type(error)(f"children[{position}].{error}") from None


def _rescored(
    parent: tuple[ContextFragment, ...],
    ids: list[str | None],
    known: set[str | None],
    relevance: Mapping[str, float] | None,
    position: int,
) -> tuple[ContextFragment, ...]:
    """The parent's context as the child scores it (as `Plan.rescored` makes it); an id the
    child names that no fragment has is a ValueError. `ids` are the parent's ids (None where
    one cannot be read: that fragment is left as it is, for the compressor's check to name)."""
    if not relevance:
        return parent
    named = {}
    for key in relevance:
        plain = str.__str__(key) if isinstance(key, str) else None
        if plain is None or plain not in known:
            raise ValueError(
                f"children[{position}].relevance names fragment_id {describe(key)}, which is "
                "not in the parent's context"
            )
        named[plain] = relevance[key]
    return tuple(
        fragment
        if fragment_id is None or fragment_id not in named
        else remade(fragment, index, named[fragment_id])
        for index, (fragment, fragment_id) in enumerate(zip(parent, ids))
    )


def remade(
    fragment: ContextFragment, index: int, score: object, required: object = None
) -> ContextFragment:
    """The fragment at `fragments[index]` with `score` as its relevance (and `required`, when
    given), made directly for a plain `ContextFragment`: a child's context copies every
    fragment it rescores (or pins), and `dataclasses.replace` costs several times more. A
    subclass is made by its own class."""
    if type(fragment) is ContextFragment:
        try:
            return ContextFragment(
                fragment.fragment_id,
                fragment.token_count,
                score,  # type: ignore[arg-type]
                fragment.content,
                fragment.required if required is None else required,  # type: ignore[arg-type]
                fragment.group,
                fragment.variant_of,
            )
        except AttributeError:
            pass  # a slot left unset: read field by field below
    changes = {"relevance_score": score}
    if required is not None:
        changes["required"] = required
    return _replaced(fragment, index, changes)


# Fields that a fragment made before they existed lacks: `compress` reads them as their
# defaults, and so does the copy.
_LATER_FIELDS = frozenset({"required", "group", "variant_of"})


def _replaced(fragment: ContextFragment, index: int, changes: dict[str, object]) -> ContextFragment:
    """`dataclasses.replace(fragment, **changes)`, reading each field itself: one that cannot
    be read is named as `compress` names it (the content too, which the copy needs)."""
    values: dict[str, Any] = dict(changes)
    for field in dataclasses.fields(fragment):
        if field.init and field.name not in changes:
            try:
                values[field.name] = getattr(fragment, field.name)
            except Exception as error:
                if field.name in _LATER_FIELDS and isinstance(error, AttributeError):
                    continue
                fragment_id = readable_id(fragment)
                raise _messages.unreadable_error(index, fragment_id, field.name, error) from error
    return type(fragment)(**values)


def readable_id(fragment: object) -> str | None:
    """The fragment's id as a plain str; None when it is not a fragment or has no such id."""
    if not isinstance(fragment, ContextFragment):
        return None
    try:
        fragment_id = fragment.fragment_id
    except Exception:
        return None
    return str.__str__(fragment_id) if isinstance(fragment_id, str) else None


def _units(parent: tuple[ContextFragment, ...]) -> _Units:
    """The parent's units. Rescoring changes only relevance, so every child has the same.
    Fields are read as `compress` reads them (checked already, in every child's context)."""
    unit_of: list[int] = []
    members: list[list[int]] = []
    by_group: dict[str, int] = {}
    fields = [_fields(fragment, index) for index, fragment in enumerate(parent)]
    for index, (_, _, group, _) in enumerate(fields):
        unit = len(members) if group is None else by_group.setdefault(group, len(members))
        if unit == len(members):
            members.append([])
        members[unit].append(index)
        unit_of.append(unit)
    variant = [fields[m[0]][3] for m in members]
    required = [any(fields[i][1] for i in m) for m in members]
    tokens = [sum(fields[i][0] for i in m) for m in members]
    return _Units(unit_of, members, variant, required, tokens)


def _fields(fragment: ContextFragment, index: int) -> tuple[int, bool, str | None, str | None]:
    """A checked fragment's token count, `required`, group and `variant_of` as `compress`
    reads them: through `__index__` and as the plain str they hold, never a subclass's own
    `__int__` or `__str__`."""
    return (
        _values.token_count(fragment.token_count, index, None, "fragments"),
        _values.required(getattr(fragment, "required", False), index, "", "fragments"),
        _values.group(getattr(fragment, "group", None), index, "", "fragments"),
        _values.variant_of(getattr(fragment, "variant_of", None), index, "", "fragments"),
    )


def _score(fragment: ContextFragment, index: int) -> float:
    """A checked fragment's relevance as `compress` reads it (a float subclass's own value,
    not its `__float__`)."""
    return _values.relevance(fragment.relevance_score, index, "", "fragments")


def _kept_units(
    kept: tuple[ContextFragment, ...], context: tuple[ContextFragment, ...], units: _Units
) -> frozenset[int]:
    """The units of the `kept` fragments, objects of `context`: found by what they are, not
    by their ids, which user code may have changed since they were read."""
    row_of = {id(fragment): row for row, fragment in enumerate(context)}
    return frozenset(units.unit_of[row_of[id(fragment)]] for fragment in kept)


def _fragments_of(kept: Iterable[int], units: _Units) -> list[int]:
    return [index for unit in kept for index in units.members[unit]]


def _shared(selections: list[_Selection]) -> frozenset[int]:
    if not selections:
        return frozenset()
    return frozenset.intersection(*(selection.kept for selection in selections))


def _unit_rank_key(
    unit: int, units: _Units, context: tuple[ContextFragment, ...]
) -> tuple[float, str]:
    """A unit's place in the child's ranking: its best member's relevance descending, then
    that member's id (the lead: relevance descending, id ascending)."""
    return min(
        (-_score(context[i], i), str.__str__(context[i].fragment_id)) for i in units.members[unit]
    )


def _arrangement(
    sibling: _Sibling, kept: frozenset[int], shared: frozenset[int], units: _Units, order: str
) -> tuple[ContextFragment, ...]:
    context = sibling.context
    rows = arranged_rows(
        kept, shared, units.members, lambda unit: _unit_rank_key(unit, units, context), order
    )
    return tuple(context[i] for i in rows)


def arranged_rows(
    kept: Iterable[int],
    shared: frozenset[int],
    members: list[list[int]],
    rank_key: Callable[[int], tuple[float, str]],
    order: str,
) -> list[int]:
    """The shared units' fragments in input order, then the other `kept` units' as `order`
    arranges them among themselves (by `rank_key` for `ranking` and `edges`), members of a
    unit in input order."""
    head = sorted(index for unit in shared for index in members[unit])
    rest = [unit for unit in kept if unit not in shared]
    if order == "input":
        return head + sorted(index for unit in rest for index in members[unit])
    rest.sort(key=rank_key)
    if order == "edges":
        rest = rest[::2] + rest[1::2][::-1]
    return head + [index for unit in rest for index in members[unit]]


def _arranged(
    siblings: list[_Sibling], selections: list[_Selection], units: _Units, policy: Policy
) -> list[tuple[ContextFragment, ...]]:
    shared = _shared(selections)
    return [
        _arrangement(sibling, selection.kept, shared, units, policy.order)
        for sibling, selection in zip(siblings, selections)
    ]


def _metadata(
    sibling: _Sibling, selection: _Selection, total: int, all_exact: bool
) -> SkeletonMetadata:
    """As `compress` fills it for this selection: the bound is the solo call's, the most any
    selection within the budget keeps under the child's policy (a re-solve with shared units
    marked required reports a bound for that narrower problem, which is not this); exact
    when every solve of the packing finished (`all_exact`)."""
    return SkeletonMetadata.of(
        sibling.original,
        selection.compressed,
        sibling.budget,
        total,
        selection.fragments,
        selection.value,
        sibling.bound,
        0,
        selection.relevance,
        exact=all_exact,
    )


def _grown(
    compressor: BackendCompressor,
    policy: Policy,
    siblings: list[_Sibling],
    units: _Units,
    loss: Fraction,
    pricing: CachePricing,
    cost: CacheCost,
) -> tuple[tuple[list[_Selection], list[tuple[ContextFragment, ...]], CacheCost] | None, bool]:
    """A larger shared set, when one costs less and leaves every child at least
    (1 - loss) of its solo value within its budget (None when none was found), and whether
    every re-solve made to look for it finished: one stopped short may have refused a set
    that holds.

    Candidates are the units some children keep and others do not, eligible in every child,
    tried by how many children keep them (most first), then by input position: those cost
    the fewest children any value. They are tried in batches, a batch doubling after a
    success and halving after a failure (a single candidate that fails is dropped), at most
    `_MAX_TRIALS` batches; a trial stops at the first child that fails, and that child is
    asked first next time. Every step is deterministic, so both backends take the same ones.
    """
    if any(sibling.budget == 0 for sibling in siblings):
        return None, True  # a budget of 0 keeps only required units: none joins the shared set
    solo = [sibling.solo_selection for sibling in siblings]
    keeping: dict[int, int] = {}
    for selection in solo:
        for unit in selection.kept:
            keeping[unit] = keeping.get(unit, 0) + 1
    queue = sorted(
        (
            unit
            for unit, count in keeping.items()
            if count < len(siblings) and _eligible(unit, siblings, units, policy)
        ),
        key=lambda unit: (-keeping[unit], unit),
    )
    needed = [_needed(selection.value, loss) for selection in solo]
    # The shared set grows: what every child keeps alone stays in every child.
    forced = [unit for unit in sorted(_shared(solo)) if not units.required[unit]]
    best: tuple[list[_Selection], list[tuple[ContextFragment, ...]], CacheCost] | None = None
    best_billed = cost.billed
    asked = list(range(len(siblings)))
    copies: list[dict[int, ContextFragment]] = [{} for _ in siblings]
    size, trials = len(queue), 0
    all_exact = True
    while queue and trials < _MAX_TRIALS:
        batch = _batch(queue, forced, size, units)
        if not batch:
            break
        trials += 1
        found, exact = _trial(compressor, siblings, units, forced + batch, needed, asked, copies)
        all_exact = all_exact and exact
        if found is not None:
            outputs = _arranged(siblings, found, units, policy)
            # Unchecked: a trial priced past the largest float is only not cheaper.
            priced = cost_fields(outputs, pricing)
            if priced[0] < best_billed:
                best, best_billed = (found, outputs, CacheCost(*priced)), priced[0]
                forced += batch
                taken = set(batch)
                queue = [unit for unit in queue if unit not in taken]
                size *= 2
                continue
        if size > 1:
            size //= 2
        else:
            queue.remove(batch[0])
    return best, all_exact


def _eligible(unit: int, siblings: list[_Sibling], units: _Units, policy: Policy) -> bool:
    """Every child may keep the unit: it is required, or at or above every child's floor."""
    if units.required[unit]:
        return True
    floor = policy.min_relevance
    members = units.members[unit]
    return all(max(_score(sibling.context[i], i) for i in members) >= floor for sibling in siblings)


def _needed(value: int, loss: Fraction) -> int:
    """The least value, in units, that keeps at least (1 - loss) of `value`, exactly."""
    least = (1 - loss) * value
    return -((-least.numerator) // least.denominator)


def _batch(queue: list[int], forced: list[int], size: int, units: _Units) -> list[int]:
    """The next `size` candidates, passing over one whose variant set the shared set or the
    batch already holds (a child keeps one unit of a set); one whose set is shared already
    can never be added and leaves the queue."""
    sets = {units.variant[unit] for unit in forced} - {None}
    batch: list[int] = []
    for unit in list(queue):
        name = units.variant[unit]
        if name is not None and name in sets:
            if any(units.variant[other] == name for other in forced):
                queue.remove(unit)
            continue
        batch.append(unit)
        if name is not None:
            sets.add(name)
        if len(batch) == size:
            break
    return batch


def _trial(
    compressor: BackendCompressor,
    siblings: list[_Sibling],
    units: _Units,
    forced: list[int],
    needed: list[int],
    asked: list[int],
    copies: list[dict[int, ContextFragment]],
) -> tuple[list[_Selection] | None, bool]:
    """Every child's selection with the `forced` units marked required (None at the first
    child that would go over its budget or keep less than it needs; that child moves to the
    front of `asked`), and whether every child's solve finished."""
    found: list[_Selection | None] = [None] * len(siblings)
    forced_fragments = _fragments_of(forced, units)
    forced_tokens = sum(units.tokens[unit] for unit in forced if not units.required[unit])
    required_tokens = sum(tokens for tokens, pinned in zip(units.tokens, units.required) if pinned)
    all_exact = True
    for position, child in enumerate(asked):
        sibling = siblings[child]
        selection = None
        if required_tokens + forced_tokens <= sibling.budget:
            context = list(sibling.context)
            made = copies[child]
            for index in forced_fragments:
                copy = made.get(index)
                if copy is None:
                    fragment = context[index]
                    copy = made[index] = remade(fragment, index, fragment.relevance_score, True)
                context[index] = copy
            sent = tuple(context)
            kept, _, compressed, value, _, relevance, exact = compressor.compress(
                sent, sibling.budget
            )
            all_exact = all_exact and exact
            if compressed <= sibling.budget and value >= needed[child]:
                selection = _Selection(
                    _kept_units(kept, sent, units), len(kept), compressed, value, relevance
                )
        if selection is None:
            asked.insert(0, asked.pop(position))
            return None, all_exact
        found[child] = selection
    return found, all_exact  # type: ignore[return-value]
