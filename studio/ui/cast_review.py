"""The Cast dock's review list: the lines whose speaker is not sure, and one click to choose.

Why in the dock and in reading order: the producer checks a book's doubtful lines one after
the other, the way they are heard, and each line shows its two most likely speakers -- one
click on a speaker's cell gives the line to that speaker (kept through a re-import, one step
of Edit > Undo, and only that line is rendered again). Cells, not button widgets: a novel
can have a thousand such lines, and the list is rebuilt after every change.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.project.cast import QuotedLine

COLUMNS = ("Line", "Speaker", "Or", "Evidence")
#: the producer's words for each kind of evidence
EVIDENCE_WORDS = {"tag": "a speech verb", "turn": "turns in a dialogue", "vocative": "a name addressed",
                  "guess": "a guess", "none": "no rule named anyone", "continued": "a speech going on"}


class ReviewList(QWidget):
    """The lines to check, each with a clickable cell per candidate speaker; says the choice through ``chosen``."""

    chosen = Signal(int, str)  # sentence id, the speaker chosen

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lines: tuple[QuotedLine, ...] = ()
        self.summary = QLabel("No lines to review.")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self.table.cellClicked.connect(self._clicked)

    def set_lines(self, lines: tuple[QuotedLine, ...]) -> None:
        self.lines = lines
        self.summary.setText(f"{len(lines)} line(s) to review: their speaker is not sure. "
                             "Click who says each." if lines else "No lines to review.")
        self.table.setRowCount(len(lines))
        underlined = QFont()
        underlined.setUnderline(True)
        for row, line in enumerate(lines):
            self.table.setItem(row, 0, QTableWidgetItem(line.text))
            for col in (1, 2):
                name = line.candidates[col - 1] if len(line.candidates) >= col else ""
                item = QTableWidgetItem(name)
                if name:
                    item.setFont(underlined)
                    item.setToolTip(f"Click: {name} says it" + (" (the rules' choice)" if name == line.speaker else ""))
                    item.setData(Qt.ItemDataRole.UserRole, name)
                self.table.setItem(row, col, item)
            self.table.setItem(row, 3, QTableWidgetItem(EVIDENCE_WORDS.get(line.evidence, line.evidence)))

    def _clicked(self, row: int, col: int) -> None:
        item = self.table.item(row, col)
        name = item.data(Qt.ItemDataRole.UserRole) if item is not None and col in (1, 2) else None
        if name and 0 <= row < len(self.lines):
            self.chosen.emit(self.lines[row].sentence_id, str(name))
