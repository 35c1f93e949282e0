"""Shared fixtures: real files, the real bundled voice, headless Qt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
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


@pytest.fixture(scope="module")
def onnx_engine():
    """The real bundled voice on ONNX Runtime, loaded once per test module."""
    from studio.engine.registry import load_engine
    from studio.engine.voices import get_voice

    engine = load_engine(get_voice(None), "onnx")
    engine.load()
    yield engine
    engine.close()
