"""A visible word while the model loads: the first use of a preset can build it for a minute.

Why a dialog and not only the status bar: loading a voice is normally a second,
but the first use of an optimised preset on a machine builds or calibrates it
once (tens of seconds, more on a slow CPU) and a status-bar line is easy to miss.
The dialog appears only when loading takes longer than :data:`SHOW_AFTER_MS`,
never blocks the window (the work runs in the model worker) and closes by
itself when the voice is ready or has failed.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QProgressDialog, QWidget

from studio.qt.messages import EngineStatus

SHOW_AFTER_MS = 1500
NOTE = ("The first use of a preset on this machine can build or calibrate it once; "
        "this takes a while only the first time. The window stays usable.")


class LoadingNotice(QObject):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.dialog = QProgressDialog(parent)
        self.dialog.setWindowTitle("Preparing the voice")
        self.dialog.setRange(0, 0)  # busy: the build does not report steps
        self.dialog.setCancelButton(None)
        self.dialog.setWindowModality(Qt.WindowModality.NonModal)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.reset()
        self.dialog.hide()
        self.text = ""
        self._timer = QTimer(self, singleShot=True, interval=SHOW_AFTER_MS, timeout=self._show)

    def on_status(self, status: EngineStatus) -> None:
        if status.busy:
            self.text = status.text
            self.dialog.setLabelText(f"{status.text}\n\n{NOTE}")
            if not self.dialog.isVisible():
                self._timer.start()
        else:
            self._timer.stop()
            self.dialog.hide()

    def _show(self) -> None:
        self.dialog.show()
