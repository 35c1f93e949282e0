"""The suite's cost per test file: CPU time and resident memory (a pytest plugin, registered
by ``tests/conftest.py``).

Why: a pytest process runs many files (a batch of ``tests/lanes.py``, or a whole plain run),
so a module that keeps a model alive (an engine in a module global, a recogniser in a session
fixture, a window never closed) makes every later file pay for it, and one process over the
suite grew to 4.8 GB before anyone saw which file did it.
After each file the plugin collects garbage and reads the process's resident memory and the
CPU time (user + system, this process and its children) the file took; the run ends with its
peak and the files that cost the most, so a regression shows in the run that caused it.
CPU time, not wall time: the suite's machines are shared, and a loaded machine stretches
wall time but not the work. ``--cost-report=N`` lists N files of each (0: none);
``--cost-log=PATH`` writes one tab-separated line per file as it finishes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
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


def _libc() -> ctypes.CDLL | None:
    """glibc, whose ``malloc_trim`` gives freed heap pages back; None elsewhere (macOS, musl)."""
    name = ctypes.util.find_library("c") if sys.platform.startswith("linux") else None
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


_LIBC = _libc()


def _trim() -> None:
    """Give the heap's freed pages back to the system (glibc keeps them for the next allocation).

    Why: a file's models and audio are freed when its fixtures end, but glibc keeps the
    pages, so every later file starts from the highest point of all before it.
    """
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _cpu_s() -> float:
    """User + system CPU seconds of this process and its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cost-report", type=int, default=8, metavar="N",
                     help="after the run, list the N test files that took the most CPU time and the N that "
                          "left the most resident memory behind (0: none)")
    parser.addoption("--cost-log", metavar="PATH",
                     help="write one line per test file as it finishes: CPU s, MB left behind, MB resident, "
                          "peak MB so far, file")


class _FileCost:
    def __init__(self, shown: int, log: str | None) -> None:
        self.shown = shown
        self.log = Path(log) if log else None
        self.current: str | None = None
        self.rss = _rss_mb() or 0.0
        self.cpu = _cpu_s()
        self.files: dict[str, tuple[float, float, float]] = {}  # file -> (CPU s, MB left behind, MB after)

    def _close_file(self) -> None:
        if self.current is not None:
            gc.collect()
            _trim()
            rss, cpu = _rss_mb() or 0.0, _cpu_s()
            cost = self.files[self.current] = (cpu - self.cpu, rss - self.rss, rss)
            if self.log is not None:
                with self.log.open("a", encoding="utf-8") as f:
                    f.write(f"{cost[0]:.1f}\t{cost[1]:+.0f}\t{cost[2]:.0f}\t{_peak_mb():.0f}\t{self.current}\n")
        self.current, self.rss, self.cpu = None, _rss_mb() or 0.0, _cpu_s()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        path = item.nodeid.split("::", 1)[0]
        if path != self.current:
            self._close_file()  # the last file's module fixtures are torn down by now
            self.current = path

    def pytest_sessionfinish(self) -> None:
        self._close_file()

    def pytest_terminal_summary(self, terminalreporter) -> None:  # noqa: ANN001
        if not self.shown or not self.files:
            return
        tr, peak = terminalreporter, _peak_mb()
        tr.section("cost per test file")
        over = f", over the suite's bound of {PEAK_BOUND_MB} MB" if peak > PEAK_BOUND_MB else ""
        tr.write_line(f"peak resident memory of the test process: {peak:.0f} MB{over}; "
                      f"CPU time of the files: {sum(c for c, _, _ in self.files.values()):.0f} s")
        for title, key in (("CPU s", 0), ("MB left behind", 1)):
            tr.write_line(f"most {title}:")
            for path, (cpu, grown, after) in sorted(self.files.items(), key=lambda kv: -kv[1][key])[:self.shown]:
                tr.write_line(f"  {cpu:7.1f} CPU s {grown:+7.0f} MB {after:7.0f} MB after  {path}")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_FileCost(config.getoption("--cost-report"), config.getoption("--cost-log")),
                                  "support-file-cost")
