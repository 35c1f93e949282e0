"""Lookups for the review panes where only the newest request counts: search, waveform.

Why apart from the session: a search box sends a request per keystroke and the
waveform one per click in the tree; each is answered on a task thread of its own
(so it never waits behind an edit, and an edit never behind it) and an answer
that a newer request has overtaken is dropped, not shown. Both keep what they
may reuse: the search its index of the book's text (built once per text version),
the waveform its peaks (:class:`~studio.desktop.waveform.PeakCache`). The session
owns one of each and says which text version and project are current.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from PySide6.QtCore import QObject

from studio.audio.assemble import Pauses
from studio.project.duration import Timing
from studio.project.store import Project
from studio.desktop.search import SearchIndex, SearchResult
from studio.desktop.snapshot import BookSnapshot, SentenceNode
from studio.desktop.tasks import OnError, TaskRunner
from studio.desktop.waveform import PeakCache, WaveformData


class BookSearch:
    """Find text in the book off the GUI thread; ``found`` gets the newest request's answer."""

    def __init__(self, parent: QObject, found: Callable[[SearchResult], None], on_error: OnError) -> None:
        self.found = found
        self.tasks = TaskRunner(parent, threads=1, on_error=on_error)
        self._index: tuple[int, SearchIndex] | None = None  # (text version, index)
        self._wanted = 0
        self.indexes_built = 0

    def find(self, snap: BookSnapshot, version: int, needle: str) -> None:
        """Find ``needle`` in ``snap`` (its text version ``version``: the index is rebuilt when it changes)."""
        self._wanted += 1
        rid = self._wanted

        def work() -> SearchResult:
            if self._index is None or self._index[0] != version:
                self._index = (version, SearchIndex(snap))
                self.indexes_built += 1
            return self._index[1].find(needle)

        def done(result: SearchResult) -> None:
            if rid == self._wanted:
                self.found(result)

        self.tasks.run(work, on_done=done, action="search the book")

    def wait(self) -> None:
        self.tasks.wait()


class WaveformLoader:
    """Peaks of sentences from the audio cache off the GUI thread; ``ready`` gets the newest
    request's, and only while its project is still the open one (``current``)."""

    def __init__(self, parent: QObject, ready: Callable[[WaveformData], None], current: Callable[[], Project | None],
                 on_error: OnError) -> None:
        self.ready, self.current = ready, current
        self.tasks = TaskRunner(parent, threads=1, on_error=on_error)  # never behind an edit
        self.peaks = PeakCache()
        self._wanted = 0

    def request(self, project: Project, nodes: Sequence[SentenceNode], pauses: Pauses, label: str,
                titles: Mapping[int, str], timing: Timing | None) -> int:
        """Ask for the peaks of ``nodes``; the request's number (the newest wins)."""
        self._wanted += 1
        rid, nodes = self._wanted, tuple(nodes)

        def done(data: WaveformData) -> None:
            if rid == self._wanted and self.current() is project:
                self.ready(data)

        self.tasks.run(lambda: self.peaks.get(project, nodes, pauses, label, titles, timing), on_done=done,
                       action="draw the waveform")
        return rid

    def wait(self) -> None:
        self.tasks.wait()
