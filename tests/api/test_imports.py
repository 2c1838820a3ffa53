"""No module of the package imports, directly or through others, a module that imports it.

Imports inside `if TYPE_CHECKING:` do not run and are left out; a function-level import is
counted unless the line before it says it is lazy (`# A lazy import: ...`), the one way a
cycle may be broken.
"""

from __future__ import annotations

import ast
from pathlib import Path

import skeleton_compressor
from support.cycles import find_cycle

PACKAGE = Path(skeleton_compressor.__file__).resolve().parent
NAME = "skeleton_compressor"


def _module_name(path: Path) -> str:
    parts = [NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, lines: list[str]) -> list[ast.ImportFrom | ast.Import]:
    found: list[ast.ImportFrom | ast.Import] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                before = lines[child.lineno - 2].strip() if child.lineno > 1 else ""
                if not before.lower().startswith("# a lazy import"):
                    found.append(child)
            visit(child)

    visit(tree)
    return found


def _targets(module: str, is_package: bool, node: ast.AST, known: set[str]) -> set[str]:
    """The package's modules an import statement needs run: what it names (for `from x import
    y`, the submodule `x.y` if there is one, else `x`, whose attribute `y` must be set by
    then), and the packages that contain it, but for those the importing module is in (they
    have started running before it does)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        assert isinstance(node, ast.ImportFrom)
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        names = [
            f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in known else origin
            for alias in node.names
        ]
    ancestors = _parents(module) | ({module} if is_package else set())
    needed = set()
    for name in names:
        parts = name.split(".")
        containing = {".".join(parts[:end]) for end in range(1, len(parts))} - ancestors
        needed |= ({name} | containing) & known
    return needed - {module}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    # The compiled module: Rust, whose one import of the package, `_for_core`, is made on
    # first use, once the package has loaded.
    compiled = f"{NAME}._core"
    known = {*modules, compiled}
    graph: dict[str, set[str]] = {compiled: set()}
    for module, path in modules.items():
        text = path.read_text(encoding="utf-8")
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _imports(ast.parse(text), text.splitlines()):
            edges |= _targets(module, is_package, node, known)
        graph[module] = edges
    return graph


def _parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def test_the_graph_sees_the_package() -> None:
    graph = import_graph()
    assert "skeleton_compressor.backend" in graph["skeleton_compressor.service"]
    assert "skeleton_compressor._fallback" in graph["skeleton_compressor.backend"]
    assert "skeleton_compressor.cli.main" in graph
    # The lazy import that `ContextFragment.from_text` needs is the one left out.
    assert "skeleton_compressor.text_fragments" not in graph["skeleton_compressor.types"]


def test_no_import_cycle() -> None:
    assert find_cycle(import_graph()) is None


def test_a_cycle_would_be_found() -> None:
    graph = import_graph()
    graph["skeleton_compressor.types"] = {"skeleton_compressor.text_fragments"}
    assert find_cycle(graph) is not None
