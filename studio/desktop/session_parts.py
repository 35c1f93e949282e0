"""What the session's command groups (chapter edits, takes) use of the session they serve.

Why a protocol and not the session's class: the groups are mixed into
:class:`~studio.desktop.session.ProjectSession`, which imports them; typing ``self`` as
this protocol says what they need of it without importing the session back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from studio.desktop.jobqueue import JobQueue
from studio.desktop.preview import PreviewController
from studio.desktop.snapshot import BookSnapshot, ChapterNode
from studio.desktop.tasks import TaskRunner
from studio.project.store import Project


class SessionParts(Protocol):
    """The session's task runner, signals and snapshot, as its command groups see them."""

    tasks: TaskRunner
    preview: PreviewController
    long_chapter_minutes: float
    error: Any  # Signal(ErrorInfo)
    message: Any  # Signal(str)
    takesChanged: Any  # Signal(TakeList)
    historyChanged: Any  # Signal((undo label, redo label))
    project: Project | None

    def _need(self) -> Project: ...
    def _need_queue(self) -> JobQueue: ...
    def _snap(self) -> BookSnapshot: ...
    def _set_snapshot(self, snapshot: BookSnapshot) -> None: ...
    def _chapter_done(self, node: ChapterNode) -> None: ...
    def render_sentences(self, ids: Sequence[int], label: str = "", regenerate: bool = False) -> int: ...
    def _chapter_change(self, chapter: int, change: Callable[[Project], None], action: str) -> None: ...
    def _structure_change(self, change: Callable[[Project], None], action: str) -> None: ...
    def _takes_read(self, takes: Any) -> None: ...
    def _undoable(self, label: str, work: Callable[[], Any]) -> Callable[[], Any]: ...
