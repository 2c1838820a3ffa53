"""No Rust module uses, directly or through others, a module that uses it, and none names an
item through a module above it (the re-exports of `core/mod.rs` are for the bindings).

A module's code is its file up to its first `#[cfg(test)]`: tests may reach anywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.cycles import find_cycle

RUST = Path(__file__).resolve().parents[2] / "rust"
PATH = re.compile(r"\b(crate::(?:[a-z_]+::)*[a-z_]+|(?:super::)+[a-z_]+)")

pytestmark = pytest.mark.skipif(not RUST.is_dir(), reason="needs the checkout's rust/")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(RUST).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return "::".join(["crate", *parts])


def _is_test_file(path: Path) -> bool:
    return path.stem == "tests" or path.stem.endswith("_tests")


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in RUST.rglob("*.rs") if not _is_test_file(path)}


def _code(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text.split("#[cfg(test)]", 1)[0]


def _resolve(reference: str, module: str, known: set[str]) -> str | None:
    """The module that `reference` (a `crate::` or `super::` path) names, or the longest known
    prefix of it (the module an item of the path is in)."""
    parts = reference.split("::")
    if parts[0] == "super":
        base = module.split("::")
        while parts and parts[0] == "super":
            parts, base = parts[1:], base[:-1]
        parts = base + parts
    while parts and "::".join(parts) not in known:
        parts = parts[:-1]
    return "::".join(parts) if parts else None


def module_graph() -> tuple[dict[str, set[str]], list[tuple[str, str]]]:
    """Each module's uses of the others, and the uses of a module above the user (an
    ancestor's re-export, which hides what is really used)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    upward: list[tuple[str, str]] = []
    for module, path in modules.items():
        used: set[str] = set()
        for reference in PATH.findall(_code(path)):
            target = _resolve(reference, module, known)
            if target is None or target == module or target.startswith(module + "::"):
                continue
            if module.startswith(target + "::"):
                upward.append((module, reference))
                continue
            used.add(target)
        graph[module] = used
    return graph, upward


def test_the_graph_sees_the_modules() -> None:
    graph, _ = module_graph()
    assert "crate::core::select::ranking" in graph["crate::core::select::compress"]
    assert "crate::core::select::columns" in graph["crate::core::records::read"]
    assert "crate::core::detach" in graph["crate::core::tokens::count_many"]
    assert "crate::bindings::compress" in graph["crate::bindings::compressor"]


def test_no_module_cycle() -> None:
    graph, _ = module_graph()
    assert find_cycle(graph) is None


def test_nothing_is_named_through_a_module_above() -> None:
    _, upward = module_graph()
    assert upward == []


def test_a_cycle_would_be_found() -> None:
    graph, _ = module_graph()
    graph["crate::core::select::ids"].add("crate::core::select::compress")
    assert find_cycle(graph) is not None
