"""Every example in README.md and docs/*.md runs, and prints what the page shows.

How a page is read:

- A ```python block runs; the blocks of one page run in order in one namespace, as in a
  notebook, so a later block may use what an earlier one made. When the next block (after
  blank lines only) is a ```text block, the python block's standard output must equal it;
  otherwise the block must print nothing, so that no output goes unshown.
- A ```console block holds commands, each on a line starting with `$ `, each followed by
  what it prints (standard output and standard error, as a terminal shows them). They run
  with bash in a temporary directory shared by the page's console blocks, with the
  `skeleton-compressor` installed beside the interpreter running the tests first on PATH.
- The pages under docs/integrations/, and any block importing `skeleton_compressor.integrations`,
  run where the adapters' frameworks install (Python 3.11+).
- ```sh blocks (installing, developing) and blocks without a language (tables of figures)
  are not run.

The examples run on the default backend (the extension; the suite refuses to start without
it); both backends giving the same answers is what the rest of the suite checks.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# The adapters' examples need their frameworks, which the test extra installs on Python 3.11+.
FRAMEWORKS_INSTALL = sys.version_info >= (3, 11)
ADAPTER_PAGES = sorted((ROOT / "docs" / "integrations").glob("*.md"))
PAGES = [
    README,
    *sorted((ROOT / "docs").glob("*.md")),
    *(ADAPTER_PAGES if FRAMEWORKS_INSTALL else []),
]
SETUP_COMMANDS = [
    "pip install . && skeleton-compressor demo",
    "pip install '.[test]' && python -m pytest",
]

_FENCE = re.compile(r"^( *)```(\w*)\s*$")


@dataclass
class Block:
    language: str
    line: int  # 1-based line of the opening fence
    text: str
    follows_previous: bool  # only blank lines between this block and the one before


def blocks(path: Path) -> list[Block]:
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    index, last_end = 0, -10
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, language = len(opening[1]), opening[2]
        start = index
        index += 1
        body = []
        while index < len(lines) and lines[index].strip() != "```":
            body.append(lines[index][indent:])
            index += 1
        assert index < len(lines), f"{path.name}:{start + 1}: a code block is not closed"
        between = lines[last_end + 1 : start]
        follows = last_end >= 0 and all(not line.strip() for line in between)
        found.append(Block(language, start + 1, "\n".join(body) + "\n", follows))
        last_end = index
        index += 1
    return found


def _runs_here(block: Block) -> bool:
    return FRAMEWORKS_INSTALL or "skeleton_compressor.integrations" not in block.text


def _run_python(path: Path, page: list[Block]) -> None:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for position, block in enumerate(page):
        if block.language != "python" or not _runs_here(block):
            continue
        following = page[position + 1] if position + 1 < len(page) else None
        expected = ""
        if following is not None and following.language == "text" and following.follows_previous:
            expected = following.text
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block.text, f"{path.name}:{block.line}", "exec"), namespace)
        assert out.getvalue() == expected, f"{path.name}:{block.line} printed otherwise"


def _commands(block: Block) -> list[tuple[str, str]]:
    commands: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            assert commands, f"console block at line {block.line}: output before a command"
            commands[-1][1].append(line)
    return [(command, "".join(f"{line}\n" for line in output)) for command, output in commands]


def _run_console(path: Path, page: list[Block], directory: Path) -> None:
    environment = dict(os.environ)
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"
    environment.pop("SKELETON_COMPRESSOR_BACKEND", None)
    for block in page:
        if block.language != "console":
            continue
        for command, expected in _commands(block):
            completed = subprocess.run(
                ["bash", "-o", "pipefail", "-c", command],
                cwd=directory,
                env=environment,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=120,
            )
            shown = completed.stdout
            assert shown == expected, f"{path.name}:{block.line}: {command}"


@pytest.mark.parametrize("path", PAGES, ids=lambda path: path.name)
def test_examples_print_what_the_page_shows(path: Path, tmp_path: Path) -> None:
    page = blocks(path)
    _run_python(path, page)
    _run_console(path, page, tmp_path)


def test_every_page_has_examples_that_run() -> None:
    # A typo in a fence's language would leave an example unrun.
    languages = {block.language for page in PAGES for block in blocks(page)}
    assert languages <= {"python", "text", "console", "sh", "yaml", ""}, languages
    for page in PAGES:
        for block in blocks(page):
            if block.language == "text":
                assert block.follows_previous, f"{page.name}:{block.line}: output of nothing"


def test_readme_opens_with_the_setup_commands() -> None:
    first = blocks(README)[0]
    assert first.language == "sh"
    assert first.text.splitlines() == SETUP_COMMANDS
    # A page for users: what, install, quickstart, concepts, adapters; the rest is in docs/.
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 280


def test_blocks_are_read_as_written() -> None:
    page = blocks(README)
    assert any(block.language == "python" for block in page)
    assert any(block.language == "console" for block in page)
    pairs = [
        (block, after)
        for block, after in zip(page, page[1:])
        if block.language == "python" and after.language == "text" and after.follows_previous
    ]
    assert pairs, "the README shows the output of at least one example"
