"""Quitting with render work outstanding: finish later, or discard it.

Why a question and not a silent quit: a producer who queued chapters and paused
the queue expects them back; one who queued by mistake expects them gone. The
queue is stored in the project either way (:mod:`studio.desktop.queue_keeper`), so
"Finish later" only has to leave it there, and "Discard" empties it.

Why a window-modal box opened with ``open()`` (not ``exec()``): the close is
refused, the box asks, and the answer closes the window again; nothing blocks
the event loop, and a test finds the box (:attr:`QuitGuard.box`) and clicks a
real button.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QMainWindow, QMessageBox, QPushButton

from studio.desktop.messages import QueueSnapshot
from studio.desktop.session import ProjectSession

Answer = Literal["later", "discard"]


def describe_outstanding(snap: QueueSnapshot) -> str:
    """"2 render jobs (310 sentences left), paused" -- what the question is about."""
    active = snap.active
    left = sum(max(0, max(j.total, j.done + j.failed) - j.done - j.failed) for j in active)
    jobs = f"{len(active)} render job{'s' if len(active) != 1 else ''}"
    return f"{jobs} ({left} sentence{'s' if left != 1 else ''} left){', paused' if snap.paused else ''}"


class QuitGuard:
    """Asks once per close when the queue has work; remembers the answer until the window closes."""

    def __init__(self, window: QMainWindow, session: ProjectSession) -> None:
        self.window, self.session = window, session
        self.box: QMessageBox | None = None
        self.later_btn: QPushButton | None = None
        self.discard_btn: QPushButton | None = None
        self.answer: Answer | None = None
        self._asked_to_quit = False

    def quit(self) -> None:
        """File > Quit: close the window, asking first if work is outstanding."""
        self._asked_to_quit = True
        self.window.close()

    def intercept(self, event: QCloseEvent) -> bool:
        """True when the close must wait for the producer's answer (the event is refused).

        Only a close the producer asked for (the window's close button, File > Quit)
        asks; a close by the program (Ctrl-C in the terminal, a script) keeps the
        queue stored, as "Finish later" does.
        """
        queue = self.session.queue
        if self.answer is not None or queue is None or not (event.spontaneous() or self._asked_to_quit):
            return False
        snap = queue.snapshot()
        if not snap.active:
            return False
        event.ignore()
        if self.box is not None and self.box.isVisible():
            return True
        box = QMessageBox(QMessageBox.Icon.Question, "Render work is queued",
                          f"{describe_outstanding(snap)}, not finished.", parent=self.window)
        box.setInformativeText("Finish later keeps the queue in the project: it is back, in the same order "
                               "and paused if it was paused, when you open the book again.")
        self.later_btn = box.addButton("Finish later", QMessageBox.ButtonRole.AcceptRole)
        self.discard_btn = box.addButton("Discard queue", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(self.later_btn)
        box.buttonClicked.connect(self._answered)
        self.box = box
        box.open()
        return True

    def _answered(self, button: object) -> None:
        if button is self.later_btn:
            self.answer = "later"
        elif button is self.discard_btn:
            self.answer = "discard"
            if self.session.keeper is not None:
                self.session.keeper.discard()
        else:
            self._asked_to_quit = False
            return  # Cancel: the window stays open
        self.window.close()
