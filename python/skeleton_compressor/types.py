"""The value types planners pass in and get back."""

from __future__ import annotations

import math
import sys
from array import array
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

from ._counted_texts import fragment_from_text, fragments_of_texts
from ._messages import UNORDERED, describe, form_name
from ._values import plain_real

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .tokens import Counter

__all__ = [
    "BackendName",
    "ContextFragment",
    "DecisionReason",
    "EncodingName",
    "FragmentDecision",
    "OnOverflowName",
    "OrderName",
    "SkeletonExplanation",
    "SkeletonIndices",
    "SkeletonMetadata",
    "SkeletonResult",
    "StrategyName",
]

# The closed sets of names the library takes and gives, so that a type checker refuses a
# misspelt one where the call is written instead of where it runs (tests/api checks each
# against the names the backends know).
StrategyName = Literal["greedy", "prefix", "density", "optimal"]
BackendName = Literal["auto", "rust", "python"]
OnOverflowName = Literal["keep_top", "strict", "raise"]
OrderName = Literal["ranking", "input", "edges"]
EncodingName = Literal["o200k_base", "cl100k_base"]
DecisionReason = Literal[
    "required",
    "fits",
    "top_over_budget",
    "no_room",
    "after_stop",
    "below_min_relevance",
    "zero_budget",
    "chosen",
    "not_chosen",
    "variant_kept",
    "reused",
]
# What help() shows for each (an alias takes no docstring of its own in the source).
for _alias, _doc in (
    (StrategyName, "A selection strategy: `SkeletonCompressorService(strategy=...)`."),
    (BackendName, 'A backend to ask for; `.backend` tells the one in use, "rust" or "python".'),
    (OnOverflowName, "What happens when the budget cannot be met: `on_overflow=...`."),
    (OrderName, "The order of the kept fragments: `order=...`."),
    (EncodingName, "A built-in token encoding: `TokenCounter(...)`, or a `counter=` by name."),
    (DecisionReason, "Why `explain` kept or dropped a fragment: `FragmentDecision.reason`."),
):
    object.__setattr__(_alias, "__doc__", _doc)

_RATIO_TOLERANCE = 1e-9
VALUE_UNITS = 2**32
"""Value is counted in units of 2**-32 of relevance, exact in both backends."""
_Fragment = TypeVar("_Fragment", bound="ContextFragment")
# dataclass(slots=True) needs Python 3.10; on 3.9 the classes work the same without slots.
_SLOTS: dict[str, bool] = {"slots": True} if sys.version_info >= (3, 10) else {}


