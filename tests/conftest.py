"""Every behaviour test runs once per backend; the Rust one must really be the extension."""

from __future__ import annotations

from pathlib import Path

import pytest
import skeleton_compressor
from skeleton_compressor import SkeletonCompressorService

BACKENDS = ("rust", "python")
SOURCE_TREE = Path(__file__).resolve().parent.parent / "python"


def pytest_sessionstart(session: pytest.Session) -> None:
    # Tests must exercise the installed wheel: the source tree has no compiled module.
    package_dir = Path(skeleton_compressor.__file__).resolve().parent
    if SOURCE_TREE in package_dir.parents:
        raise pytest.UsageError(
            f"skeleton_compressor was imported from the source tree ({package_dir}); "
            "install the package (pip install '.[test]') and run pytest from the checkout root"
        )


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
