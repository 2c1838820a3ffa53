"""No module of the package imports, directly or through others, a module that imports it; and
`import skeleton_compressor` loads neither the command line nor the Python backend.

Every import that runs is counted, a function-level one too: only those inside
`if TYPE_CHECKING:`, which never run, are left out.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
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


def _imports(tree: ast.AST) -> list[ast.ImportFrom | ast.Import]:
    found: list[ast.ImportFrom | ast.Import] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
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
    # The compiled module: Rust, whose one import of the package, `_backends.rust`, is made on
    # first use, once the package has loaded.
    compiled = f"{NAME}._core"
    known = {*modules, compiled}
    graph: dict[str, set[str]] = {compiled: set()}
    for module, path in modules.items():
        text = path.read_text(encoding="utf-8")
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _imports(ast.parse(text)):
            edges |= _targets(module, is_package, node, known)
        graph[module] = edges
    return graph


def _parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def test_the_graph_sees_the_package() -> None:
    graph = import_graph()
    assert "skeleton_compressor._backends.loader" in graph["skeleton_compressor.service"]
    assert "skeleton_compressor.cli.main" in graph
    # Imported inside a function, and counted.
    assert "skeleton_compressor._backends.python" in graph["skeleton_compressor._backends.loader"]
    assert "skeleton_compressor.cli.bench.command" in graph["skeleton_compressor.cli.main"]
    # Left out: under `if TYPE_CHECKING:`.
    assert "skeleton_compressor.types" not in graph["skeleton_compressor._counted_texts"]


def test_no_import_cycle() -> None:
    assert find_cycle(import_graph()) is None


def test_a_cycle_would_be_found() -> None:
    graph = import_graph()
    graph["skeleton_compressor.types"].add("skeleton_compressor.text_fragments")
    assert find_cycle(graph) is not None


# The package's modules that an import, and then a call on `backend`, loaded.
LOADED = """
import sys
import skeleton_compressor
if sys.argv[1] != "none":
    skeleton_compressor.compress(
        (skeleton_compressor.ContextFragment("a", 1, 0.5),), 1, backend=sys.argv[1]
    )
print("\\n".join(sorted(name for name in sys.modules if name.startswith("skeleton_compressor"))))
"""


def _loaded(backend: str) -> set[str]:
    environment = {
        name: value for name, value in os.environ.items() if name != "SKELETON_COMPRESSOR_BACKEND"
    }
    completed = subprocess.run(
        [sys.executable, "-c", LOADED, backend],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    return set(completed.stdout.split())


def _of(modules: set[str], package: str) -> set[str]:
    return {name for name in modules if name == package or name.startswith(package + ".")}


@pytest.mark.parametrize("backend", ["none", "auto", "rust"])
def test_the_package_and_rust_load_neither_the_command_line_nor_the_python_backend(
    backend: str,
) -> None:
    loaded = _loaded(backend)
    assert "skeleton_compressor._core" in loaded
    assert _of(loaded, "skeleton_compressor.cli") == set()
    assert _of(loaded, "skeleton_compressor._backends.python") == set()


def test_the_python_backend_is_loaded_when_chosen() -> None:
    loaded = _loaded("python")
    assert "skeleton_compressor._backends.python.compressor" in loaded
    assert _of(loaded, "skeleton_compressor.cli") == set()


REFUSED = """
import sys
import skeleton_compressor
try:
    skeleton_compressor.SkeletonCompressorService(backend="python", **{sys.argv[1]: "bad"})
except (TypeError, ValueError):
    pass
print("\\n".join(sorted(name for name in sys.modules if name.startswith("skeleton_compressor"))))
"""


@pytest.mark.parametrize("option", ["strategy", "min_relevance", "on_overflow", "order"])
def test_a_bad_option_is_refused_before_the_python_backend_is_imported(option: str) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", REFUSED, option], capture_output=True, text=True, check=True
    )
    assert _of(set(completed.stdout.split()), "skeleton_compressor._backends.python") == set()
