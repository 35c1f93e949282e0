"""Notes, images, tables & code: what the voice reads of what is not running prose.

Why a dialog of its own: each choice (footnotes at the end of the chapter or in place or
left out; captions and alt text; tables row by row or summarised; code) is the
producer's, made once per book, and costs nothing to change -- the import kept all of it
(:mod:`studio.text.content`), so only the sentences it touches render again. Saved
through the session, so a change is one step of the project's undo history.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from studio.text.content import CHOICES
from studio.project.settings import ProjectSettings

#: setting -> the label of its row
LABELS = {"notes": "Footnotes and endnotes", "images": "Images", "tables": "Tables", "code": "Code blocks"}


class ContentDialog(QDialog):
    applied = Signal(object)  # ProjectSettings

    def __init__(self, settings: ProjectSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Notes, images, tables & code")
        self.settings = settings
        self.boxes: dict[str, QComboBox] = {}
        form = QFormLayout()
        for name, choices in CHOICES.items():
            box = QComboBox()
            for value, meaning in choices.items():
                box.addItem(meaning[:1].upper() + meaning[1:], value)
            box.setCurrentIndex(max(0, box.findData(getattr(settings, name))))
            self.boxes[name] = box
            form.addRow(f"{LABELS[name]}:", box)
        note = QLabel("What is left out is listed by the Book Audit. A change renders only the passages it touches.")
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(buttons)

    def chosen_settings(self) -> ProjectSettings:
        return self.settings.with_changes(**{name: box.currentData() for name, box in self.boxes.items()})

    def _save(self) -> None:
        chosen = self.chosen_settings()
        if chosen != self.settings:
            self.applied.emit(chosen)
        self.accept()


def open_content_dialog(window) -> ContentDialog | None:  # window: studio.ui.main_window.MainWindow
    """The menu's hook: the dialog for the open project, saved through the session (undoable)."""
    s = window.session
    if s.settings is None:
        return None
    dlg = ContentDialog(s.settings, window)
    dlg.applied.connect(s.update_settings)
    window.content_dialog = dlg
    dlg.open()
    return dlg
