"""A LangChain document compressor that keeps the retrieved documents a token budget allows:
the most relevant first, or by total relevance, under the library's policy."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Union

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from pydantic import ConfigDict, PrivateAttr, SkipValidation

from .. import _messages
from .._values import plain_str
from ..tokens import TokenCounter
from ..types import (
    BackendName,
    EncodingName,
    OnOverflowName,
    OrderName,
    SkeletonMetadata,
    StrategyName,
)
from ._packing import Packing, listed_items, missing_score_error, not_item_error
from ._scores import (
    UNSCORED,
    MissingScore,
    Scores,
    checked_missing_score,
    checked_scores,
    relevances,
    unusable_item_error,
)

__all__ = ["SkeletonDocumentCompressor"]

CONTAINER = "documents"
Relevance = Union[str, Callable[[Document], float]]


class SkeletonDocumentCompressor(BaseDocumentCompressor):
    """Keeps the documents that fit `skeleton_budget` tokens, chosen by relevance under the
    library's strategy and policy; for `ContextualCompressionRetriever` or a
    `DocumentCompressorPipeline` (after a reranker that scores the documents).

    Attributes:
        skeleton_budget: the tokens the kept documents may take, an int >= 0.
        token_counter: counts each document's `page_content`: a `TokenCounter`, an encoding's
            name (`"o200k_base"`, `"cl100k_base"`), a callable `str -> int`, or None for
            `o200k_base`.
        relevance: where a document's score comes from: the key of `Document.metadata`
            holding it (`"relevance_score"`, where LangChain's rerankers put theirs), or a
            callable `Document -> float`.
        scores: `"auto"` (any finite score, mapped into [0, 1]: a cosine rounded over 1 is
            1, negative cosines and unbounded scores are rescaled per call, keeping their
            order; docs/integrations/langchain-documents.md) or `"strict"` (a score outside
            [0, 1] is an error).
        missing_score: for a document without the metadata key: `"rank"` (scored by its
            place in the retrieved order, the first 1.0; what a retriever that puts no
            score in the metadata, such as `InMemoryVectorStore.as_retriever()`, needs),
            `"raise"` (an error naming it), or a real number in [0, 1], its relevance as it is
            (not mapped with the scores).
        strategy: `"greedy"`, `"prefix"`, `"density"` or `"optimal"`.
        min_relevance: documents less relevant than this are never kept.
        on_overflow: `"keep_top"`, `"strict"` or `"raise"`, when nothing fits.
        order: the kept documents' order: `"ranking"` (most relevant first), `"input"` (as
            retrieved) or `"edges"` (most relevant at both ends).
        backend: `"auto"`, `"rust"` or `"python"`.
        metadata_key: None to return the very documents passed in; a key to return copies
            whose metadata holds, under it, the compression's `SkeletonMetadata.to_dict()`
            (not `relevance`'s own key, which would lose the copies' scores).

    The options are checked when the compressor is made, raising the library's errors (a
    `ValueError` for an unknown strategy, a `TypeError` for a budget that is not an int).
    Documents tied in relevance are ranked in the order they were retrieved.

    Raises (from `compress_documents`):
        FragmentTypeError: `documents[i]` is not a `Document`; or has a `page_content` that
            is not a str or `metadata` that is not a dict (assigned after construction); or
            has no relevance (the metadata key is missing, under `missing_score="raise"`),
            or a relevance that is not a real number, or a bad count from a callable counter.
        FragmentValueError: `documents[i]` has a relevance NaN, infinite or an int too large
            for a float, or under `scores="strict"` outside [0, 1].
        BudgetExceededError: under `on_overflow="raise"`, nothing fits the budget.
        TypeError: `documents` cannot be iterated (any iterable is read once, up front).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    # Validated by the library (its own errors, at construction), not by pydantic.
    skeleton_budget: SkipValidation[int]
    token_counter: SkipValidation[TokenCounter | EncodingName | Callable[[str], int] | None] = None
    relevance: SkipValidation[Relevance] = "relevance_score"
    scores: SkipValidation[Scores] = "auto"
    missing_score: SkipValidation[MissingScore] = "rank"
    strategy: SkipValidation[StrategyName] = "greedy"
    min_relevance: SkipValidation[float] = 0.0
    on_overflow: SkipValidation[OnOverflowName] = "keep_top"
    order: SkipValidation[OrderName] = "ranking"
    backend: SkipValidation[BackendName] = "auto"
    metadata_key: SkipValidation[str | None] = None

    _packing: Packing | None = PrivateAttr(default=None)
    _packed_with: tuple[object, ...] = PrivateAttr(default=())

    def __init__(
        self,
        skeleton_budget: int,
        token_counter: TokenCounter | EncodingName | Callable[[str], int] | None = None,
        *,
        relevance: Relevance = "relevance_score",
        scores: Scores = "auto",
        missing_score: MissingScore = "rank",
        strategy: StrategyName = "greedy",
        min_relevance: float = 0.0,
        on_overflow: OnOverflowName = "keep_top",
        order: OrderName = "ranking",
        backend: BackendName = "auto",
        metadata_key: str | None = None,
    ) -> None:
        fields: dict[str, object] = {
            "skeleton_budget": skeleton_budget,
            "token_counter": token_counter,
            "relevance": relevance,
            "scores": checked_scores(scores),
            "missing_score": checked_missing_score(missing_score),
            "strategy": strategy,
            "min_relevance": min_relevance,
            "on_overflow": on_overflow,
            "order": order,
            "backend": backend,
            "metadata_key": metadata_key,
        }
        super().__init__(**fields)
        # Here rather than in a pydantic validator, which would wrap the library's errors.
        self._current_packing()
        _check_relevance(relevance)
        _check_metadata_key(metadata_key, relevance)

    def compress_documents(
        self,
        documents: Iterable[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """The documents kept within the budget, in the compressor's `order`: the very
        objects passed in, or copies carrying the metadata when `metadata_key` is set.

        Args:
            documents: the retrieved documents: a list, or any iterable, read once, up front.
            query: the query (not read: relevance comes from each document).
            callbacks: not used.
        """
        return self.compress_with_metadata(documents)[0]

    def compress_with_metadata(
        self, documents: Iterable[Document]
    ) -> tuple[list[Document], SkeletonMetadata]:
        """The documents `compress_documents` returns, and the compression's metadata (the
        tokens before and after, the budget, the documents kept, the relevance kept)."""
        packing = self._current_packing()
        rows = listed_items(documents, CONTAINER, "Document")
        # The metadata is read for the scores under a metadata key, and for the copies.
        reads_metadata = isinstance(self.relevance, str) or self.metadata_key is not None
        texts = [
            _checked_document(document, index, reads_metadata)
            for index, document in enumerate(rows)
        ]
        ids = [document.id for document in rows]
        missing = checked_missing_score(self.missing_score)
        scores = relevances(
            self._scores(rows), checked_scores(self.scores), missing, CONTAINER, ids
        )
        counts = packing.token_counts(texts, CONTAINER)
        result = packing.select(counts, scores, CONTAINER, ids=ids)
        metadata = result.metadata
        kept = [rows[index] for index in result.indices]
        key = _check_metadata_key(self.metadata_key, self.relevance)
        if key is not None:
            kept = [_with_metadata(document, key, metadata) for document in kept]
        return kept, metadata

    def _scores(self, documents: list[Document]) -> list[object]:
        """Each document's score, `UNSCORED` for one without it (unless under
        `missing_score="raise"`, where it is an error)."""
        relevance = _check_relevance(self.relevance)
        if not isinstance(relevance, str):
            return [relevance(document) for document in documents]
        missing = checked_missing_score(self.missing_score)
        scores: list[object] = []
        for index, document in enumerate(documents):
            metadata = document.metadata
            if relevance in metadata:
                scores.append(metadata[relevance])
            elif missing == "raise":
                raise missing_score_error(
                    CONTAINER,
                    index,
                    document.id,
                    f"metadata[{relevance!r}] is missing",
                    "give relevance= or missing_score= to score such items",
                )
            else:
                scores.append(UNSCORED)
        return scores

    def _current_packing(self) -> Packing:
        """The packing for the current options, made again when one was changed (by
        assignment or `model_copy(update=...)`, which do not run `__init__`)."""
        options = (
            self.skeleton_budget,
            self.token_counter,
            self.strategy,
            self.min_relevance,
            self.on_overflow,
            self.order,
            self.backend,
        )
        packing = self._packing
        if packing is None or any(now is not then for now, then in zip(options, self._packed_with)):
            packing = Packing(
                self.skeleton_budget,
                self.token_counter,
                strategy=self.strategy,
                min_relevance=self.min_relevance,
                on_overflow=self.on_overflow,
                order=self.order,
                backend=self.backend,
            )
            self._packing, self._packed_with = packing, options
        return packing


def _checked_document(document: object, index: int, reads_metadata: bool) -> str:
    """The document's text; an error naming it when it is not a `Document`, or when a field
    this call reads, assigned after construction (which LangChain does not check), is not of
    its type."""
    if not isinstance(document, Document):
        raise not_item_error(CONTAINER, index, document, "a Document")
    text = plain_str(document.page_content)
    if text is None:
        raise _field_error(document, index, "a str page_content", document.page_content)
    if reads_metadata and not isinstance(document.metadata, Mapping):
        raise _field_error(document, index, "a mapping as metadata", document.metadata)
    return text


def _field_error(document: Document, index: int, expected: str, value: object) -> Exception:
    detail = f"must have {expected}, got {_messages._typed(value)}"
    return unusable_item_error(CONTAINER, index, document.id, detail)


def _check_relevance(relevance: object) -> Relevance:
    if isinstance(relevance, str) or callable(relevance):
        return relevance
    raise TypeError(
        "relevance must be a metadata key (str) or a callable Document -> float, "
        f"got {_messages._typed(relevance)}"
    )


def _check_metadata_key(metadata_key: object, relevance: object) -> str | None:
    if not (metadata_key is None or isinstance(metadata_key, str)):
        got = _messages._typed(metadata_key)
        raise TypeError(f"metadata_key must be a str or None, got {got}")
    if metadata_key is not None and metadata_key == relevance:
        # The copies would carry the metadata where their scores were, and could not be
        # compressed again by their scores.
        raise ValueError(
            f"metadata_key must not be the key relevance is read from, {metadata_key!r}"
        )
    return metadata_key


def _with_metadata(document: Document, key: str, metadata: SkeletonMetadata) -> Document:
    # A copy each, with metadata of its own, so that changing one changes no other.
    return document.model_copy(update={"metadata": {**document.metadata, key: metadata.to_dict()}})
