"""Book Details: the title, author, narrator, the book's rights and the recording's copyright, each
with where it came from (the EPUB, the front matter, a default, or set by you).

Why a screen of its own: the closing credits and the files' tags say these, and they come
from several places; a producer who hears "Copyright 2019 by Acme Press" needs to see that
the EPUB said it, and to correct it before export. Saved in the project's settings (the
same as ``studio details``); a box left empty, or holding the book's own value, follows
the book.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QGridLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from studio.delivery.book_details import FIELDS, LABELS, BookDetails, changes_for, source_for
from studio.project.settings import ProjectSettings

#: what each box is for, as its tooltip says
TIPS = {
    "title": "The title the credits speak and the files are tagged with.",
    "author": "The author the credits name and the files' artist tag.",
    "narrator": "The narrator tag and credit; the narration is disclosed as synthetic in any case.",
    "rights": "The book's rights: \u201cpublic domain\u201d, or the copyright the book claims (\u201cCopyright "
              "2019 by Acme Press\u201d). The closing credits never claim a copyright the book does not.",
    "producer": "Who holds the recording's copyright: \u201cRecording copyright <year> by \u2026\u201d in the "
                "closing credits and the copyright tag.",
    "recording_year": "The recording's copyright year (a year like 2026).",
}


class BookDetailsDialog(QDialog):
    applied = Signal(object)  # ProjectSettings: the project's, with the details changed

    def __init__(self, settings: ProjectSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Book details")
        self.settings = settings
        self.details: BookDetails | None = None
        self.boxes: dict[str, QLineEdit] = {}
        self.sources: dict[str, QLabel] = {}
        grid = QGridLayout()
        for row, name in enumerate(FIELDS):
            box, source = QLineEdit(), QLabel()
            box.setToolTip(TIPS[name] + " Empty: the book's own.")
            box.setEnabled(False)  # until the details are read
            source.setStyleSheet("color: palette(mid); font-style: italic;")
            box.textChanged.connect(lambda _t, n=name: self._say_source(n))
            grid.addWidget(QLabel(f"{LABELS[name]}:"), row, 0)
            grid.addWidget(box, row, 1)
            grid.addWidget(source, row, 2)
            self.boxes[name], self.sources[name] = box, source
        grid.setColumnStretch(1, 1)
        self.note = QLabel("Used by the credits and the tags of every export (M4B, MP3 ...). Clear a box to go "
                           "back to the book's own.")
        self.note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_btn = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_btn.setEnabled(False)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self.resize(640, self.sizeHint().height())

    def show_details(self, details: BookDetails) -> None:
        """Fill the boxes with the values the export uses now, and say where each came from."""
        self.details = details
        for name, box in self.boxes.items():
            detail = getattr(details, name)
            box.setText(detail.value)
            box.setPlaceholderText(detail.inherited)
            box.setEnabled(True)
            self._say_source(name)
        self.save_btn.setEnabled(True)

    def source_of(self, name: str) -> str:
        return self.sources[name].text()

    def changes(self) -> dict[str, str]:
        """The settings to store for what the boxes hold (only those that differ from the saved ones)."""
        if self.details is None:
            return {}
        wanted = changes_for(self.details, {name: box.text() for name, box in self.boxes.items()})
        saved = {name: getattr(self.details, name).value if getattr(self.details, name).own else ""
                 for name in FIELDS}
        return {name: value for name, value in wanted.items() if value != saved[name]}

    def _say_source(self, name: str) -> None:
        if self.details is not None:
            self.sources[name].setText(source_for(getattr(self.details, name), self.boxes[name].text()))

    def _save(self) -> None:
        changes = self.changes()
        if changes:
            self.applied.emit(self.settings.with_changes(**changes))
        self.accept()


def open_book_details(window: Any) -> BookDetailsDialog | None:  # window: studio.ui.main_window.MainWindow
    """The menu's hook: the dialog for the open project, read and saved through the session."""
    s = window.session
    if s.settings is None:
        return None
    dlg = BookDetailsDialog(s.settings, window)
    dlg.applied.connect(s.update_settings)
    window.book_details_dialog = dlg
    s.book_details(on_done=lambda d: dlg.isVisible() and dlg.show_details(d))
    dlg.open()
    return dlg
