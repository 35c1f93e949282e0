"""Book progress: rendered, remaining (and proofed, once proof-listening exists) per
chapter and for the book, with the rendering time left.

Why a plain table refreshed on a short timer: render deltas arrive several times a
second; the figures come from the tree's cached counts
(:func:`studio.desktop.progress.book_progress`), and redrawing at most twice a second
keeps a 9,000-sentence book's tree responsive while the numbers stay current.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QHeaderView, QLabel, QProgressBar, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from studio.desktop.progress import BookProgress, ChapterProgress
from studio.ui.common import fmt_eta

COLUMNS = ("Chapter", "Rendered", "Remaining", "Proofed", "Time left")
PROOFED = COLUMNS.index("Proofed")
REFRESH_MS = 500


class BookProgressPanel(QWidget):
    """Shows the latest :class:`BookProgress`; ``schedule()`` asks for a refresh soon."""

    def __init__(self, source, parent: QWidget | None = None) -> None:  # noqa: ANN001 - () -> BookProgress | None
        super().__init__(parent)
        self.source = source
        self.progress: BookProgress | None = None
        self.summary = QLabel("No book open.")
        self.summary.setWordWrap(True)  # "...; rendering time left ..." was cut at a laptop's column width
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)  # the figures' own width: Time left in sight
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.bar)
        layout.addWidget(self.table, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)

    def schedule(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def refresh(self) -> None:
        self.show_progress(self.source())

    def show_progress(self, progress: BookProgress | None) -> None:
        self.progress = progress
        if progress is None:
            self.summary.setText("No book open.")
            self.bar.setValue(0)
            self.table.setRowCount(0)
            return
        left = fmt_eta(progress.time_left) if progress.remaining else "nothing"
        proofed = f", {progress.proofed} proofed" if progress.proofed is not None else ""
        failed = f", {progress.failed} failed" if progress.failed else ""
        self.summary.setText(f"The book: {progress.rendered} of {progress.sentences} sentences rendered{proofed}"
                             f"{failed}, {progress.remaining} remaining; rendering time left: {left}")
        self.bar.setValue(int(1000 * progress.fraction))
        self.bar.setFormat(f"{100 * progress.fraction:.0f} % rendered")
        self.table.setColumnHidden(PROOFED, progress.proofed is None)
        rows = list(progress.chapters)
        self.table.setRowCount(len(rows) + 1)
        for r, c in enumerate(rows):
            self._row(r, c.label, c, not c.included)
        total = ChapterProgress(-1, "Book (included chapters)", True, progress.sentences, progress.rendered,
                                progress.failed, progress.proofed, progress.time_left)
        self._row(len(rows), total.label, total, False, bold=True)

    def _row(self, r: int, label: str, c: ChapterProgress, dim: bool, bold: bool = False) -> None:
        time_left = "" if not c.remaining else fmt_eta(c.time_left)
        values = (label, f"{c.rendered}/{c.sentences}" + (f" ({c.failed} failed)" if c.failed else ""),
                  str(c.remaining), "" if c.proofed is None else str(c.proofed), time_left)
        for col, text in enumerate(values):
            item = QTableWidgetItem(text)
            if col:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if dim:
                item.setForeground(QBrush(QColor("#888888")))
            if bold:
                font = QFont(item.font())
                font.setBold(True)
                item.setFont(font)
            self.table.setItem(r, col, item)
