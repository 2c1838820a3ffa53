"""Error messages for bad input, shared by both backends so their errors match word for word.

The backends decide which check failed; this module only words it.
"""

from __future__ import annotations

MAX_TOKEN_COUNT = 2**63 - 1
_SHOWN_CHARS = 80

_FRAGMENT_PROBLEMS: dict[str, tuple[type[Exception], str]] = {
    "not_fragment": (TypeError, "must be a ContextFragment, got {got}"),
    "id_type": (TypeError, "fragment_id must be a str, got {got}"),
    "id_empty": (ValueError, "fragment_id must be non-empty"),
    "token_type": (TypeError, "token_count must be an int, got {got}"),
    "token_negative": (ValueError, "token_count must be >= 0, got {value}"),
    "token_too_large": (ValueError, "token_count must be <= 2**63 - 1, got {value}"),
    "relevance_type": (TypeError, "relevance_score must be a real number, got {got}"),
    "relevance_range": (ValueError, "relevance_score must be in [0, 1], got {value}"),
}


def describe(value: object) -> str:
    """repr() that never raises and never floods a log line."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} object>"
    if len(text) > _SHOWN_CHARS:
        text = text[: _SHOWN_CHARS - 3] + "..."
    return text


def _typed(value: object) -> str:
    return f"{describe(value)} ({type(value).__name__})"


def _where(container: str, index: int, fragment_id: str | None) -> str:
    if fragment_id is None:
        return f"{container}[{index}]"
    return f"{container}[{index}] (id {describe(fragment_id)})"


def fragments_type_error(fragments: object) -> TypeError:
    return TypeError(
        f"fragments must be a tuple of ContextFragment, got {type(fragments).__name__}"
    )


def budget_type_error(budget: object) -> TypeError:
    return TypeError(f"skeleton_budget must be an int, got {_typed(budget)}")


def budget_negative_error(budget: int) -> ValueError:
    return ValueError(f"skeleton_budget must be >= 0, got {budget}")


def fragment_error(
    kind: str, index: int, fragment_id: str | None, value: object, container: str = "fragments"
) -> Exception:
    error_type, template = _FRAGMENT_PROBLEMS[kind]
    separator = " " if kind == "not_fragment" else ": "
    detail = template.format(got=_typed(value), value=describe(value))
    return error_type(f"{_where(container, index, fragment_id)}{separator}{detail}")


def unreadable_error(
    index: int,
    fragment_id: str | None,
    attribute: str,
    error: BaseException,
    container: str = "fragments",
) -> TypeError:
    try:
        reason = str(error)
    except Exception:
        reason = "<unprintable error>"
    return TypeError(
        f"{_where(container, index, fragment_id)}: cannot read {attribute}: "
        f"{type(error).__name__}: {reason}"
    )


def duplicate_error(
    fragment_id: str, first: int, second: int, container: str = "fragments"
) -> ValueError:
    return ValueError(
        f"duplicate fragment_id {describe(fragment_id)} at "
        f"{container}[{first}] and {container}[{second}]"
    )
