"""An import's steps, seen from the GUI thread, and its Cancel.

Why a small QObject: the import runs on the session's project I/O thread inside
:func:`studio.text.importer.load_manuscript`, which calls a plain
``progress(stage, done, total)`` between its steps. This object is that callable:
it raises :class:`~studio.core.errors.Cancelled` once the producer pressed Cancel
(the import stops before anything is written) and otherwise re-emits the step as
a frozen value on the GUI thread.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from studio.core.errors import Cancelled


@dataclass(frozen=True)
class ImportStep:
    stage: str
    done: int
    total: int

    def text(self) -> str:
        return f"{self.stage} (chapter {self.done + 1} of {self.total})" if self.total > 1 else self.stage


class ImportWatch(QObject):
    stepped = Signal(object)  # ImportStep

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cancel = threading.Event()
        self.steps = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self._cancel.is_set():
            raise Cancelled("the import was cancelled; nothing was saved")
        self.steps += 1
        self.stepped.emit(ImportStep(stage, done, total))

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()