@dataclass(frozen=True, **_SLOTS)
class ContextFragment:
    """One piece of parent context: a file excerpt, a note, a tool's output.

    Fields:
        fragment_id: a non-empty str, unique within one compression; ties in relevance are
            ranked by it.
        token_count: the tokens the fragment costs, an int from 0 to 2**63 - 1
            (`from_text` counts it).
        relevance_score: how much the child needs it, a real number in [0, 1].
        content: the text itself (not read by the compressor).
        required: kept whatever its relevance.
        group: fragments sharing a group are kept or dropped together.
        variant_of: fragments sharing a variant_of are renderings of one thing (the full
            text, an outline, a summary): at most one of them is kept.

    A frozen dataclass. Construction does not validate; the compressor does, and raises
    `FragmentTypeError` or `FragmentValueError` naming the fragment.
    """

    fragment_id: str
    token_count: int
    relevance_score: float
    content: str = ""
    required: bool = False
    """Kept whatever its relevance; see the overflow policy for a budget it alone exceeds."""
    group: str | None = None
    """Fragments sharing a group are kept or dropped together, in their input order."""
    variant_of: str | None = None
    """Fragments sharing a variant_of render one thing; at most one unit of them is kept."""

    @classmethod
    def from_text(
        cls: type[_Fragment],
        fragment_id: str,
        content: str,
        relevance_score: float,
        *,
        counter: Counter | None = None,
        required: bool = False,
        group: str | None = None,
        variant_of: str | None = None,
    ) -> _Fragment:
        """A fragment whose `token_count` is counted from `content`.

        Args:
            fragment_id, content, relevance_score, required, group, variant_of: the fields,
                as in `ContextFragment(...)`; only `content` is checked here.
            counter: a `TokenCounter`, an encoding's name (`"o200k_base"`,
                `"cl100k_base"`) or a callable `str -> int`; None means `o200k_base`.

        Raises:
            TypeError: `content` is not a str, or `counter` is of another type.
            ValueError: `counter` names an unknown encoding.
            ImportError: a built-in encoding is asked for where the compiled extension is
                not built (or `SKELETON_COMPRESSOR_BACKEND=python`).
            FragmentTypeError, FragmentValueError: a callable's count is not a valid
                `token_count` (checked as `compress` checks one, as `fragments[0]`). What the
                callable raises passes through.
        """
        fragment = fragment_from_text(cls, fragment_id, content, relevance_score, counter)
        if required is False and group is None and variant_of is None:
            return fragment
        return cls(
            fragment.fragment_id,
            fragment.token_count,
            fragment.relevance_score,
            fragment.content,
            required,
            group,
            variant_of,
        )

    @classmethod
    def variants(
        cls: type[_Fragment],
        base_id: str,
        renderings: Iterable[tuple[str, str, float]],
        *,
        counter: Counter | None = None,
    ) -> tuple[_Fragment, ...]:
        """Renderings of one thing (the full text, an outline, a summary), of which a
        compression keeps at most one: for each `(suffix, content, relevance_score)`, a
        fragment with id `base_id + suffix`, `variant_of=base_id`, and its `token_count`
        counted from `content` (all in one call to the counter).

        >>> full, outline = ContextFragment.variants(
        ...     "main.py", [("", "def f(): return 1", 0.9), ("#outline", "def f()", 0.6)],
        ...     counter=lambda text: len(text.split()),
        ... )
        >>> (outline.fragment_id, outline.token_count, outline.variant_of)
        ('main.py#outline', 2, 'main.py')

        Args:
            base_id: what the renderings render, their `variant_of` and the start of their ids.
            renderings: `(suffix, content, relevance_score)` triples; the suffixes make the
                ids unique (one may be "", the id then `base_id` itself).
            counter: as for `from_text`.

        Raises:
            TypeError: `base_id` or a suffix is not a str, `renderings` is a str, a set or not
                iterable, a rendering is not a triple (a str of three characters is not), or
                what `fragments_from_texts` raises for the contents and counts.
        """
        if not isinstance(base_id, str):
            raise TypeError(f"base_id must be a str, got {type(base_id).__name__}")
        suffixes: list[str] = []
        contents: list[str] = []
        scores: list[float] = []
        # A str iterates as characters, each then refused as a rendering: said of the
        # argument instead, as of anything that does not iterate, and of a set, whose order
        # (that of the fragments made) changes with the hash seed.
        unordered = (str, bytes, bytearray, *UNORDERED)
        if isinstance(renderings, unordered) or not hasattr(renderings, "__iter__"):
            raise TypeError(
                "renderings must be an iterable of (suffix, content, relevance_score) triples, "
                f"got {form_name(renderings)}"
            )
        for index, rendering in enumerate(renderings):
            # A string of three characters unpacks into three: it is no rendering.
            if isinstance(rendering, (str, bytes, bytearray)):
                suffix = None
            else:
                try:
                    suffix, content, score = rendering
                except (TypeError, ValueError):
                    suffix = None
            if not isinstance(suffix, str):
                raise TypeError(
                    f"renderings[{index}] must be a (suffix, content, relevance_score) "
                    f"triple with a str suffix, got {describe(rendering)}"
                )
            suffixes.append(suffix)
            contents.append(content)
            scores.append(score)
        # Joined as the plain strs they hold: a subclass's own `+` does not make the ids.
        base = str.__str__(base_id)
        return fragments_of_texts(
            cls,
            [base + str.__str__(suffix) for suffix in suffixes],
            contents,
            scores,
            counter=counter,
            variant_of=[base_id] * len(suffixes),
        )


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and int.__index__(value) >= 0


