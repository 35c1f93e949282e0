"""Writing the book out, as the session runs it: chapter files and publish-ready packages.

Why an object of its own, owned by :class:`~studio.desktop.session.ProjectSession`:
exporting shares nothing with the session's other commands but the open project
and its snapshot. It runs on a task thread of its own, so a long export (an hour
of MP3 encoding) never holds up an edit, a render job or a search, and the
session's shutdown waits for it like for its other runners.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject

from studio.project.store import Project
from studio.desktop.messages import ExportProgress, PackageChoices
from studio.desktop.snapshot import BookSnapshot
from studio.desktop.tasks import OnError, TaskRunner

#: what a publish-ready export counts as it goes: every chapter, a long chapter's pieces and the credits
PUBLISH_UNIT = "parts (chapters and credits)"


def package_options(fmt: str, chapters: Sequence[int], c: PackageChoices):  # -> PublishOptions
    """The command line's options for what the dialog asked ("" in the dialog: the default)."""
    from studio.delivery.publish import PublishOptions

    return PublishOptions(
        fmt=fmt, chapters=sorted(set(chapters)), cover=Path(c.cover) if c.cover else None,
        cover_fit=c.cover_fit or None, credits=c.credits, opening=c.opening.strip() or None,
        closing=c.closing.strip() or None, sample=c.sample, sample_chapter=c.sample_chapter,
        producer=c.producer.strip() or None)


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
        """Publish-ready files in the background, by the command line's own export
        (:func:`studio.delivery.export_book.export_book`: the proof refusal on request, the proof
        report in the manifest); progress per chapter, ``on_done`` gets the frozen BookExport."""
        from studio.delivery.export_book import export_book

        project, _snap = self.need()
        options = package_options(fmt, chapters, choices)

        def work(report=lambda _p: None):  # noqa: ANN001, ANN202 - called without it when nobody listens
            return export_book(project, out_dir, options, require=choices.require_proof,
                               progress=lambda p: report(ExportProgress(p.done, p.total, p.current,
                                                                                  unit=PUBLISH_UNIT)))

        self.tasks.run(work, on_progress=on_progress, on_done=on_done, on_error=on_error,
                       action="publish the book")

    def credits(self, fmt: str, chapters: Sequence[int], choices: PackageChoices, on_done) -> None:  # noqa: ANN001
        """The credits as the export would speak them with ``choices`` (the dialog shows them to edit)."""
        from studio.delivery.export_book import spoken_credits

        project, _snap = self.need()
        options = package_options(fmt, chapters, replace(choices, opening="", closing=""))
        self.tasks.run(lambda: spoken_credits(project, options), on_done=on_done, action="write the credits")

    def proof_before(self, chapters: Sequence[int], on_done) -> None:  # noqa: ANN001
        """The chapters' proof state (said in the dialog before the export)."""
        from studio.delivery.export_book import proof_before

        project, _snap = self.need()
        wanted = sorted(set(chapters))
        self.tasks.run(lambda: proof_before(project, wanted), on_done=on_done, action="read the proof state")

    def wait(self) -> None:
        self.tasks.wait()
