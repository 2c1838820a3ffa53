"""The installed package: its surface, its version, and a real compiled backend."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest
import skeleton_compressor
from skeleton_compressor import SkeletonCompressor, SkeletonCompressorService
from skeleton_compressor._backends.choice import ENVIRONMENT_VARIABLE
from skeleton_compressor._backends.loader import load_backend

DISTRIBUTION = "skeleton-compressor"
CARGO_TOML = Path(__file__).resolve().parents[2] / "Cargo.toml"
LICENSE = Path(__file__).resolve().parents[2] / "LICENSE"


def test_rust_extension_is_built_and_installed() -> None:
    from skeleton_compressor import _core

    assert SkeletonCompressorService(backend="rust").backend == "rust"
    compiled = Path(_core.__file__).resolve()
    assert compiled.suffix in {".so", ".pyd"}
    assert compiled.is_file()
    # Beside the package: in site-packages for a wheel, in python/ after `maturin develop`.
    assert compiled.parent == Path(skeleton_compressor.__file__).resolve().parent


def test_auto_uses_rust_when_it_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert SkeletonCompressorService().backend == "rust"


def test_version_matches_the_distribution() -> None:
    assert skeleton_compressor.__version__ == importlib.metadata.version(DISTRIBUTION)


def test_extension_reports_the_same_version() -> None:
    from skeleton_compressor import _core

    assert (
        _core.__version__
        == skeleton_compressor.__version__
        == importlib.metadata.version(DISTRIBUTION)
    )


def test_installed_version_is_the_one_in_cargo_toml() -> None:
    # Cargo.toml is where the version is written; an install older than the checkout fails here.
    cargo_toml = CARGO_TOML.read_text(encoding="utf-8")
    package = re.search(r"^\[package\]$(.*?)(?=^\[|\Z)", cargo_toml, re.MULTILINE | re.DOTALL)
    assert package is not None, cargo_toml
    written = re.search(r'^version\s*=\s*"([^"]+)"', package.group(1), re.MULTILINE)
    assert written is not None, package.group(0)
    assert importlib.metadata.version(DISTRIBUTION) == written.group(1)


def test_metadata_names_the_licence_and_ships_its_text() -> None:
    distribution = importlib.metadata.distribution(DISTRIBUTION)
    metadata = distribution.metadata
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    # PEP 639: the file named by License-File is in the .dist-info's licenses/ folder.
    text = distribution.read_text("licenses/LICENSE")
    assert text is not None
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the skeleton-compressor authors" in text
    if LICENSE.is_file():  # tests run from a checkout: the shipped text is the committed one
        assert text == LICENSE.read_text(encoding="utf-8")


def test_metadata_classifiers_and_python_versions() -> None:
    metadata = importlib.metadata.metadata(DISTRIBUTION)
    classifiers = set(metadata.get_all("Classifier") or [])
    assert {
        "Development Status :: 4 - Beta",
        "Programming Language :: Rust",
        "Typing :: Typed",
        *(f"Programming Language :: Python :: 3.{minor}" for minor in range(9, 14)),
        "Operating System :: POSIX :: Linux",
        "Operating System :: MacOS",
        "Operating System :: Microsoft :: Windows",
    } <= classifiers
    # With a License-Expression, PEP 639 forbids licence classifiers.
    assert not any(classifier.startswith("License ::") for classifier in classifiers)
    assert metadata["Requires-Python"] == ">=3.9"


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
