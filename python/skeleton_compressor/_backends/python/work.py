"""`Work`: how much the exact solvers may still do (as the Rust core's `Work`).

0-1 knapsack is NP-hard, and some inputs make every exact dynamic program grow without end:
the solvers count their steps (a state visited once) against `max_work`, and hold at most so
many states at once, so that a call ends within a bounded time and memory on any input. A
step here costs far more time and memory than one of the Rust core: each counts as
`STEP_COST` units of `max_work`, so that a limit stands for about the same time on both
backends. A solver that would pass the limit stops and returns the best set it has found.
"""

from __future__ import annotations

__all__ = ["STEP_COST", "WORK_PER_STATE", "Work", "state_cost"]

# What one step of this backend counts for.
STEP_COST = 64
# At most `max_work / WORK_PER_STATE` states are held at once.
WORK_PER_STATE = 512

# A state carries its set as a mask of one bit per item; the int arithmetic on it costs
# about one step more per this many bits, and holding it about one state more.
MASK_BITS_PER_STEP = 1024


def state_cost(bits: int) -> int:
    """What growing or holding one state whose mask has `bits` bits counts for."""
    return 1 + bits // MASK_BITS_PER_STEP


class Work:
    """The steps left (None: no limit) and the states that may be held at once; whether a
    solver stopped short."""

    __slots__ = ("hold", "left", "stopped")

    def __init__(self, max_work: int | None) -> None:
        self.left = max_work
        self.hold = None if max_work is None else max(1, max_work // WORK_PER_STATE)
        self.stopped = False

    def take(self, steps: int, holding: int) -> bool:
        """Takes `steps` that will leave `holding` states, if both are allowed; otherwise the
        solver stops here, and this returns False."""
        left = self.left
        if left is None:
            return True
        cost = steps * STEP_COST
        hold = self.hold
        if self.stopped or cost > left or (hold is not None and holding > hold):
            self.stopped = True
            return False
        self.left = left - cost
        return True
