"""What the compiled extension promises beyond answers: its error kinds are the Python layer's."""

from __future__ import annotations

from skeleton_compressor import _core, _messages


def test_error_kinds_are_the_ones_the_messages_word() -> None:
    assert tuple(_core.ERROR_KINDS) == tuple(_messages.KINDS)
