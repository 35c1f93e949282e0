"""Book progress: rendered, remaining (and proofed, once proof-listening exists) per
chapter and for the book, with the rendering time left.

Why a table model refreshed on a short timer: render deltas arrive several times a
second; the figures come from the tree's cached counts
(:func:`studio.desktop.progress.book_progress`), redrawn at most twice a second, and only
the rows whose figures changed are repainted. (It was a QTableWidget filled item by item,
each column sized to its contents: a 100-chapter book cost 2.4 s of the GUI thread per
refresh, and a refresh followed every batch; docs/speed-notes.md.)
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QProgressBar, QTableView, QVBoxLayout, QWidget

from studio.desktop.progress import BookProgress, ChapterProgress
from studio.ui.common import fmt_eta

COLUMNS = ("Chapter", "Rendered", "Remaining", "Proofed", "Time left")
PROOFED = COLUMNS.index("Proofed")
REFRESH_MS = 500
#: the widest figures each column shows, for its width (measured once, not per row and refresh)
WIDEST = ("", "9999/9999 (99 failed)", "99999", "99999", "99 h 59 min")
_DIM = QBrush(QColor("#888888"))


def cells(c: ChapterProgress) -> tuple[str, ...]:
    """One row's words: ``("2. Two", "5/7 (1 failed)", "2", "", "1 min 05 s")``."""
    time_left = "" if not c.remaining else fmt_eta(c.time_left)
    return (c.label, f"{c.rendered}/{c.sentences}" + (f" ({c.failed} failed)" if c.failed else ""),
            str(c.remaining), "" if c.proofed is None else str(c.proofed), time_left)


class ProgressModel(QAbstractTableModel):
    """The chapters' rows and the book's total as the last row; a new figure repaints its row only."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[tuple[str, ...], bool, bool]] = []  # (cells, dim, bold)
        self._bold = QFont()
        self._bold.setBold(True)

    def set_rows(self, rows: list[tuple[tuple[str, ...], bool, bool]]) -> None:
        if len(rows) != len(self.rows):
            self.beginResetModel()
            self.rows = rows
            self.endResetModel()
            return
        old, self.rows = self.rows, rows
        changed = [r for r, (a, b) in enumerate(zip(old, rows)) if a != b]
        if changed:
            self.dataChanged.emit(self.index(changed[0], 0), self.index(changed[-1], len(COLUMNS) - 1))

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        texts, dim, bold = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return texts[index.column()]
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column():
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and dim:
            return _DIM
        if role == Qt.ItemDataRole.FontRole and bold:
            return self._bold
        return None


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
        self.model = ProgressModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        metrics = self.table.fontMetrics()
        for col, widest in enumerate(WIDEST):  # the figures' own width: Time left in sight
            if col:
                header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
                header.resizeSection(col, max(metrics.horizontalAdvance(widest), metrics.horizontalAdvance(
                    COLUMNS[col])) + 16)
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

    def cell(self, row: int, column: int) -> str:
        """The words shown in one cell (tests and screenshots read the table through it)."""
        return str(self.model.index(row, column).data() or "")

    def show_progress(self, progress: BookProgress | None) -> None:
        self.progress = progress
        if progress is None:
            self.summary.setText("No book open.")
            self.bar.setValue(0)
            self.model.set_rows([])
            return
        left = fmt_eta(progress.time_left) if progress.remaining else "nothing"
        proofed = f", {progress.proofed} proofed" if progress.proofed is not None else ""
        failed = f", {progress.failed} failed" if progress.failed else ""
        self.summary.setText(f"The book: {progress.rendered} of {progress.sentences} sentences rendered{proofed}"
                             f"{failed}, {progress.remaining} remaining; rendering time left: {left}")
        self.bar.setValue(int(1000 * progress.fraction))
        self.bar.setFormat(f"{100 * progress.fraction:.0f} % rendered")
        self.table.setColumnHidden(PROOFED, progress.proofed is None)
        total = ChapterProgress(-1, "Book (included chapters)", True, progress.sentences, progress.rendered,
                                progress.failed, progress.proofed, progress.time_left)
        self.model.set_rows([(cells(c), not c.included, False) for c in progress.chapters] + [(cells(total), False, True)])
