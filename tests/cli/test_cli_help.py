"""The command line's help: every command describes itself, and the synopsis at the top of
docs/cli.md names exactly the options and choices that `--help` does."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from skeleton_compressor.cli.main import build_parser

CLI_PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (commands,) = (
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    return dict(commands.choices)


def _synopsis() -> dict[str, str]:
    """Each command's synopsis, its continuation lines joined."""
    block = CLI_PAGE.read_text(encoding="utf-8").split("```sh\n", 1)[1].split("```", 1)[0]
    commands: dict[str, str] = {}
    name = ""
    for line in block.splitlines():
        if line.startswith("skeleton-compressor "):
            name = line.split()[1]
            commands[name] = line
        elif line.startswith(" ") and name:
            commands[name] += line
    return commands


def _help_options(command: argparse.ArgumentParser) -> dict[str, list[str] | None]:
    return {
        action.option_strings[-1]: list(action.choices) if action.choices else None
        for action in command._actions
        if action.option_strings and action.option_strings[-1] != "--help"
    }


def _synopsis_options(text: str) -> dict[str, list[str] | None]:
    options: dict[str, list[str] | None] = {}
    for name, argument in re.findall(r"(--[a-z-]+)(?: ([^\s\[\]]+))?", text):
        options[name] = argument.split("|") if "|" in argument else None
    return options


def test_the_synopsis_names_every_command() -> None:
    assert sorted(_synopsis()) == sorted(_commands())


@pytest.mark.parametrize("name", sorted(_commands()))
def test_the_synopsis_agrees_with_help(name: str) -> None:
    command = _commands()[name]
    expected = _help_options(command)
    # Options with more than one choice list them; `--strategies` takes several.
    for option, choices in expected.items():
        if choices is not None and command._option_string_actions[option].nargs == "+":
            expected[option] = None
    assert _synopsis_options(_synopsis()[name]) == expected


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_has_a_description(name: str) -> None:
    command = _commands()[name]
    assert command.description, name
    assert name in command.format_help()
