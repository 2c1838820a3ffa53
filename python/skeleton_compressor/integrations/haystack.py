"""Haystack (haystack-ai 2.x and 3.x): a pipeline component that keeps the documents a token
budget allows. Importing this module imports haystack-ai
(`pip install 'skeleton-compressor[haystack]'`)."""

from __future__ import annotations

import inspect
import types
from typing import Any, cast

from ._framework import missing_framework

try:
    from haystack import Document, component, default_from_dict, default_to_dict
    from haystack.core.errors import SerializationError
    from haystack.utils import deserialize_callable, serialize_callable
except ModuleNotFoundError as error:
    raise missing_framework(error, "haystack", "haystack", (3, 9)) from error

from .._messages import describe
from .._values import plain_str
from ..tokens import Counter, TokenCounter
from ..types import BackendName, OnOverflowName, OrderName, StrategyName
from ._packing import Packing, listed_items, missing_score_error, not_item_error
from ._scores import (
    MISSING_SCORE_REMEDY,
    UNSCORED,
    MissingScore,
    Scores,
    checked_missing_score,
    checked_scores,
    relevances,
    unusable_item_error,
)

__all__ = ["SkeletonDocumentPacker"]

_CONTAINER = "documents"


@component
class SkeletonDocumentPacker:
    """Keeps the documents that fit `skeleton_budget` tokens, chosen by the library's strategy
    and policy, as the very `Document` objects passed in, in the policy's order; the second
    output, `skeleton_metadata`, is the library's metadata as a JSON-ready dict.

    A document's relevance is its `Document.score` (set by retrievers and rankers), mapped
    into [0, 1] as `scores` says (docs/integrations/haystack.md: BM25 scores divided by the
    run's highest, cosines rounded over 1 clamped); its tokens are counted from
    `Document.content`. A document without text content (`content` None: only a blob) is an
    error, since it has nothing to count; a str subclass is read as the plain str it holds.

    Args:
        skeleton_budget: the tokens the kept documents may take, an int >= 0.
        token_counter: a `TokenCounter`, an encoding's name (`"o200k_base"`,
            `"cl100k_base"`), a callable `str -> int`, or None for `o200k_base`. `to_dict`
            (and so `Pipeline.dumps`) saves a `TokenCounter` as its encoding's name and a
            module-level function as `{"callable": "package.module.function"}` (loaded back
            where Haystack's deserialisation allowlist admits its module); a lambda, a nested
            function or another callable object cannot be saved (`SerializationError`).
        strategy: `greedy`, `prefix`, `density` or `optimal`.
        min_relevance: documents scored below it are not kept, a real number in [0, 1].
        on_overflow: `keep_top`, `strict` or `raise` (`BudgetExceededError`), for when
            nothing fits.
        order: `ranking` (most relevant first), `input` (as received) or `edges` (most
            relevant at both ends).
        backend: `auto`, `rust` or `python`.
        scores: `"auto"` (the default: any finite score, mapped into [0, 1]) or `"strict"`
            (a score outside [0, 1] is an error).
        missing_score: for a document whose score is None: `"rank"` (the default: scored by
            its place in the order received, the first 1.0), `"raise"` (an error naming it),
            or the relevance to give it, a real number in [0, 1] (not mapped with the scores).

    Raises (at construction): the library's `TypeError` / `ValueError` for a bad option.

    Raises (per run): `FragmentTypeError` / `FragmentValueError` naming the document
    (`documents[3] (id '9c1e...'): relevance_score must be in [0, 1], got 1.5`), with
    `.index` and `.kind`: an item that is not a `Document`, or one without text content
    (`not_fragment`), a score that is None under `missing_score="raise"` or not a real
    number (`relevance_type`), a score NaN, infinite or an int too large for a float, or
    under `scores="strict"` outside [0, 1] (`relevance_range`); a callable counter's bad
    count; `BudgetExceededError` under `on_overflow="raise"` when no document fits
    (`"strict"` then keeps none, with no error); and a `TypeError` naming `documents` for a
    value that cannot be iterated (any iterable is read once, up front).
    """

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
        scores: Scores = "auto",
        missing_score: MissingScore = "rank",
    ) -> None:
        self._packing = Packing(
            skeleton_budget,
            token_counter,
            strategy=strategy,
            min_relevance=min_relevance,
            on_overflow=on_overflow,
            order=order,
            backend=backend,
        )
        self.scores = checked_scores(scores)
        self.missing_score = checked_missing_score(missing_score)
        service = self._packing.service
        self.skeleton_budget = self._packing.skeleton_budget
        self.token_counter = token_counter
        self.strategy = service.strategy
        self.min_relevance = service.policy.min_relevance
        self.on_overflow = service.policy.on_overflow
        self.order = service.policy.order
        # Checked by Packing: a backend's name, saved by to_dict as a plain str.
        self.backend = cast("BackendName", plain_str(backend) or "auto")

    @component.output_types(documents=list[Document], skeleton_metadata=dict[str, Any])
    def run(self, documents: list[Document], skeleton_budget: int | None = None) -> dict[str, Any]:
        """Keeps the documents that fit the budget.

        Args:
            documents: the documents to choose from, each with a `score` and `content`: a
                list, or any iterable, read once, up front.
            skeleton_budget: this run's budget instead of the component's, an int >= 0.

        Returns:
            `documents`: the kept documents (the objects passed in) in the policy's order;
            `skeleton_metadata`: `SkeletonMetadata.to_dict()` (tokens before and after,
            ratio, budget, counts kept, value kept and its bound, `over_budget`).

        Raises what the class docstring lists per run, and the library's `TypeError` /
        `ValueError` for a bad `skeleton_budget`.
        """
        packing = self._packing
        if skeleton_budget is not None:
            packing = self._packing_for(skeleton_budget)
        rows = listed_items(documents, _CONTAINER, "Document")
        texts: list[str] = []
        ids: list[str | None] = []
        scores: list[object] = []
        missing = self.missing_score
        for index, document in enumerate(rows):
            if not isinstance(document, Document):
                raise not_item_error(_CONTAINER, index, document, "a Document")
            document_id = document.id
            content = plain_str(document.content)
            if content is None:
                raise unusable_item_error(
                    _CONTAINER,
                    index,
                    document_id,
                    f"must have text content, got content {describe(document.content)} (only "
                    f"text is counted)",
                )
            score: object = document.score
            if score is None:
                if missing == "raise":
                    raise missing_score_error(
                        _CONTAINER,
                        index,
                        document_id,
                        "Document.score is None",
                        MISSING_SCORE_REMEDY,
                    )
                score = UNSCORED
            texts.append(content)
            ids.append(document_id)
            scores.append(score)
        counts = packing.token_counts(texts, _CONTAINER)
        scores = relevances(scores, self.scores, missing, _CONTAINER, ids)
        kept = packing.select(counts, scores, _CONTAINER, ids=ids)
        return {
            "documents": [rows[index] for index in kept.indices],
            "skeleton_metadata": kept.metadata.to_dict(),
        }

    def _packing_for(self, skeleton_budget: int) -> Packing:
        return Packing(
            skeleton_budget,
            self.token_counter,
            strategy=self.strategy,
            min_relevance=self.min_relevance,
            on_overflow=self.on_overflow,
            order=self.order,
            backend=self.backend,
        )

    def to_dict(self) -> dict[str, Any]:
        """The component's init parameters, for `Pipeline.dumps()`; the token counter as an
        encoding's name or a function's import path.

        Raises:
            SerializationError: the token counter is a lambda, a nested function or another
                callable object, which has no import path to save.
        """
        return default_to_dict(
            self,
            skeleton_budget=self.skeleton_budget,
            token_counter=_saved_counter(self.token_counter),
            strategy=self.strategy,
            min_relevance=self.min_relevance,
            on_overflow=self.on_overflow,
            order=self.order,
            backend=self.backend,
            scores=self.scores,
            missing_score=self.missing_score,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SkeletonDocumentPacker:
        """The component `to_dict` describes.

        Raises:
            DeserializationError: a saved counter function is not found, or its module is not
                on Haystack's deserialisation allowlist.
        """
        parameters = data.get("init_parameters", {})
        counter = parameters.get("token_counter")
        if isinstance(counter, dict) and set(counter) == {_CALLABLE}:
            function = deserialize_callable(counter[_CALLABLE])
            data = {**data, "init_parameters": {**parameters, "token_counter": function}}
        return default_from_dict(cls, data)


_CALLABLE = "callable"


def _saved_counter(counter: object) -> str | dict[str, str] | None:
    """The token counter as `to_dict` saves it: None, an encoding's name, or a function's
    import path."""
    if counter is None:
        return None
    name = plain_str(counter)
    if name is not None:
        return name
    if type(counter) is TokenCounter:
        return counter.encoding
    try:
        if not callable(counter) or not _importable_function(counter):
            raise SerializationError("it is not a function defined in a module.")
        path = serialize_callable(counter)
    except SerializationError as error:
        raise SerializationError(
            f"SkeletonDocumentPacker cannot save token_counter={describe(counter)}: {error} "
            f"Give an encoding's name (o200k_base, cl100k_base), a TokenCounter or a "
            f"module-level function to save the pipeline"
        ) from error
    return {_CALLABLE: path}


def _importable_function(counter: object) -> bool:
    # A function, or a built-in function of a module (not a method bound to an object).
    if inspect.isfunction(counter):
        return True
    return inspect.isbuiltin(counter) and isinstance(
        getattr(counter, "__self__", None), types.ModuleType
    )
