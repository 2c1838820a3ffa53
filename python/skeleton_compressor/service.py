"""SkeletonCompressorService and the module-level shortcuts over it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice, repeat
from typing import Any, Literal, cast

from ._backends.choice import backend_variable
from ._backends.loader import checked_strategy, make_compressor
from ._values import plain_str
from .policy import Policy, checked_policy
from .pricing import CachePricing
from .siblings import Child, SiblingsResult, pack_siblings
from .types import (
    BackendName,
    ContextFragment,
    FragmentDecision,
    OnOverflowName,
    OrderName,
    SkeletonExplanation,
    SkeletonIndices,
    SkeletonMetadata,
    SkeletonResult,
    StrategyName,
)
from .validation import (
    DEFAULT_MAX_WORK,
    checked_budget,
    checked_budgets,
    checked_columns,
    checked_fragments,
    checked_max_work,
    checked_previous,
    checked_previous_rows,
    checked_share,
)

_new_tuple = tuple.__new__
# Decisions made at a time: a few milliseconds, between which Ctrl-C is answered.
_DECISIONS_AT_ONCE = 1 << 14

__all__ = [
    "SkeletonCompressorService",
    "compress",
    "compress_arrays",
    "compress_siblings",
    "explain",
    "validate_fragments",
]


class SkeletonCompressorService:
    """Compresses parent context for a child plan; satisfies `SkeletonCompressor`.

    The options are chosen once, when the service is made, and checked then:

    `backend` is "auto", "rust" or "python"; `.backend` tells which one is in use ("auto"
    means what `SKELETON_COMPRESSOR_BACKEND` says, else Rust when the extension is built).
    `strategy` is "greedy" (walk the ranking, skip what does not fit, go on), "prefix" (stop
    at the first fragment that does not fit), "density" (walk by relevance per token, or keep
    the single best unit if it is worth more: at least half the optimum) or "optimal" (the
    most total relevance that fits, exactly). Every result's metadata has `value_kept` and
    `value_bound`, an upper bound on what any selection within the budget keeps.
    `min_relevance` keeps units below it out unless required; `on_overflow` ("keep_top",
    "strict", "raise") says what happens when the budget cannot be met; `order` ("ranking",
    "input", "edges") is the order of the kept fragments.
    `max_work` (an int >= 1, or None for no limit) bounds the work of `optimal` on each
    budget, in its own steps, so that a call ends within about a second and a few hundred
    MiB by default on any input; a result that reached it is the best selection found
    (never worth less than `density`'s) and its `metadata.exact` is False.

    Raises:
        ValueError: an unknown backend, strategy, `on_overflow` or `order`, a
            `min_relevance` outside [0, 1], or a `max_work` below 1.
        TypeError: a `min_relevance` that is not a real number, or a `max_work` that is
            neither an int nor None.
        ImportError: `backend="rust"` (or "auto" with `SKELETON_COMPRESSOR_BACKEND=rust`)
            where the compiled extension is not built; the message says how to build it.
    """

    __slots__ = ("_backend", "_compressor", "_policy")

    def __init__(
        self,
        *,
        backend: BackendName = "auto",
        strategy: StrategyName = "greedy",
        min_relevance: float = 0.0,
        on_overflow: OnOverflowName = "keep_top",
        order: OrderName = "ranking",
        max_work: int | None = DEFAULT_MAX_WORK,
    ) -> None:
        self._backend, self._policy, self._compressor = make_compressor(
            backend, strategy, min_relevance, on_overflow, order, max_work
        )

    @property
    def backend(self) -> Literal["rust", "python"]:
        """The backend in use: "rust" or "python"."""
        return cast('Literal["rust", "python"]', self._backend)

    @property
    def strategy(self) -> StrategyName:
        """The strategy: "greedy", "prefix", "density" or "optimal"."""
        return cast(StrategyName, self._compressor.strategy)

    @property
    def max_work(self) -> int | None:
        """The most work `optimal` does per budget (None: no limit)."""
        return self._compressor.max_work

    @property
    def policy(self) -> Policy:
        """`min_relevance`, `on_overflow` and `order`."""
        return self._policy

    def __repr__(self) -> str:
        options = "".join(
            f", {name}={value!r}"
            for name, value, default in zip(self._policy._fields, self._policy, Policy())
            if value != default
        )
        if self.max_work != DEFAULT_MAX_WORK:
            options += f", max_work={self.max_work!r}"
        return (
            f"SkeletonCompressorService(backend={self._backend!r}, strategy={self.strategy!r}"
            f"{options})"
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled (and copied) as the options it was made with, the backend as resolved: a
        # copy in another process compresses as this one does, or fails to be made there
        # as this one would have (no extension built).
        min_relevance, on_overflow, order = self._policy
        return _remade, (
            self._backend,
            self.strategy,
            min_relevance,
            on_overflow,
            order,
            self.max_work,
        )

    def validate(self, fragments: tuple[ContextFragment, ...]) -> None:
        """Checks `fragments` as `compress` would, without compressing.

        Raises:
            TypeError: `fragments` is not a tuple.
            FragmentTypeError, FragmentValueError: the first bad fragment, or the first
                repeated id (see `FragmentError` for the fields).
        """
        self._compressor.validate(checked_fragments(fragments))

    def compress(
        self,
        fragments: tuple[ContextFragment, ...],
        skeleton_budget: int,
        *,
        previous: Sequence[ContextFragment] | None = None,
        max_value_loss: float = 0.0,
        headroom: float = 0.0,
    ) -> SkeletonResult:
        """The fragments the child inherits: the most relevant that fit `skeleton_budget`,
        chosen by this service's strategy and policy.

        Args:
            fragments: a tuple of `ContextFragment`, ids unique.
            skeleton_budget: the child's token budget, an int >= 0 (numpy integers
                accepted; bool refused).
            previous: None, or what an earlier call returned (a tuple or list of
                `ContextFragment`): the longest leading run of it that the value allows is
                kept first, in its order, so that a provider's prompt cache serves it again
                (docs/turns.md); `metadata.reused_tokens` counts it.
            max_value_loss: the share of the value kept without `previous` that reusing it
                may cost, in [0, 1).
            headroom: in [0, 1): when the reused run breaks anyway, the share of the budget
                left free for the next turns.

        Returns:
            A `SkeletonResult`: the kept fragments (the objects passed in) in the output
            order, and a `SkeletonMetadata`.

        Raises:
            TypeError: `fragments` is not a tuple, or the budget is not an int.
            ValueError: the budget is negative.
            FragmentTypeError, FragmentValueError: the first bad fragment, or a repeated id.
            BudgetExceededError: `on_overflow` is "strict" or "raise" and the required
                fragments alone exceed the budget, or ("raise") a positive budget fits
                nothing.
            TypeError, ValueError: `previous` is not a tuple or list of `ContextFragment`
                (naming `previous[i]`), or `max_value_loss` or `headroom` is not a real
                number in [0, 1).
        """
        # The checks inline where they pass at a glance: planners make this call many times
        # a second, with a handful of fragments.
        if type(fragments) is not tuple:
            fragments = checked_fragments(fragments)
        if type(skeleton_budget) is not int or skeleton_budget < 0:
            skeleton_budget = checked_budget(skeleton_budget)
        if _reuses(previous, max_value_loss, headroom):
            return self._turn(fragments, skeleton_budget, previous, max_value_loss, headroom).result
        return self._compressor.compress_result(fragments, skeleton_budget)

    def explain(
        self,
        fragments: tuple[ContextFragment, ...],
        skeleton_budget: int,
        *,
        previous: Sequence[ContextFragment] | None = None,
        max_value_loss: float = 0.0,
        headroom: float = 0.0,
    ) -> SkeletonExplanation:
        """`compress`, and why each fragment was kept or dropped.

        Takes and checks the arguments as `compress` does, and raises what it raises.

        Returns:
            A `SkeletonExplanation`: the result `compress` would return, and one
            `FragmentDecision` per fragment, in input order (`kept`, `reason`, `rank`,
            `budget_left`); with `previous`, the reused run's fragments have the reason
            `reused`.
        """
        fragments = checked_fragments(fragments)
        budget = checked_budget(skeleton_budget)
        if _reuses(previous, max_value_loss, headroom):
            return self._turn(fragments, budget, previous, max_value_loss, headroom, True)
        kept, original, compressed, value, bound, relevance, decisions, exact = (
            self._compressor.explain(fragments, budget)
        )
        metadata = SkeletonMetadata.of(
            original,
            compressed,
            budget,
            len(fragments),
            len(kept),
            value,
            bound,
            0,
            relevance,
            exact,
        )
        made = _decisions(zip(fragments, *decisions))
        return SkeletonExplanation(SkeletonResult(kept, metadata), made)

    def _turn(
        self,
        fragments: tuple[ContextFragment, ...],
        budget: int,
        previous: object,
        max_value_loss: object,
        headroom: object,
        explain: bool = False,
    ) -> SkeletonExplanation:
        """`compress` or `explain` given `previous`; without explaining, the decisions are
        empty."""
        earlier = () if previous is None else checked_previous(previous)
        loss = checked_share(max_value_loss, "max_value_loss")
        room = checked_share(headroom, "headroom")
        kept, original, compressed, value, bound, relevance, reused, decisions, exact = (
            self._compressor.compress_turn(fragments, budget, earlier, loss, room, explain)
        )
        metadata = SkeletonMetadata.of(
            original,
            compressed,
            budget,
            len(fragments),
            len(kept),
            value,
            bound,
            reused,
            relevance,
            exact,
        )
        made = () if decisions is None else _decisions(zip(fragments, *decisions))
        return SkeletonExplanation(SkeletonResult(kept, metadata), made)

    def compress_many(
        self, fragments: tuple[ContextFragment, ...], skeleton_budgets: Iterable[int]
    ) -> tuple[SkeletonResult, ...]:
        """One result per budget, each equal to `compress(fragments, budget)`; the fragments
        are checked and ranked once.

        Args:
            fragments: as for `compress`.
            skeleton_budgets: an iterable of budgets, each an int >= 0.

        Returns:
            A tuple of `SkeletonResult`, one per budget, in the budgets' order.

        Raises:
            What `compress` raises, and TypeError when `skeleton_budgets` is not an iterable
            or is a set (no order of its own);
            with `on_overflow` "strict" or "raise", the first budget that raises.
        """
        fragments = checked_fragments(fragments)
        budgets = checked_budgets(skeleton_budgets)
        original, packed = self._compressor.compress_many(fragments, budgets)
        total = len(fragments)
        return tuple(
            SkeletonResult(
                kept,
                SkeletonMetadata.of(
                    original,
                    compressed,
                    budget,
                    total,
                    len(kept),
                    value,
                    bound,
                    0,
                    relevance,
                    exact,
                ),
            )
            for budget, (kept, compressed, value, bound, relevance, exact) in zip(budgets, packed)
        )

    def compress_arrays(
        self,
        fragment_ids: Sequence[str],
        token_counts: Any,
        relevance_scores: Any,
        skeleton_budget: int,
        *,
        required: Any = None,
        groups: Any = None,
        variants: Any = None,
        previous: Any = None,
        max_value_loss: float = 0.0,
        headroom: float = 0.0,
    ) -> SkeletonIndices:
        """`compress` on columns: row i is (fragment_ids[i], token_counts[i],
        relevance_scores[i]), with `required[i]`, `groups[i]` and `variants[i]` when those
        columns are given.

        Args:
            fragment_ids: a sequence (or iterable, not a set) of str.
            token_counts, relevance_scores: lists, tuples, `array.array` or numpy arrays
                (read through the buffer protocol; numpy is never imported), or iterables
                (not sets, whose order is not their rows').
            skeleton_budget: as for `compress`.
            required: None, or a column of bool.
            groups: None, or a column of group names (None or a non-empty str).
            variants: None, or a column of variant_of names (None or a non-empty str).
            previous: None, or the row numbers an earlier call kept, in its output order,
                as rows of these columns: `compress`'s `previous` (the caller vouches that
                those rows hold the same fragments); `max_value_loss` and `headroom` as
                for `compress`.

        Returns:
            A `SkeletonIndices`: the kept row numbers in output order as an int64
            `array.array` (`numpy.frombuffer(indices, dtype=numpy.int64)` wraps it without a
            copy), and the metadata.

        Raises:
            TypeError: a column of the wrong form (a str, a set, a numpy masked array with
                masked rows, a buffer of booleans, complex numbers or bytes, ...), or a budget
                that is not an int.
            ValueError: a negative budget, or columns of different lengths.
            TypeError, ValueError: `previous` is not a sequence of ints each a row of
                these columns (naming `previous[i]`), or `max_value_loss` or `headroom` is
                not a real number in [0, 1).
            FragmentTypeError, FragmentValueError: the first bad row, named `rows[i]`, or a
                repeated id.
            BudgetExceededError: as for `compress`.
        """
        columns = checked_columns(
            fragment_ids, token_counts, relevance_scores, required, groups, variants
        )
        ids, tokens, scores, flags, names, renders = columns
        budget = checked_budget(skeleton_budget)
        earlier = None if previous is None else checked_previous_rows(previous, columns)
        loss = checked_share(max_value_loss, "max_value_loss")
        room = checked_share(headroom, "headroom")
        kept, original, compressed, rows, value, bound, relevance, reused, exact = (
            self._compressor.compress_arrays(
                ids, tokens, scores, flags, names, budget, renders, earlier, loss, room
            )
        )
        metadata = SkeletonMetadata.of(
            original, compressed, budget, rows, len(kept), value, bound, reused, relevance, exact
        )
        return SkeletonIndices(kept, metadata)

    def compress_siblings(
        self,
        fragments: tuple[ContextFragment, ...],
        children: Sequence[Child],
        *,
        max_value_loss: float = 0.0,
        pricing: CachePricing | None = None,
    ) -> SiblingsResult:
        """The children of one parent packed together: each child's selection, with the units
        every child keeps first, in the parent's input order, so that a provider's prompt cache
        serves them to every child but the first.

        Args:
            fragments: the parent's context, a tuple of `ContextFragment`.
            children: a sequence of `Child(skeleton_budget, relevance)`: each child's budget and
                its own scores of the parent's fragments by id (None: the parent's).
            max_value_loss: 0 (default): every child keeps exactly what `compress` keeps of its
                context (its solo result), and only the order changes. In (0, 1): the shared
                set may grow by units that every child then keeps (marked required in its call),
                when `estimate_cost` of the outputs falls and every child still keeps at least
                (1 - max_value_loss) of its solo value (exactly, in units of 2**-32) within its
                budget; never costlier than 0's answer.
            pricing: the provider's cache prices for `estimate_cost`; None for `CachePricing()`.

        Returns:
            A `SiblingsResult`: the shared fragments, one `SkeletonResult` per child (its
            fragments as the child scored them: the shared ones in input order, then its others
            by this service's `order` among themselves; the metadata of that selection, with the
            solo call's `value_bound`), the cost of the outputs and of the solo results, and a
            `prefix_key` for the shared fragments.

        Raises:
            TypeError: `children` is not a sequence of `Child`, a child's `relevance` is not a
                mapping, `max_value_loss` is not a real number, `pricing` is neither a
                `CachePricing` nor None.
            ValueError: `max_value_loss` outside [0, 1), or a child's relevance names an id not
                in the context (named `children[i]`).
            What `compress` raises for each child's context and budget (a budget's error named
                `children[i]`), every child checked before any is compressed.
        """
        return pack_siblings(
            self._compressor, self._policy, fragments, children, max_value_loss, pricing
        )


def _remade(
    backend: BackendName,
    strategy: StrategyName,
    min_relevance: float,
    on_overflow: OnOverflowName,
    order: OrderName,
    max_work: int | None = DEFAULT_MAX_WORK,
) -> SkeletonCompressorService:
    """A service with these options: what a pickled one is made again from."""
    return SkeletonCompressorService(
        backend=backend,
        strategy=strategy,
        min_relevance=min_relevance,
        on_overflow=on_overflow,
        order=order,
        max_work=max_work,
    )


def _reuses(previous: object, max_value_loss: object, headroom: object) -> bool:
    """Whether a call takes the turn's path: given `previous`, or a share other than the
    float 0.0 (checked there, so that a bad one is refused with or without `previous`)."""
    return (
        previous is not None
        or type(max_value_loss) is not float
        or type(headroom) is not float
        or max_value_loss != 0.0
        or headroom != 0.0
    )


_shared: dict[tuple[Any, ...], SkeletonCompressorService] = {}
_by_options: dict[tuple[Any, ...], SkeletonCompressorService] = {}


def _service(
    backend: BackendName,
    strategy: StrategyName,
    policy: tuple[object, object, object] = Policy(),
    max_work: object = DEFAULT_MAX_WORK,
) -> SkeletonCompressorService:
    environment = backend_variable()
    min_relevance, on_overflow, order = policy
    # Options of these exact types are equal only when they mean the same, so they find a
    # service made from them before without being checked again (the checks cost more than
    # a small call); others, such as numpy floats, bools or NaN, are checked first.
    plain = (
        type(backend) is str
        and type(strategy) is str
        and type(min_relevance) is float
        and type(on_overflow) is str
        and type(order) is str
        and (max_work is None or type(max_work) is int)
    )
    if plain:
        options = (backend, strategy, min_relevance, on_overflow, order, max_work, environment)
        found = _by_options.get(options)
        if found is not None:
            return found
    # Keyed on the checked, plain values: a subclass's own `__eq__` cannot pick another
    # service, and invalid options raise here as the constructor would raise them.
    strategy = checked_strategy(strategy)
    checked = checked_policy(*policy)
    work = checked_max_work(max_work)
    # The backend's name as the constructor reads it: the plain str a subclass holds (None
    # for a name that is no str, which the constructor refuses).
    key = (plain_str(backend), strategy, checked, work, environment)
    try:
        service = _shared.get(key)
    except TypeError:  # an unhashable backend or strategy: refused by the constructor
        service = None
    if service is None:
        min_relevance, on_overflow, order = checked
        service = SkeletonCompressorService(
            backend=backend,
            strategy=strategy,
            min_relevance=min_relevance,
            on_overflow=on_overflow,
            order=order,
            max_work=work,
        )
        if len(_shared) < 64:
            _shared[key] = service
    if plain and len(_by_options) < 64:
        _by_options[options] = service
    return service


def compress(
    fragments: tuple[ContextFragment, ...],
    skeleton_budget: int,
    *,
    strategy: StrategyName = "greedy",
    backend: BackendName = "auto",
    min_relevance: float = 0.0,
    on_overflow: OnOverflowName = "keep_top",
    order: OrderName = "ranking",
    max_work: int | None = DEFAULT_MAX_WORK,
    previous: Sequence[ContextFragment] | None = None,
    max_value_loss: float = 0.0,
    headroom: float = 0.0,
) -> SkeletonResult:
    """Compresses `fragments` to `skeleton_budget`: `SkeletonCompressorService(...)
    .compress(fragments, skeleton_budget)` with these options, the services shared between
    calls.

    Args:
        fragments: a tuple of `ContextFragment`, ids unique.
        skeleton_budget: the token budget, an int >= 0.
        strategy: "greedy" (default), "prefix", "density" or "optimal".
        backend: "auto" (default), "rust" or "python".
        min_relevance, on_overflow, order: the selection policy (see
            `SkeletonCompressorService`).
        max_work: the most work `optimal` does per budget (None: no limit; see
            `SkeletonCompressorService`).
        previous, max_value_loss, headroom: reuse of an earlier call's output (see
            `SkeletonCompressorService.compress` and docs/turns.md).

    Returns:
        A `SkeletonResult`: the kept fragments and the metadata.

    Raises:
        What `SkeletonCompressorService(...)` raises for the options, and what its
        `compress` raises for the fragments and the budget.
    """
    service = _service(backend, strategy, (min_relevance, on_overflow, order), max_work)
    return service.compress(
        fragments,
        skeleton_budget,
        previous=previous,
        max_value_loss=max_value_loss,
        headroom=headroom,
    )


def explain(
    fragments: tuple[ContextFragment, ...],
    skeleton_budget: int,
    *,
    strategy: StrategyName = "greedy",
    backend: BackendName = "auto",
    min_relevance: float = 0.0,
    on_overflow: OnOverflowName = "keep_top",
    order: OrderName = "ranking",
    max_work: int | None = DEFAULT_MAX_WORK,
    previous: Sequence[ContextFragment] | None = None,
    max_value_loss: float = 0.0,
    headroom: float = 0.0,
) -> SkeletonExplanation:
    """`compress`, and why each fragment was kept or dropped: takes and raises what
    `compress` does, and returns a `SkeletonExplanation` (the result and one
    `FragmentDecision` per fragment, in input order). See
    `SkeletonCompressorService.explain`."""
    service = _service(backend, strategy, (min_relevance, on_overflow, order), max_work)
    return service.explain(
        fragments,
        skeleton_budget,
        previous=previous,
        max_value_loss=max_value_loss,
        headroom=headroom,
    )


def compress_arrays(
    fragment_ids: Sequence[str],
    token_counts: Any,
    relevance_scores: Any,
    skeleton_budget: int,
    *,
    required: Any = None,
    groups: Any = None,
    variants: Any = None,
    previous: Any = None,
    max_value_loss: float = 0.0,
    headroom: float = 0.0,
    strategy: StrategyName = "greedy",
    backend: BackendName = "auto",
    min_relevance: float = 0.0,
    on_overflow: OnOverflowName = "keep_top",
    order: OrderName = "ranking",
    max_work: int | None = DEFAULT_MAX_WORK,
) -> SkeletonIndices:
    """`compress` on columns, for large sets: returns the kept row numbers and the metadata
    as a `SkeletonIndices`. The options are those of `compress`; the columns, what it
    returns and raises are described at `SkeletonCompressorService.compress_arrays`."""
    service = _service(backend, strategy, (min_relevance, on_overflow, order), max_work)
    return service.compress_arrays(
        fragment_ids,
        token_counts,
        relevance_scores,
        skeleton_budget,
        required=required,
        groups=groups,
        variants=variants,
        previous=previous,
        max_value_loss=max_value_loss,
        headroom=headroom,
    )


def validate_fragments(
    fragments: tuple[ContextFragment, ...], *, backend: BackendName = "auto"
) -> None:
    """Runs the fragment checks `compress` runs, and raises on the first failure.

    Args:
        fragments: a tuple of `ContextFragment`.
        backend: "auto" (default), "rust" or "python"; both raise the same errors.

    Raises:
        TypeError: `fragments` is not a tuple.
        FragmentTypeError, FragmentValueError: the first bad fragment, or a repeated id.
    """
    _service(backend, "greedy").validate(fragments)


def _decisions(rows: Iterator[tuple[Any, ...]]) -> tuple[FragmentDecision, ...]:
    """A backend's decision columns, zipped with the fragments, made into named tuples
    without a Python-level call per fragment, a block at a time: one C-level pass over a
    million would hold Ctrl-C off for seconds."""
    blocks = []
    while block := list(islice(rows, _DECISIONS_AT_ONCE)):
        blocks.append(tuple(map(_new_tuple, repeat(FragmentDecision, len(block)), block)))
    return tuple(chain.from_iterable(blocks))


def compress_siblings(
    fragments: tuple[ContextFragment, ...],
    children: Sequence[Child],
    *,
    strategy: StrategyName = "greedy",
    backend: BackendName = "auto",
    min_relevance: float = 0.0,
    on_overflow: OnOverflowName = "keep_top",
    order: OrderName = "ranking",
    max_work: int | None = DEFAULT_MAX_WORK,
    max_value_loss: float = 0.0,
    pricing: CachePricing | None = None,
) -> SiblingsResult:
    """The children of one parent packed together, the part they share first:
    `SkeletonCompressorService(...).compress_siblings(...)` with these options (see there),
    the services shared between calls."""
    service = _service(backend, strategy, (min_relevance, on_overflow, order), max_work)
    return service.compress_siblings(
        fragments, children, max_value_loss=max_value_loss, pricing=pricing
    )
