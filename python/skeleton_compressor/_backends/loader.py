"""The compressor of the backend chosen, made from options checked here once, before either
backend sees them; the Python backend imported only when it is chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from .._values import plain_str
from ..policy import Policy, checked_policy
from ..validation import DEFAULT_MAX_WORK, checked_max_work
from .choice import BACKENDS, chosen_backend, rust_factory
from .protocol import STRATEGIES

if TYPE_CHECKING:
    from ..types import StrategyName
    from .protocol import BackendCompressor, CompressorFactory

__all__ = ["checked_strategy", "load_backend", "make_compressor"]


def load_backend(name: str) -> tuple[str, CompressorFactory]:
    """`(name in use, Compressor class)` for `"auto"`, `"rust"` or `"python"` (see
    `chosen_backend`)."""
    if chosen_backend(name) == "rust":
        return "rust", rust_factory()
    from .python import Compressor

    return "python", Compressor


def checked_strategy(strategy: object) -> StrategyName:
    """The strategy's plain str (a subclass's own `__eq__` cannot pass for one)."""
    text = plain_str(strategy)
    if text not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    return cast("StrategyName", text)


def make_compressor(
    backend: object,
    strategy: object,
    min_relevance: object,
    on_overflow: object,
    order: object,
    max_work: object = DEFAULT_MAX_WORK,
) -> tuple[str, Policy, BackendCompressor]:
    """The backend in use, the checked policy, and the compressor. The options are checked
    here in this order, the strategy, the policy, `max_work`, then the backend, and raise as
    `SkeletonCompressorService` says."""
    name = checked_strategy(strategy)
    policy = checked_policy(min_relevance, on_overflow, order)
    work = checked_max_work(max_work)
    if not isinstance(backend, str):
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    in_use, factory = load_backend(backend)
    return in_use, policy, factory(name, *policy, work)
