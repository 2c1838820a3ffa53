"""LlamaIndex (llama-index-core 0.14): a node postprocessor that keeps the retrieved nodes a
token budget allows. Importing this module imports llama-index-core
(`pip install 'skeleton-compressor[llamaindex]'`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from ._framework import missing_framework

try:
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
except ModuleNotFoundError as error:
    raise missing_framework(error, "llama_index", "llamaindex", (3, 10)) from error

from .._messages import describe
from .._values import plain_str
from ..tokens import Counter
from ..types import BackendName, OnOverflowName, OrderName, SkeletonMetadata, StrategyName
from ._packing import Packing, listed_items, missing_score_error, not_item_error
from ._scores import (
    MISSING_SCORE_REMEDY,
    UNSCORED,
    MissingScore,
    Scores,
    checked_missing_score,
    checked_scores,
    relevances,
)

__all__ = ["SkeletonNodePostprocessor"]

_CONTAINER = "nodes"
_MODES = tuple(mode.value for mode in MetadataMode)


class SkeletonNodePostprocessor(BaseNodePostprocessor):
    """Keeps the retrieved nodes that fit `skeleton_budget` tokens, chosen by the library's
    strategy and policy, as the very `NodeWithScore` objects passed in, in the policy's order.

    A node's relevance is its `NodeWithScore.score`, mapped into [0, 1] as `scores` says
    (docs/integrations/llamaindex.md: a cosine rounded over 1 is 1, negative cosines and
    unbounded scores are rescaled per call, keeping their order); its tokens are counted from
    `node.get_content(metadata_mode=metadata_mode)`, by default the text with the metadata the
    LLM sees (`MetadataMode.LLM`), as the response synthesizers put it into the prompt. The
    query is not read: the score already says how relevant a node is to it.

    Args:
        skeleton_budget: the tokens the kept nodes may take, an int >= 0.
        token_counter: a `TokenCounter`, an encoding's name (`"o200k_base"`,
            `"cl100k_base"`), a callable `str -> int`, or None for `o200k_base`.
        strategy: `greedy`, `prefix`, `density` or `optimal`.
        min_relevance: nodes scored below it are not kept, a real number in [0, 1].
        on_overflow: `keep_top`, `strict` or `raise` (`BudgetExceededError`), for when
            nothing fits.
        order: `ranking` (most relevant first), `input` (as retrieved) or `edges` (most
            relevant at both ends).
        backend: `auto`, `rust` or `python`.
        scores: `"auto"` (the default: any finite score, mapped into [0, 1]) or `"strict"`
            (a score outside [0, 1] is an error).
        missing_score: for a node whose score is None: `"rank"` (the default: scored by its
            place in the retrieved order, the first 1.0), `"raise"` (an error naming it),
            or the relevance to give it, a real number in [0, 1] (not mapped with the scores).
        metadata_mode: which metadata is counted with the text, a `MetadataMode` or its value
            (`all`, `embed`, `llm`, `none`).

    Raises (at construction): the library's `TypeError` / `ValueError` for a bad option. The
    options cannot be changed afterwards; make another postprocessor instead.

    Raises (per call): `FragmentTypeError` / `FragmentValueError` naming the node
    (`nodes[3] (id 'a'): relevance_score must be in [0, 1], got 1.5`), with `.index` and
    `.kind`: an item that is not a `NodeWithScore` (`not_fragment`), a score that is None
    under `missing_score="raise"` (`relevance_type`), not a real number (`relevance_type`),
    NaN, infinite or an int too large for a float, or under `scores="strict"` outside [0, 1]
    (`relevance_range`); a callable counter's bad count; `BudgetExceededError` under
    `on_overflow="raise"` when no node fits (`"strict"` then keeps none, with no error); and a
    `TypeError` naming `nodes` for a value that cannot be iterated (any iterable is read
    once, up front).
    """

    skeleton_budget: int = Field(frozen=True, description="Tokens the kept nodes may take.")
    token_counter: Any = Field(
        default=None, frozen=True, description="TokenCounter, encoding name or callable."
    )
    strategy: StrategyName = Field(default="greedy", frozen=True)
    min_relevance: float = Field(default=0.0, frozen=True)
    on_overflow: OnOverflowName = Field(default="keep_top", frozen=True)
    order: OrderName = Field(default="ranking", frozen=True)
    backend: BackendName = Field(default="auto", frozen=True)
    scores: Scores = Field(default="auto", frozen=True)
    missing_score: MissingScore = Field(default="rank", frozen=True)
    metadata_mode: MetadataMode = Field(default=MetadataMode.LLM, frozen=True)

    _packing: Packing = PrivateAttr()
    _missing: MissingScore = PrivateAttr(default="rank")
    _last_metadata: SkeletonMetadata | None = PrivateAttr(default=None)

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
        metadata_mode: MetadataMode | Literal["all", "embed", "llm", "none"] = MetadataMode.LLM,
        **kwargs: Any,
    ) -> None:
        packing = Packing(
            skeleton_budget,
            token_counter,
            strategy=strategy,
            min_relevance=min_relevance,
            on_overflow=on_overflow,
            order=order,
            backend=backend,
        )
        missing = checked_missing_score(missing_score)
        policy = packing.service.policy
        # Checked values only, so that pydantic has nothing to coerce.
        fields: dict[str, Any] = {
            "skeleton_budget": packing.skeleton_budget,
            "token_counter": token_counter,
            "strategy": packing.service.strategy,
            "min_relevance": policy.min_relevance,
            "on_overflow": policy.on_overflow,
            "order": policy.order,
            "backend": plain_str(backend),
            "scores": checked_scores(scores),
            "missing_score": missing,
            "metadata_mode": _checked_mode(metadata_mode),
        }
        super().__init__(**fields, **kwargs)
        self._packing = packing
        self._missing = missing

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex records for this component."""
        return "SkeletonNodePostprocessor"

    @property
    def last_metadata(self) -> SkeletonMetadata | None:
        """The metadata of this postprocessor's latest `postprocess_nodes` call (None before
        the first). Shared by every query using this postprocessor: under concurrent queries
        call `pack` instead, which returns each call's own."""
        return self._last_metadata

    def pack(self, nodes: Iterable[NodeWithScore]) -> tuple[list[NodeWithScore], SkeletonMetadata]:
        """The nodes kept (the objects passed in, in the policy's order) and the metadata.
        `nodes` may be any iterable, read once, up front.

        Raises what the class docstring lists per call.
        """
        rows = listed_items(nodes, _CONTAINER, "NodeWithScore")
        texts: list[str] = []
        ids: list[str | None] = []
        scores: list[object] = []
        missing = self._missing
        mode = self.metadata_mode
        for index, item in enumerate(rows):
            if not isinstance(item, NodeWithScore):
                raise not_item_error(_CONTAINER, index, item, "a NodeWithScore")
            node = item.node
            node_id = node.node_id
            score: object = item.score
            if score is None:
                if missing == "raise":
                    raise missing_score_error(
                        _CONTAINER,
                        index,
                        node_id,
                        "NodeWithScore.score is None",
                        MISSING_SCORE_REMEDY,
                    )
                score = UNSCORED
            texts.append(node.get_content(metadata_mode=mode))
            ids.append(node_id)
            scores.append(score)
        packing = self._packing
        counts = packing.token_counts(texts, _CONTAINER)
        scores = relevances(scores, self.scores, missing, _CONTAINER, ids)
        kept = packing.select(counts, scores, _CONTAINER, ids=ids)
        return [rows[index] for index in kept.indices], kept.metadata

    def _postprocess_nodes(
        self,
        nodes: list[NodeWithScore],
        query_bundle: QueryBundle | None = None,
    ) -> list[NodeWithScore]:
        kept, metadata = self.pack(nodes)
        self._last_metadata = metadata
        return kept


def _checked_mode(value: object) -> MetadataMode:
    if isinstance(value, MetadataMode):
        return value
    text = plain_str(value)
    if text not in _MODES:
        raise ValueError(f"metadata_mode must be one of {', '.join(_MODES)}, got {describe(value)}")
    return MetadataMode(text)