@dataclass(frozen=True, **_SLOTS)
class SkeletonMetadata:
    """What a compression did: tokens before and after, their ratio, the budget, how many
    fragments were kept of how many, and how much relevance was kept of the most any
    selection could keep. `over_budget` (a property, also in `to_dict` and the repr) says
    whether the kept tokens exceed the budget.

    Validates on construction, so an inconsistent record cannot exist: raises ValueError for
    a negative or non-int count, `compressed_tokens > original_tokens`, a ratio more than
    1e-9 from `compressed_tokens / original_tokens` (1.0 when there are no tokens),
    `fragments_kept > fragments_total`, a value that is negative or not finite, or a
    `kept_share` above 1 (or, without one, a value above the bound) while within budget.
    """

    original_tokens: int
    compressed_tokens: int
    ratio: float
    skeleton_budget: int | None = None
    fragments_total: int | None = None
    fragments_kept: int | None = None
    value_kept: float | None = None
    """The relevance kept: the kept fragments' relevance scores added up as written (their
    exact sum rounded once, as `math.fsum` adds them), so one fragment of 0.9 keeps 0.9."""
    value_bound: float | None = None
    """No selection within the budget under the same policy keeps more value than this (the
    fractional optimum), counted as the strategies count value when they choose: each
    relevance in units of 2**-32, rounded to the nearest. The same for every strategy and
    every selection of one problem; it can read a hair below `value_kept`, which is not
    rounded (0.8999999999068677 for one fragment of 0.9): compare with `kept_share`."""
    reused_tokens: int | None = None
    """The tokens of the leading run of `previous` sent again, byte for byte (0 when a call
    was not given `previous`; see docs/turns.md)."""
    kept_share: float | None = None
    """The value kept over `value_bound`, both in units as the strategies count them: 1.0
    for a selection that keeps the most any can (and when the bound is 0), above 1.0 only
    over budget. Given None with both values, it is `value_kept / value_bound`."""
    exact: bool | None = None
    """Whether the selection is exactly the strategy's: True for every `greedy`, `prefix` and
    `density` result and every `optimal` one that finished; False when `optimal` reached its
    `max_work` and kept the best selection it had found (never worth less than `density`'s)."""

    def __post_init__(self) -> None:
        # The common case in one expression: metadata is built on every compress call.
        original, compressed, ratio = self.original_tokens, self.compressed_tokens, self.ratio
        budget, total, kept = self.skeleton_budget, self.fragments_total, self.fragments_kept
        value_kept, value_bound = self.value_kept, self.value_bound
        reused, share = self.reused_tokens, self.kept_share
        exact = self.exact
        if (
            type(original) is int
            and type(compressed) is int
            and 0 <= compressed <= original
            and type(ratio) is float
            and abs(ratio - (compressed / original if original else 1.0)) <= _RATIO_TOLERANCE
            and (budget is None or (type(budget) is int and budget >= 0))
            and (total is None or (type(total) is int and total >= 0))
            and (
                kept is None
                or (type(kept) is int and 0 <= kept <= (kept if total is None else total))
            )
            and (value_kept is None or (type(value_kept) is float and value_kept >= 0.0))
            and (value_bound is None or (type(value_bound) is float and value_bound >= 0.0))
            and type(share) is float
            and share >= 0.0
            and (share <= 1.0 or (budget is not None and compressed > budget))
            and (reused is None or (type(reused) is int and 0 <= reused <= compressed))
            and (exact is None or type(exact) is bool)
        ):
            return
        self._check_each_field()

    def _check_each_field(self) -> None:
        self._check_fields()
        kept, bound = self.value_kept, self.value_bound
        if self.kept_share is None and kept is not None and bound is not None:
            object.__setattr__(self, "kept_share", kept / bound if bound else 1.0)

    def _check_fields(self) -> None:
        for name in ("original_tokens", "compressed_tokens"):
            if not _is_count(getattr(self, name)):
                raise ValueError(f"{name} must be an int >= 0, got {getattr(self, name)!r}")
        for name in ("skeleton_budget", "fragments_total", "fragments_kept", "reused_tokens"):
            value = getattr(self, name)
            if value is not None and not _is_count(value):
                raise ValueError(f"{name} must be None or an int >= 0, got {value!r}")
        original, compressed = plain_real(self.original_tokens), plain_real(self.compressed_tokens)
        total, kept = plain_real(self.fragments_total), plain_real(self.fragments_kept)
        reused = plain_real(self.reused_tokens)
        if compressed > original:
            raise ValueError(
                f"compressed_tokens must not exceed original_tokens, got {compressed} > {original}"
            )
        expected = compressed / original if original else 1.0
        ratio = plain_real(self.ratio)
        if (
            not isinstance(ratio, (int, float))
            or isinstance(ratio, bool)
            or not math.isclose(ratio, expected, rel_tol=0.0, abs_tol=_RATIO_TOLERANCE)
        ):
            raise ValueError(
                f"ratio must be compressed_tokens / original_tokens ({expected!r}), got {ratio!r}"
            )
        if kept is not None and total is not None and kept > total:
            raise ValueError(
                f"fragments_kept must not exceed fragments_total, got {kept} > {total}"
            )
        for name in ("value_kept", "value_bound"):
            value = plain_real(getattr(self, name))
            if value is not None and (
                not isinstance(value, (int, float))
                or isinstance(value, bool)
                or not value >= 0  # NaN too
                or math.isinf(value)
            ):
                raise ValueError(f"{name} must be None or a finite number >= 0, got {value!r}")
        share = plain_real(self.kept_share)
        value_kept, value_bound = plain_real(self.value_kept), plain_real(self.value_bound)
        if share is not None:
            if (
                not isinstance(share, (int, float))
                or isinstance(share, bool)
                or not share >= 0  # NaN too
                or math.isinf(share)
            ):
                raise ValueError(f"kept_share must be None or a finite number >= 0, got {share!r}")
            if share > 1.0 and not self.over_budget:
                raise ValueError(f"kept_share must not exceed 1 unless over budget, got {share}")
        elif (
            value_kept is not None
            and value_bound is not None
            and value_kept > value_bound
            and not self.over_budget
        ):
            raise ValueError(
                "value_kept must not exceed value_bound unless over budget, got "
                f"{value_kept} > {value_bound}"
            )
        if reused is not None and reused > compressed:
            raise ValueError(
                f"reused_tokens must not exceed compressed_tokens, got {reused} > {compressed}"
            )
        if self.exact is not None and type(self.exact) is not bool:
            raise ValueError(f"exact must be None or a bool, got {self.exact!r}")

    @classmethod
    def of(
        cls,
        original_tokens: int,
        compressed_tokens: int,
        skeleton_budget: int,
        fragments_total: int,
        fragments_kept: int,
        value_kept_units: int | None = None,
        value_bound_units: int | None = None,
        reused_tokens: int | None = 0,
        relevance_kept: float | None = None,
        exact: bool | None = None,
    ) -> SkeletonMetadata:
        """The metadata of a compression, with the ratio computed and the values, given in
        units of 2**-32, made into relevance and `kept_share`; `relevance_kept`, the kept
        relevance summed exactly, is `value_kept` when given. Raises what the constructor
        raises."""
        ratio = compressed_tokens / original_tokens if original_tokens else 1.0
        if value_kept_units is None or value_bound_units is None:
            value_kept = None if value_kept_units is None else value_kept_units / VALUE_UNITS
            value_bound = None if value_bound_units is None else value_bound_units / VALUE_UNITS
            share = None
        else:
            value_kept = (
                value_kept_units / VALUE_UNITS if relevance_kept is None else relevance_kept
            )
            value_bound = value_bound_units / VALUE_UNITS
            # Exact ints divided once: 1.0 exactly when the optimum is kept.
            share = value_kept_units / value_bound_units if value_bound_units else 1.0
        if _set_slots is None or cls is not SkeletonMetadata:
            return cls(
                original_tokens,
                compressed_tokens,
                ratio,
                skeleton_budget,
                fragments_total,
                fragments_kept,
                value_kept,
                value_bound,
                reused_tokens,
                share,
                exact,
            )
        # Built on every compress call: filling the slots directly skips the frozen
        # dataclass __init__ (half the cost of a small call); the checks still run.
        metadata: SkeletonMetadata = _new(cls)
        (
            set_original,
            set_compressed,
            set_ratio,
            set_budget,
            set_total,
            set_kept,
            set_value_kept,
            set_value_bound,
            set_reused,
            set_share,
            set_exact,
        ) = _set_slots
        set_original(metadata, original_tokens)
        set_compressed(metadata, compressed_tokens)
        set_ratio(metadata, ratio)
        set_budget(metadata, skeleton_budget)
        set_total(metadata, fragments_total)
        set_kept(metadata, fragments_kept)
        set_value_kept(metadata, value_kept)
        set_value_bound(metadata, value_bound)
        set_reused(metadata, reused_tokens)
        set_share(metadata, share)
        set_exact(metadata, exact)
        metadata.__post_init__()
        return metadata

    @property
    def over_budget(self) -> bool:
        """True when the kept tokens exceed the budget (`on_overflow="keep_top"` kept the
        required fragments, or the top-ranked one, anyway)."""
        budget = self.skeleton_budget
        return budget is not None and plain_real(self.compressed_tokens) > plain_real(budget)

    def __repr__(self) -> str:
        fields_shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _METADATA_FIELDS)
        return f"{type(self).__qualname__}({fields_shown}, over_budget={self.over_budget!r})"

    def to_dict(self) -> dict[str, Any]:
        """The fields and `over_budget` as a dict, ready for JSON."""
        return {
            "original_tokens": self.original_tokens,
            "compressed_tokens": self.compressed_tokens,
            "ratio": self.ratio,
            "skeleton_budget": self.skeleton_budget,
            "fragments_total": self.fragments_total,
            "fragments_kept": self.fragments_kept,
            "value_kept": self.value_kept,
            "value_bound": self.value_bound,
            "reused_tokens": self.reused_tokens,
            "kept_share": self.kept_share,
            "exact": self.exact,
            "over_budget": self.over_budget,
        }


