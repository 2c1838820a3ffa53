"""Ctrl-C for the children a test interrupts."""

from __future__ import annotations

import signal


def as_a_terminal_delivers() -> None:
    """Run in a child before it starts (`preexec_fn`): SIGINT back to its default, so that a
    Python child raises KeyboardInterrupt on it. A shell starts background jobs with SIGINT
    ignored, and a child inherits that: without this, a test run in the background would
    see every interrupted call finish."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
