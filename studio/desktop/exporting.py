"""Writing the book out, as the session runs it: chapter files and publish-ready packages.

Why an object of its own, owned by :class:`~studio.desktop.session.ProjectSession`:
exporting shares nothing with the session's other commands but the open project
and its snapshot. It runs on a task thread of its own, so a long export (an hour
of MP3 encoding) never holds up an edit, a render job or a search, and the
session's shutdown waits for it like for its other runners.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QObject

from studio.project.store import Project
from studio.desktop.messages import ExportProgress, PackageChoices
from studio.desktop.snapshot import BookSnapshot
from studio.desktop.tasks import OnError, TaskRunner


class BookExports:
    """Export and publish of the open book, one at a time, off the GUI thread.

    ``need`` gives the open project and its snapshot (raising when none is open),
    so a request made with no book open fails the way every session command does.
    """

    def __init__(self, parent: QObject, need: Callable[[], tuple[Project, BookSnapshot]], on_error: OnError) -> None:
        self.need = need
        self.tasks = TaskRunner(parent, threads=1, on_error=on_error)

    def export(self, out_dir: str | Path, fmt: str, chapters: Sequence[int], *, on_progress=None,
               on_done=None, on_error=None, bitrate: str = "128k") -> None:  # noqa: ANN001
        """Write chapter files in the background, one chapter at a time (progress per chapter)."""
        from studio.delivery.export import export_chapter_files

        project, snap = self.need()
        wanted = sorted(set(chapters))

        def work(report) -> ExportProgress:  # noqa: ANN001
            files: list[str] = []
            seconds = 0.0
            report(ExportProgress(0, len(wanted), snap.chapters[wanted[0]].title if wanted else ""))
            for n, idx in enumerate(wanted, 1):
                for f in export_chapter_files(project, out_dir, fmt, [idx], bitrate=bitrate):
                    files.append(str(f.path))
                    seconds += f.duration
                nxt = snap.chapters[wanted[n]].title if n < len(wanted) else ""
                report(ExportProgress(n, len(wanted), nxt, tuple(files), seconds))
            return ExportProgress(len(wanted), len(wanted), "", tuple(files), seconds)

        self.tasks.run(work, on_progress=on_progress, on_done=on_done, on_error=on_error,
                       action="export the chapters")

    def publish(self, out_dir: str | Path, fmt: str, chapters: Sequence[int], *,
                choices: PackageChoices = PackageChoices(), on_progress=None, on_done=None,
                on_error=None) -> None:  # noqa: ANN001
        """Publish-ready files (mastered, tagged, checked, with credits and sample as
        ``choices`` say; see :mod:`studio.delivery.publish`) in the background; progress per
        chapter, ``on_done`` gets the frozen PublishResult."""
        from studio.delivery.publish import PublishOptions, publish

        project, _snap = self.need()
        c = choices
        options = PublishOptions(
            fmt=fmt, chapters=sorted(set(chapters)), cover=Path(c.cover) if c.cover else None,
            cover_fit=c.cover_fit or None, credits=c.credits, opening=c.opening.strip() or None,
            closing=c.closing.strip() or None, sample=c.sample, sample_chapter=c.sample_chapter)

        def work(report=lambda _p: None):  # noqa: ANN001, ANN202 - called without it when nobody listens
            return publish(project, out_dir, options,
                           progress=lambda p: report(ExportProgress(p.done, p.total, p.current)))

        self.tasks.run(work, on_progress=on_progress, on_done=on_done, on_error=on_error,
                       action="publish the book")

    def wait(self) -> None:
        self.tasks.wait()