_METADATA_FIELDS = tuple(field.name for field in fields(SkeletonMetadata))
_new = object.__new__
_set_slots = (
    tuple(getattr(SkeletonMetadata, field.name).__set__ for field in fields(SkeletonMetadata))
    if _SLOTS
    else None
)


@dataclass(frozen=True, **_SLOTS)
class SkeletonResult:
    """What `compress` returns: the kept fragments (the very objects passed in, not copies),
    in the policy's output order (ranking order by default), and the metadata."""

    fragments: tuple[ContextFragment, ...]
    metadata: SkeletonMetadata


class SkeletonIndices(NamedTuple):
    """What `compress_arrays` returns: kept row numbers in the policy's output order (ranking
    order by default), and the metadata."""

    indices: array[int]
    metadata: SkeletonMetadata


class FragmentDecision(NamedTuple):
    """Why one fragment was kept or dropped. Members of one group share their decision.

    `reason` is one of `required`, `fits`, `top_over_budget`, `no_room`, `after_stop`,
    `below_min_relevance`, `zero_budget`, and under the value strategies `chosen` and
    `not_chosen` (fits the budget on its own, not part of the chosen set), and
    `variant_kept` (another unit of its variant set is kept: a required one, whatever the
    budget, or the one a strategy kept); `rank` is the
    0-based rank of the fragment's unit (its group, or itself) among all units; `budget_left`
    is what was left of the budget when the walk reached the unit, or None where no walk
    decided it.
    """

    fragment: ContextFragment
    kept: bool
    reason: DecisionReason
    rank: int
    budget_left: int | None

    def to_dict(self) -> dict[str, Any]:
        """The decision as a dict, ready for JSON, with the fragment's id in its place."""
        return {
            "fragment_id": self.fragment.fragment_id,
            "kept": self.kept,
            "reason": self.reason,
            "rank": self.rank,
            "budget_left": self.budget_left,
        }


@dataclass(frozen=True, **_SLOTS)
class SkeletonExplanation:
    """What `explain` returns: the compression's result (equal to what `compress` returns)
    and one `FragmentDecision` per input fragment, in input order."""

    result: SkeletonResult
    decisions: tuple[FragmentDecision, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the metadata, and the decisions keyed by fragment_id."""
        return {
            "metadata": self.result.metadata.to_dict(),
            # Keyed by the plain str each id holds: a subclass's own `__eq__` and `__hash__`
            # do not merge the decisions of two fragments `compress` told apart.
            "decisions": {
                str.__str__(decision.fragment.fragment_id): {
                    key: value for key, value in decision.to_dict().items() if key != "fragment_id"
                }
                for decision in self.decisions
            },
        }
