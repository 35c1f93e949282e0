"""New voice from a recording: the recording, the new voice's name, the model that takes it,
and the recorded person's consent (kept with the voice, said in the credits and manifest)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QLabel, QLineEdit, QPushButton, QWidget,
)

from studio.ui.common import browse_row


class CloneDialog(QDialog):
    """Asks what :meth:`studio.desktop.voice_library.VoiceLibrary.clone` needs; OK only when all is given.
    With no model that can clone, it offers to add one (``addModelRequested``: the library's download)."""

    addModelRequested = Signal()

    def __init__(self, models: list[str], parent: QWidget | None = None, offer: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("New voice from a recording")
        self.recording = QLineEdit()
        self.recording.setPlaceholderText("6 to 30 seconds of one person speaking, no music")
        row = browse_row(self.recording, self._browse)
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. ann-narrator")
        self.model = QComboBox()
        self.model.addItems(models)
        self.consent = QLineEdit()
        self.consent.setPlaceholderText("e.g. Ann Lee agrees to this use of her voice, 2026-12-05")
        note = QLabel("The clip is checked first (too short, clipped, mostly silence, too quiet or hours long is "
                      "refused with the reason). The consent statement is kept with the voice and said in the "
                      "book's credits and manifest." if models else
                      f"No installed model can take a voice from a recording. Add one ({offer}): its licence is "
                      "shown first, and a non-commercial one asks you to agree; then come back here." if offer else
                      "No installed model can take a voice from a recording, and none can be added here.")
        note.setWordWrap(True)
        self.add_model = QPushButton(f"Add {offer.rsplit('/', 1)[-1]}\u2026")  # "Add xtts_v2..."
        self.add_model.setVisible(not models and bool(offer))
        self.add_model.clicked.connect(lambda: (self.addModelRequested.emit(), self.reject()))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Recording", row)
        form.addRow("New voice", self.name)
        form.addRow("Model", self.model)
        form.addRow("Consent", self.consent)
        form.addRow(note)
        form.addRow(self.add_model)
        form.addRow(self.buttons)
        for edit in (self.recording, self.name, self.consent):
            edit.textChanged.connect(self._ok)
        self._ok()

    def values(self) -> tuple[str, str, str, str]:
        """``(model, name, recording, consent)``."""
        return (self.model.currentText(), self.name.text().strip(), self.recording.text().strip(),
                self.consent.text().strip())

    def _ok(self) -> None:
        model, name, recording, consent = self.values()
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(all((model, name, recording, consent)))

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Recording", "", "Audio (*.wav *.flac *.mp3 *.m4a *.ogg)")
        if path:
            self.recording.setText(path)
