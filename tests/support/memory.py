"""The suite's memory, per test file (a pytest plugin, registered by ``tests/conftest.py``).

Why: the whole suite runs in one process, so a module that keeps a model alive (an engine
in a module global, a recogniser in a session fixture, a window never closed) makes every
later file pay for it, and the process grew to 4.8 GB before anyone saw which file did it.
After each file the plugin collects garbage and reads the process's resident memory; the
run ends with its peak and the files that left the most behind, so a regression shows in
the summary of the run that caused it. ``--memory-report=N`` lists N files (0: none).
"""

from __future__ import annotations

import gc
import resource
import sys
from pathlib import Path

import pytest

#: the suite's bound on its peak resident memory (docs/testing.md)
PEAK_BOUND_MB = 2500
_PAGE = resource.getpagesize()
_STATM = Path("/proc/self/statm")


def _rss_mb() -> float | None:
    """This process's resident memory now (Linux); None elsewhere."""
    try:
        return int(_STATM.read_text().split()[1]) * _PAGE / 2**20
    except (OSError, IndexError, ValueError):
        return None


def _peak_mb() -> float:
    """This process's peak resident memory (kilobytes on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--memory-report", type=int, default=8, metavar="N",
                     help="after the run, list the N test files that left the most resident memory behind")


class _FileMemory:
    def __init__(self, shown: int) -> None:
        self.shown = shown
        self.current: str | None = None
        self.before: float | None = None
        self.grown: dict[str, tuple[float, float]] = {}  # file -> (MB left behind, MB after it)

    def _close_file(self) -> None:
        if self.current is None:
            return
        gc.collect()
        after = _rss_mb()
        if after is not None and self.before is not None:
            self.grown[self.current] = (after - self.before, after)
        self.current, self.before = None, after

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        path = item.nodeid.split("::", 1)[0]
        if path != self.current:
            self._close_file()
            self.current = path
            if self.before is None:
                self.before = _rss_mb()

    def pytest_sessionfinish(self) -> None:
        self._close_file()

    def pytest_terminal_summary(self, terminalreporter) -> None:  # noqa: ANN001
        if not self.shown or not self.grown:
            return
        peak = _peak_mb()
        tr = terminalreporter
        tr.section("memory per test file")
        over = f" (over the suite's bound of {PEAK_BOUND_MB} MB)" if peak > PEAK_BOUND_MB else ""
        tr.write_line(f"peak resident memory of the test process: {peak:.0f} MB{over}")
        worst = sorted(self.grown.items(), key=lambda kv: kv[1][0], reverse=True)[:self.shown]
        for path, (grown, after) in worst:
            tr.write_line(f"{grown:+8.0f} MB  {after:7.0f} MB after  {path}")


def pytest_configure(config: pytest.Config) -> None:
    if _rss_mb() is not None:
        config.pluginmanager.register(_FileMemory(config.getoption("--memory-report")), "support-file-memory")
