"""The errors raised for a bad fragment (or row), as data: what failed, and where.

Both backends raise these, with the same fields and the same message. Each class is also the
built-in error the contract names (`TypeError` or `ValueError`), so code catching those still
catches them; catch `FragmentError` to get only problems with the input's fragments.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BudgetExceededError", "FragmentError", "FragmentTypeError", "FragmentValueError"]


class FragmentError(Exception):
    """A fragment (or row) failed a check. Raised as `FragmentTypeError` or `FragmentValueError`.

    Attributes:
        kind: which check failed, one of `skeleton_compressor._messages.KINDS`
            (`"token_negative"`, `"duplicate"`, ...).
        index: the fragment's place in its container; for a duplicate, the later of the two.
        fragment_id: the fragment's id, once it has a valid one; else None.
        container: `"fragments"` (compress, validate) or `"rows"` (compress_arrays).
        detail: the message without the place, e.g. `token_count must be >= 0, got -1`; for a
            duplicate, the message without its two places (`duplicate fragment_id 'a'`).
        first_index: for a duplicate, the index of the id's first occurrence; for
            `variant_group_mismatch`, the group's first member; for
            `variant_required_twice`, the variant set's first required fragment; else None.

    `str(error)` is the full message, e.g. `fragments[3] (id 'a'): token_count must be >= 0,
    got -1`.
    """

    kind: str
    index: int
    fragment_id: str | None
    container: str
    detail: str
    first_index: int | None

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        index: int,
        fragment_id: str | None,
        container: str,
        detail: str,
        first_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.index = index
        self.fragment_id = fragment_id
        self.container = container
        self.detail = detail
        self.first_index = first_index

    def __reduce__(self) -> tuple[Any, ...]:
        # The default rebuilds with `cls(*self.args)`, which lacks the keyword-only fields;
        # rebuild without calling __init__, then restore the fields (and any notes) as state.
        return (_rebuilt, (type(self), self.args), self.__dict__)


class FragmentTypeError(FragmentError, TypeError):
    """A fragment (or one of its fields) has the wrong type, or a field cannot be read."""


class FragmentValueError(FragmentError, ValueError):
    """A fragment's field has the right type but a bad value, or two fragments share an id."""


class BudgetExceededError(ValueError):
    """The overflow policy (`strict` or `raise`) refused to go over the budget.

    Attributes:
        skeleton_budget: the budget asked for.
        needed_tokens: the required fragments' tokens when they alone exceed the budget; when
            nothing fitted, the smallest budget with which something would have been kept.
    """

    skeleton_budget: int
    needed_tokens: int

    def __init__(self, message: str, *, skeleton_budget: int, needed_tokens: int) -> None:
        super().__init__(message)
        self.skeleton_budget = skeleton_budget
        self.needed_tokens = needed_tokens

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (type(self), self.args), self.__dict__)


def _rebuilt(cls: type[Exception], args: tuple[object, ...]) -> Exception:
    return cls.__new__(cls, *args)
