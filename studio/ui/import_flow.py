"""File > Import and File > New Project: choose the manuscript, choose where the project
lives, import with progress and a Cancel.

Why one flow for both: Import used to write the project (91 MB for a long novel,
once rendered) silently next to the manuscript while New Project asked for a
folder. Now both ask, offering the folder chosen last time; the project is
``<that folder>/<manuscript name>.studio``, so importing the same manuscript again
into the same folder reopens its project instead of making a second one.

The open book is closed the moment the import starts, and a progress dialog
says which step the import is in (reading, languages, each chapter's sentences,
saving); Cancel stops it before anything is written.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QFileDialog, QProgressDialog, QWidget

from studio.project.folder import default_project_dir
from studio.desktop.importing import ImportStep, ImportWatch
from studio.desktop.messages import ErrorInfo
from studio.desktop.session import ProjectSession
from studio.text.importer import SUPPORTED_SUFFIXES

MANUSCRIPT_FILTER = "Manuscripts (" + " ".join(f"*{s}" for s in SUPPORTED_SUFFIXES) + ")"
#: the folder of projects (asked once, remembered; File > Import offers it too); BESIDE: next to each book
PROJECTS_DIR_KEY = "paths/projectsDir"
BESIDE = "beside the book"
#: offered the first time
DEFAULT_PROJECTS = Path.home() / "Audiobook Studio" / "Projects"


class ImportFlow:
    """Asks, imports, shows progress; ``window`` shows errors (``show_error``) and the status bar."""

    def __init__(self, window: QWidget, session: ProjectSession, qsettings: QSettings) -> None:
        self.window, self.session, self.qsettings = window, session, qsettings
        self.dialog: QProgressDialog | None = None
        self.watch: ImportWatch | None = None

    # ------------------------------------------------------------ the two questions (test seams)

    def choose_manuscript(self, start: str) -> str:
        path, _ = QFileDialog.getOpenFileName(self.window, "Import manuscript", start, MANUSCRIPT_FILTER)
        return path

    def choose_folder(self, start: str) -> str:
        return QFileDialog.getExistingDirectory(self.window, "Where to keep the project", start)

    # ------------------------------------------------------------ flow

    def ask(self) -> None:
        """Manuscript, then folder (the last one offered), then import."""
        path = self.choose_manuscript(str(self.qsettings.value("paths/lastDir", str(Path.home()))))
        if not path:
            return
        self.qsettings.setValue("paths/lastDir", str(Path(path).parent))
        remembered = str(self.qsettings.value(PROJECTS_DIR_KEY, "") or "")
        folder = self.choose_folder(remembered if remembered and remembered != BESIDE else str(Path(path).parent))
        if not folder:
            return
        self.qsettings.setValue(PROJECTS_DIR_KEY, folder)
        self.start(path, default_project_dir(path, folder))

    def open_manuscript(self, path: str | Path) -> bool:
        """A book opened (dropped, from the command line, the sample): its project in the folder of
        projects, asked the first time and remembered; a project made beside it before is reopened.

        Why ask: opening a book used to create its project folder beside the book without asking
        or saying where. False when the producer cancelled the question (nothing is made)."""
        path = Path(path)
        if default_project_dir(path, path.parent).is_dir():  # made by an earlier version, or `studio render`
            self.session.open_path(path)  # resumed there (the book read again when it changed)
            return True
        home = str(self.qsettings.value(PROJECTS_DIR_KEY, "") or "")
        if not home:
            home = self.choose_folder(str(DEFAULT_PROJECTS))  # once: then remembered
            if not home:
                self.window.statusBar().showMessage(  # type: ignore[attr-defined]
                    "Not opened: choose a folder for your projects to open a book", 8000)
                return False
            self.qsettings.setValue(PROJECTS_DIR_KEY, home)
        if home == BESIDE:
            self.session.open_path(path)
            return True
        folder = default_project_dir(path, home)
        if not folder.is_dir():
            Path(home).mkdir(parents=True, exist_ok=True)
            self.window.statusBar().showMessage(  # type: ignore[attr-defined]
                f"The project of {path.name} goes in {folder}", 10000)
        self.start(path, folder)  # made, or resumed (the book read again when it changed)
        return True

    def start(self, manuscript: str | Path, project_folder: str | Path) -> None:
        """Import with a progress dialog; the open book closes now."""
        watch = self.watch = ImportWatch()
        dialog = self.dialog = QProgressDialog(f"Importing {Path(manuscript).name}\u2026", "Cancel", 0, 0, self.window)
        dialog.setWindowTitle("Importing")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.canceled.connect(self._cancel)
        watch.stepped.connect(self._step)
        dialog.show()
        self.session.create(manuscript, project_folder, progress=watch, on_done=lambda _snap: self._finished(),
                            on_error=self._failed)

    def _step(self, step: ImportStep) -> None:
        if self.dialog is None:
            return
        self.dialog.setLabelText(step.text())
        self.dialog.setMaximum(max(step.total, 1))
        self.dialog.setValue(min(step.done, max(step.total, 1)))

    def _cancel(self) -> None:
        if self.watch is not None:
            self.watch.cancel()
        if self.dialog is not None:
            self.dialog.setLabelText("Cancelling after this step\u2026")

    def _finished(self) -> None:
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = None

    def _failed(self, err: ErrorInfo) -> None:
        cancelled = self.watch is not None and self.watch.cancelled
        self._finished()
        if cancelled:
            self.window.statusBar().showMessage("Import cancelled; nothing was saved", 8000)  # type: ignore[attr-defined]
        else:
            self.window.show_error(err)  # type: ignore[attr-defined]
