"""Every behaviour test runs once per backend; the Rust one must really be the extension."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import skeleton_compressor
from skeleton_compressor import SkeletonCompressorService
from skeleton_compressor.tokens import ENCODINGS

BACKENDS = ("rust", "python")
HOW_TO_BUILD = (
    "install the package (pip install '.[test]', or maturin develop in a virtualenv) "
    "and run pytest from the checkout root"
)


def pytest_sessionstart(session: pytest.Session) -> None:
    # The tests need the compiled module beside the package they import: an installed wheel,
    # or `maturin develop`, which puts it in python/skeleton_compressor/. A source tree
    # without it would only test the fallback, so the suite does not start.
    package_dir = Path(skeleton_compressor.__file__).resolve().parent
    try:
        core = importlib.import_module("skeleton_compressor._core")
    except ImportError as error:
        raise pytest.UsageError(
            f"skeleton_compressor, imported from {package_dir}, has no compiled module _core "
            f"({error}); {HOW_TO_BUILD}"
        ) from None
    location = getattr(core, "__file__", None)
    compiled = Path(location).resolve() if location else None
    if compiled is None or not compiled.is_file() or compiled.parent != package_dir:
        raise pytest.UsageError(
            f"skeleton_compressor._core was loaded from {location or 'no file'}, not from a "
            f"file beside the package imported from {package_dir}; {HOW_TO_BUILD}"
        )
    _offline_tiktoken()


def _offline_tiktoken() -> None:
    """The Python backend counts the built-in encodings through tiktoken, which downloads
    its tables: here they are made from the extension's (checked to be the published files)
    and put where tiktoken looks first, so that the suite needs no network."""
    import tiktoken.registry
    from support.offline_tiktoken import published

    for name in ENCODINGS:
        tiktoken.registry.ENCODINGS.setdefault(name, published(name)[0])


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def service(backend: str) -> SkeletonCompressorService:
    compressor = SkeletonCompressorService(backend=backend)
    assert compressor.backend == backend
    return compressor


@pytest.fixture
def prefix_service(backend: str) -> SkeletonCompressorService:
    return SkeletonCompressorService(backend=backend, strategy="prefix")
