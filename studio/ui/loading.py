"""The one-time build of a preset, shown from its first second: "Preparing the fast model".

Why a dialog and not only the status bar: loading a voice is normally a second,
but the first use of an optimised preset on a machine builds it once (INT8
calibration, a TensorRT engine: a minute or more on a slow CPU) and a status-bar
line is easy to miss. The engine says *before* loading whether it will build
(:meth:`~studio.engine.base.Engine.pending_build`, reported by the model worker as
an :class:`~studio.desktop.messages.EngineStatus` with ``build`` set), so the dialog
appears when the build starts and only then -- never for an ordinary load. It never
blocks the window (the work runs in the model worker) and closes by itself when the
voice is ready or has failed.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QProgressDialog, QWidget

from studio.desktop.messages import EngineStatus

NOTE = ("This happens once on this computer: the result is kept on disk, so later starts are quick. "
        "The window stays usable meanwhile.")


class LoadingNotice(QObject):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.dialog = QProgressDialog(parent)
        self.dialog.setWindowTitle("Preparing the fast model")
        self.dialog.setRange(0, 0)  # busy: quantizers and engine builders report no steps
        self.dialog.setCancelButton(None)
        self.dialog.setWindowModality(Qt.WindowModality.NonModal)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.reset()
        self.dialog.hide()
        self.text = ""
        #: the builds announced so far (what was built), for the log pane and tests
        self.announced: list[str] = []

    def on_status(self, status: EngineStatus) -> None:
        if status.busy and status.build:
            self.text = f"Preparing {status.build} \u2014 {status.build_about}, only once."
            self.dialog.setLabelText(f"{self.text}\n\n{status.text}\n\n{NOTE}")
            self.announced.append(status.build)
            self.dialog.show()
        elif not status.busy:
            self.dialog.hide()
