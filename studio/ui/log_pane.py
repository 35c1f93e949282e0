"""The log pane: every log record of the session, errors highlighted.

Why in the window: an error that only reaches a file is an error the user never
sees. Records arrive from any thread through :class:`~studio.desktop.logsetup.QtLogHandler`.
"""

from __future__ import annotations

import html
import logging

from PySide6.QtWidgets import QPlainTextEdit, QWidget

from studio.desktop.logsetup import QtLogHandler

MAX_LINES = 3000


class LogPane(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None, level: int = logging.INFO) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(MAX_LINES)
        self.setPlaceholderText("Messages from the studio appear here.")
        self.handler = QtLogHandler(level)
        self.handler.relay.record.connect(self.add_line)
        logging.getLogger().addHandler(self.handler)
        if logging.getLogger().level > level or logging.getLogger().level == logging.NOTSET:
            logging.getLogger().setLevel(level)

    def add_line(self, text: str, levelno: int) -> None:
        color = "#c62828" if levelno >= logging.ERROR else "#b26a00" if levelno >= logging.WARNING else None
        line = html.escape(text).replace("\n", "<br>").replace("  ", "&nbsp; ")
        self.appendHtml(f'<span style="color:{color}">{line}</span>' if color else line)

    def detach(self) -> None:
        logging.getLogger().removeHandler(self.handler)
