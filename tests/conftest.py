"""Shared fixtures: real files, the real bundled voice, headless Qt."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/voice.py, shared by fixtures and helpers
sys.path.insert(1, str(REPO / "bench"))  # bench/tacotron.py, shared by a benchmark and its tests
RESOURCES = REPO / "resources"
SHARED_EPUBS = REPO.parent / "shared" / "fixtures" / "epub"


@pytest.fixture(scope="session")
def resources() -> Path:
    return RESOURCES


@pytest.fixture(scope="session")
def shared_epubs() -> Path:
    if not SHARED_EPUBS.is_dir():
        pytest.skip(f"shared EPUB fixtures not found at {SHARED_EPUBS}")
    return SHARED_EPUBS


@pytest.fixture(scope="session")
def onnx_engine():
    """The real bundled voice on ONNX Runtime, loaded once per test session (shared: do not close)."""
    from voice import bundled_engine

    return bundled_engine()


@pytest.fixture
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """State, config and cache folders of this test's own (``usefixtures("private_dirs")``):
    recent projects, settings and built models never leak between tests or from the user."""
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.delenv("STUDIO_CACHE_DIR", raising=False)


@pytest.fixture(autouse=True)
def _root_logging_restored():
    """`studio.cli.main` called in-process points the root logger at this test's
    captured stderr; give the next test the handlers it would have had."""
    import logging

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
