"""The suite's fixtures (a pytest plugin, registered by ``tests/conftest.py``): real files, the
real bundled voice, private state folders, headless Qt windows."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
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
    from support.voice import bundled_engine

    return bundled_engine()


@pytest.fixture(scope="module", autouse=True)
def _language_models_released():
    """Each test file leaves lingua's language models unloaded (a multilingual book loads about
    550 MB of them, kept for the process): the next file loads only what its own text needs."""
    yield
    if "lingua" in sys.modules:
        from studio.text.detector import release_models

        release_models()


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


@pytest.fixture
def window(qtbot, tmp_path: Path):  # noqa: ANN001, ANN201
    """A main window on the shared bundled voice; ``window.engines`` lists the engines it built."""
    from support.window import make_window

    engines: list = []
    win = make_window(qtbot, tmp_path, engines)
    win.engines = engines
    yield win
    win.close()
