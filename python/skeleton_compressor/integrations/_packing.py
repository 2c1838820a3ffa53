"""What every adapter shares: the budget, the token counter, the library's options, and one
selection over the items a framework hands over, read as columns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import _messages, _values
from .._encodings import TiktokenFailure
from ..errors import FragmentTypeError
from ..service import SkeletonCompressorService, _service
from ..tokens import Counter, counting
from ..types import BackendName, OnOverflowName, OrderName, SkeletonIndices, StrategyName

__all__ = [
    "Packing",
    "checked_token_counts",
    "listed_items",
    "missing_score_error",
    "not_item_error",
]


class Packing:
    """The options an adapter is made with, checked once: `skeleton_budget` (an int >= 0),
    `token_counter` (a `TokenCounter`, an encoding's name, a callable `str -> int`, or None
    for `o200k_base`), and the keywords of `SkeletonCompressorService`.

    Items are named in errors as `<container>[i]`, with their id when they have one, in the
    library's own error types (`FragmentTypeError`, `FragmentValueError`)."""

    __slots__ = ("_count_many", "service", "skeleton_budget")

    def __init__(
        self,
        skeleton_budget: int,
        token_counter: Counter | None = None,
        *,
        strategy: StrategyName = "greedy",
        min_relevance: float = 0.0,
        on_overflow: OnOverflowName = "keep_top",
        order: OrderName = "ranking",
        backend: BackendName = "auto",
    ) -> None:
        self.skeleton_budget = _values.checked_budget(skeleton_budget)
        self.service = SkeletonCompressorService(
            backend=backend,
            strategy=strategy,
            min_relevance=min_relevance,
            on_overflow=on_overflow,
            order=order,
        )
        # Counts from a callable are checked once, by `select`, which every count goes to.
        self._count_many, _ = counting(token_counter, self.service.backend)

    def token_counts(self, texts: Sequence[object], container: str) -> list[Any]:
        """Each text's tokens, as the counter gives them (`select` checks a callable's); a
        str subclass is counted as the plain str it holds, and a text that is not a str is a
        TypeError naming `<container>[i]`."""
        plain: list[str] = []
        for index, text in enumerate(texts):
            held = text if type(text) is str else _values.plain_str(text)
            if held is None:
                raise _messages.text_type_error(f"{container}[{index}]", text)
            plain.append(held)
        try:
            return self._count_many(plain)
        except TiktokenFailure as failure:
            raise failure.named(f"{container}[{failure.index}]") from None

    def select(
        self,
        token_counts: Sequence[object],
        relevance_scores: Sequence[object],
        container: str,
        *,
        ids: Sequence[str | None] | None = None,
        required: Sequence[bool] | None = None,
        groups: Sequence[str | None] | None = None,
        strict: bool = False,
    ) -> SkeletonIndices:
        """The rows kept within the budget, in the service's order, and the metadata. Counts
        and scores are checked here so that an error names the item (`<container>[i]`, with
        its id from `ids`); ties in relevance keep input order. `strict`: `on_overflow="raise"`
        is taken as `"strict"` (nothing is kept, not raised, when nothing fits)."""
        size = len(token_counts)
        counts = checked_token_counts(token_counts, container, ids)
        scores = _values.plain_relevances(list(relevance_scores))
        if scores is None:
            scores = [
                _values.relevance(score, index, _name(ids, index), container)  # type: ignore[arg-type]
                for index, score in enumerate(relevance_scores)
            ]
        # Row names whose order is the rows' order, so that ties are ranked by input order.
        width = len(str(size - 1)) if size else 1
        names = [str(index).zfill(width) for index in range(size)]
        service = self.service
        if strict and service.policy.on_overflow == "raise":
            # The module's service of the same options but `strict`, made once for all.
            policy = service.policy
            service = _service(
                service.backend,
                service.strategy,
                (policy.min_relevance, "strict", policy.order),
                service.max_work,
            )
        return service.compress_arrays(
            names, counts, scores, self.skeleton_budget, required=required, groups=groups
        )


def checked_token_counts(
    token_counts: Sequence[object], container: str, ids: Sequence[str | None] | None = None
) -> list[int]:
    """The counts as plain ints, an error naming `<container>[i]` (and its id from `ids`) for
    one the library refuses."""
    counts = _values.plain_token_counts(list(token_counts))
    if counts is not None:
        return counts
    return [
        _values.token_count(count, index, _name(ids, index), container)
        for index, count in enumerate(token_counts)
    ]


def _name(ids: Sequence[str | None] | None, index: int) -> str | None:
    return None if ids is None else ids[index]


def listed_items(items: object, container: str, expected: str) -> list[Any]:
    """The items a framework hands over, from a list or any iterable, read once, up front; a
    `TypeError` naming `container` for a value that cannot be iterated, or a mapping (whose
    keys would pass for the items)."""
    try:
        if isinstance(items, Mapping):
            raise TypeError
        iterator = iter(items)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(
            f"{container} must be an iterable of {expected}, got {_messages._typed(items)}"
        ) from None
    return list(iterator)


def missing_score_error(
    container: str, index: int, item_id: str | None, absent: str, remedy: str
) -> FragmentTypeError:
    """An item without the relevance score an adapter reads: `absent` says what is missing
    (`metadata['relevance_score'] is missing`), `remedy` how to score such items instead."""
    detail = f"no relevance score: {absent} ({remedy})"
    return _messages._error(FragmentTypeError, "relevance_type", index, item_id, container, detail)


def not_item_error(container: str, index: int, item: object, expected: str) -> FragmentTypeError:
    """`<container>[i] must be <expected>, got ...` (kind `not_fragment`): an item that is not
    the framework's object."""
    detail = f"must be {expected}, got {_messages._typed(item)}"
    return _messages._error(FragmentTypeError, "not_fragment", index, None, container, detail)
