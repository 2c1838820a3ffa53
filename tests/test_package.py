"""The installed package: its surface, its version, and a real compiled backend."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
import skeleton_compressor
from skeleton_compressor import SkeletonCompressor, SkeletonCompressorService
from skeleton_compressor.backend import ENVIRONMENT_VARIABLE, load_backend

SOURCE_TREE = Path(__file__).resolve().parent.parent / "python"


def test_rust_extension_is_built_and_installed() -> None:
    from skeleton_compressor import _core

    assert SkeletonCompressorService(backend="rust").backend == "rust"
    compiled = Path(_core.__file__).resolve()
    assert compiled.suffix in {".so", ".pyd"}
    assert SOURCE_TREE not in compiled.parents


def test_auto_uses_rust_when_it_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert SkeletonCompressorService().backend == "rust"


def test_version_matches_the_distribution() -> None:
    assert skeleton_compressor.__version__ == importlib.metadata.version("skeleton-compressor")


def test_public_names() -> None:
    for name in skeleton_compressor.__all__:
        assert hasattr(skeleton_compressor, name), name
    assert {
        "ContextFragment",
        "SkeletonMetadata",
        "SkeletonResult",
        "SkeletonCompressor",
        "SkeletonCompressorService",
        "compress",
        "validate_fragments",
        "Plan",
        "compress_arrays",
    } <= set(skeleton_compressor.__all__)


def test_typing_marker_and_stub_ship_in_the_wheel() -> None:
    package = Path(skeleton_compressor.__file__).parent
    assert (package / "py.typed").is_file()
    assert (package / "_core.pyi").is_file()


def test_service_satisfies_protocol(service: SkeletonCompressorService) -> None:
    assert isinstance(service, SkeletonCompressor)
    assert not isinstance(object(), SkeletonCompressor)


def test_environment_variable_sets_what_auto_means(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "python")
    assert SkeletonCompressorService().backend == "python"
    assert SkeletonCompressorService(backend="rust").backend == "rust"
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "rust")
    assert SkeletonCompressorService().backend == "rust"
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "fortran")
    with pytest.raises(ValueError, match=ENVIRONMENT_VARIABLE):
        SkeletonCompressorService()


def test_missing_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "skeleton_compressor._core", None)
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    with pytest.raises(ImportError, match="maturin develop"):
        load_backend("rust")
    assert load_backend("auto")[0] == "python"
    assert SkeletonCompressorService().backend == "python"


@pytest.mark.parametrize("backend", ["gpu", "", None, "Rust"])
def test_unknown_backend(backend: object) -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        SkeletonCompressorService(backend=backend)  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", ["best", "", None, "GREEDY", ["greedy"]])
def test_unknown_strategy(strategy: object) -> None:
    with pytest.raises(ValueError, match="strategy must be one of"):
        SkeletonCompressorService(strategy=strategy)  # type: ignore[arg-type]


def test_service_reports_its_settings() -> None:
    service = SkeletonCompressorService(backend="python", strategy="prefix")
    assert (service.backend, service.strategy) == ("python", "prefix")
    assert "prefix" in repr(service)
