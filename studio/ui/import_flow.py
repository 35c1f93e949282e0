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
from PySide6.QtWidgets import QFileDialog, QMessageBox, QProgressDialog, QWidget

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
        self.question: QMessageBox | None = None  # the first start's question while it is asked
        self.watch: ImportWatch | None = None

    # ------------------------------------------------------------ the two questions (test seams)

    def choose_manuscript(self, start: str) -> str:
        path, _ = QFileDialog.getOpenFileName(self.window, "Import manuscript", start, MANUSCRIPT_FILTER)
        return path

    def choose_folder(self, start: str) -> str:
        start_at = Path(start)
        while not start_at.is_dir() and start_at != start_at.parent:  # a folder not made yet greyed out "Choose"
            start_at = start_at.parent
        return QFileDialog.getExistingDirectory(self.window, "Where to keep the project", str(start_at))

    def projects_question(self) -> QMessageBox:
        """The first start's question, said before any folder is asked for: what a project folder is,
        and the default folder, chosen with one click."""
        box = QMessageBox(QMessageBox.Icon.Question, "Where to keep your projects",
                          "Each book you open gets a project folder: its chapters and settings, the audio as it is "
                          "rendered (about 100 MB for a long novel) and the proof-listening results. Where should "
                          "the studio keep these folders?", QMessageBox.StandardButton.Cancel, self.window)
        box.setInformativeText(f"The default is {DEFAULT_PROJECTS} (made when it is first used). You can choose "
                               "another folder for each import later.")
        default = box.addButton(f"Use {DEFAULT_PROJECTS.name}", QMessageBox.ButtonRole.AcceptRole)
        default.setToolTip(str(DEFAULT_PROJECTS))
        box.addButton("Choose another folder\u2026", QMessageBox.ButtonRole.ActionRole)
        box.addButton("Beside each book", QMessageBox.ButtonRole.ActionRole)
        box.setDefaultButton(default)
        return box

    def ask_projects_home(self) -> str:
        """The folder of projects (``BESIDE``: next to each book), or "" when the producer cancelled."""
        box = self.projects_question()
        self.question = box
        box.exec()
        clicked = box.clickedButton()
        text = clicked.text() if clicked is not None else ""
        self.question = None
        if text.startswith("Use "):
            return str(DEFAULT_PROJECTS)
        if text.startswith("Choose"):
            return self.choose_folder(str(DEFAULT_PROJECTS))
        return BESIDE if text == "Beside each book" else ""

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
            home = self.ask_projects_home()  # once: then remembered
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
