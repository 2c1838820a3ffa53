"""The compiled extension imports one Python module, `_backends/rust.py`, and looks names up on
it by string: those strings, read from the Rust sources, are the names that module offers."""

from __future__ import annotations

import re
from pathlib import Path

from skeleton_compressor._backends import rust

RUST = Path(__file__).resolve().parents[2] / "rust"
MODULE = "skeleton_compressor._backends.rust"

# Python modules the bindings import: `py.import("name")`, however the call is laid out.
IMPORTED = re.compile(r'\.import\(\s*"([^"]+)"\s*\)')
# Names looked up or called on a Python object by a string literal.
LOOKED_UP = re.compile(r'\b(?:getattr|call_method1|call_method0|call_method)\(\s*"([^"]+)"')
# `worded(py, "name", ...)` in errors.rs calls the function of that name on the module.
WORDED = re.compile(r'\bworded\(\s*py,\s*"([^"]+)"')


def _rust_sources() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(RUST.rglob("*.rs")))


def test_the_only_package_module_rust_imports_is_the_rust_side() -> None:
    imported = set(IMPORTED.findall(_rust_sources()))
    assert {name for name in imported if name.startswith("skeleton_compressor")} == {MODULE}


def test_every_name_rust_looks_up_on_it_is_there_and_every_name_there_is_looked_up() -> None:
    sources = _rust_sources()
    strings = set(LOOKED_UP.findall(sources)) | set(WORDED.findall(sources))
    # Other lookups are on other objects (numbers.Integral, a buffer's `format`, a writer's
    # `write`); a name that reads like one of ours but is not there is a rename missed.
    ours = {
        name
        for name in strings
        # Dunder names (`__new__` of `object`) are every module's too, none of them ours.
        if not name.startswith("__")
        and (hasattr(rust, name) or name.endswith(("_error", "Error", "Fragment")))
    }
    assert ours == set(rust.__all__)
    for name in rust.__all__:
        assert hasattr(rust, name), name
