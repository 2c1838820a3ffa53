"""Retrievers' scores as relevance in [0, 1], the one mapping every document adapter uses.

Stock retrievers score on scales of their own: cosines a float rounding over 1 or below 0
(LlamaIndex's default vector store gives 1.0000000000000002 for a node equal to the query),
cosines in [-1, 1], BM25 scores from 0 up, rerankers' logits of any sign. With `scores="auto"`
(the default) each call's finite scores are read as one batch:

- all in [0, 1], give or take `NOISE` (float rounding, float32 embeddings): clamped to [0, 1];
- none below 0 (less `NOISE`), some over 1: divided by the largest, which keeps their order
  and their ratios, so the value strategies weigh them as the retriever did;
- some below 0, all in [-1, 1]: cosines, mapped to (s + 1) / 2;
- otherwise: rescaled from [lowest, highest] to [0, 1] (all 1.0 when they are equal).

Every mapping keeps the scores' order where the mapped values differ; scores a rounding
apart may map to one value, and then tie (ties go by input order). `scores="strict"` keeps
the library's own check (a score outside [0, 1] is an error). A NaN or infinite score is an
error either way.

An item without a score, under `missing_score="rank"` (the default), scores by its place in
the retriever's order: of n items, the i-th (from 0) scores (n - i) / n, the first 1.0; under
a number in [0, 1], it scores that number, which is not mapped with the batch.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Literal, Union

from .. import _messages
from .._values import as_real, plain_real, plain_str, safe_isinstance
from ..errors import FragmentTypeError, FragmentValueError

__all__ = [
    "MISSING_SCORE_REMEDY",
    "NOISE",
    "SCORES",
    "UNSCORED",
    "MissingScore",
    "Scores",
    "checked_missing_score",
    "checked_scores",
    "relevances",
    "unusable_item_error",
]

Scores = Literal["auto", "strict"]
SCORES: tuple[Scores, ...] = ("auto", "strict")
MissingScore = Union[float, Literal["raise", "rank"]]

NOISE = 1e-6
"""How far past 0 or 1 a score may be and still count as in [0, 1]: more than float64
rounding, and the rounding of the float32 vectors many stores keep."""

UNSCORED = object()
"""The score of an item without one, for `relevances` to fill as `missing_score` says."""

MISSING_SCORE_REMEDY = "give missing_score= 'rank' or a number in [0, 1] to score such items"
_FINITE_EXPECTED = "relevance_score must be a finite number (within a float's range)"
_MISSING_EXPECTED = "missing_score must be 'raise', 'rank' or a real number in [0, 1]"


def checked_scores(value: object) -> Scores:
    text = plain_str(value)
    for name in SCORES:
        if text == name:
            return name
    raise (ValueError if text is not None else TypeError)(
        f"scores must be 'auto' or 'strict', got {_messages._typed(value)}"
    )


def checked_missing_score(value: object) -> MissingScore:
    """`"raise"` (an item without a score is an error), `"rank"`, or a real number in
    [0, 1] as a float."""
    text = plain_str(value)
    if text == "raise" or text == "rank":
        return text  # type: ignore[return-value]
    if text is not None:
        raise ValueError(f"{_MISSING_EXPECTED}, got {_messages.describe(value)}")
    score = as_real(value)
    if score is None:
        raise TypeError(f"{_MISSING_EXPECTED}, got {_messages._typed(value)}")
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"{_MISSING_EXPECTED}, got {_messages.describe(value)}")
    return score + 0.0  # -0.0 scores as 0.0


def relevances(
    scores: Sequence[object],
    mode: Scores,
    missing: MissingScore,
    container: str,
    ids: Sequence[str | None],
) -> list[object]:
    """The items' relevances: the retriever's scores mapped as `mode` says (under `"strict"`
    returned as they are, for the library to check), and `UNSCORED` given `missing`, by rank
    under `"rank"` (the caller has raised for `"raise"`), or as the number it is."""
    size = len(scores)
    if mode == "auto":
        present = [
            (index, _finite(score, index, ids[index], container))
            for index, score in enumerate(scores)
            if score is not UNSCORED
        ]
        mapped: list[object] = list(scores)
        for (index, _), score in zip(present, _mapped([score for _, score in present])):
            mapped[index] = score
        scores = mapped
    return [
        _unscored(missing, index, size) if score is UNSCORED else score
        for index, score in enumerate(scores)
    ]


def _unscored(missing: MissingScore, index: int, size: int) -> float:
    if missing == "rank":
        return (size - index) / size
    return missing  # type: ignore[return-value]


def _finite(value: object, index: int, item_id: str | None, container: str) -> float:
    if type(value) is float:
        score = value
    elif type(value) is bool or not safe_isinstance(value, numbers.Real):
        raise _messages.fragment_error("relevance_type", index, item_id, value, container)
    else:
        try:
            # An int or float subclass as the plain value it holds, not its own __float__.
            score = float(plain_real(value))
        except OverflowError:
            score = math.inf
        except Exception as error:
            raise _messages.fragment_error(
                "relevance_type", index, item_id, value, container
            ) from error
    if not math.isfinite(score):
        # Not the library's "must be in [0, 1]": any finite score is mapped.
        detail = f"{_FINITE_EXPECTED}, got {_messages.describe(value)}"
        raise _messages._error(
            FragmentValueError, "relevance_range", index, item_id, container, detail
        )
    return score


def _mapped(scores: list[float]) -> list[float]:
    """The batch mapped into [0, 1] (`+ 0.0` makes a -0.0 0.0, which the Rust backend would
    rank apart)."""
    if not scores:
        return scores
    low, high = min(scores), max(scores)
    if low >= -NOISE and high <= 1.0 + NOISE:
        return [min(max(score, 0.0), 1.0) + 0.0 for score in scores]
    if low >= -NOISE:
        return [max(score, 0.0) / high + 0.0 for score in scores]
    if low >= -1.0 - NOISE and high <= 1.0 + NOISE:
        return [min(max((score + 1.0) / 2.0, 0.0), 1.0) + 0.0 for score in scores]
    if high == low:
        return [1.0] * len(scores)
    # Halved first, so that the width of the widest range of floats does not overflow.
    width = high / 2 - low / 2
    return [min((score / 2 - low / 2) / width, 1.0) + 0.0 for score in scores]


def unusable_item_error(
    container: str, index: int, item_id: str | None, detail: str
) -> FragmentTypeError:
    """`<container>[i] (id ...) <detail>` for an item of the right type the packer cannot
    use (kind `not_fragment`)."""
    return _messages._error(FragmentTypeError, "not_fragment", index, item_id, container, detail)
