"""The Cast dock's review list: the lines whose speaker is not sure, and one click to choose.

Why in the dock and in reading order: the producer checks a book's doubtful lines one after
the other, the way they are heard, and each line shows its two most likely speakers as
buttons -- one click gives the line to that speaker (kept through a re-import, one step of
Edit > Undo, and only that line is rendered again).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPushButton,
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
    """The lines to check, each with a button per candidate speaker; says the choice through ``chosen``."""

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

    def set_lines(self, lines: tuple[QuotedLine, ...]) -> None:
        self.lines = lines
        self.summary.setText(f"{len(lines)} line(s) to review: their speaker is not sure. "
                             "Click who says each." if lines else "No lines to review.")
        self.table.setRowCount(len(lines))
        for row, line in enumerate(lines):
            self.table.setItem(row, 0, QTableWidgetItem(line.text))
            for col in (1, 2):
                name = line.candidates[col - 1] if len(line.candidates) >= col else ""
                self.table.removeCellWidget(row, col)
                if name:
                    self.table.setCellWidget(row, col, self._button(line, name))
                else:
                    self.table.setItem(row, col, QTableWidgetItem(""))
            self.table.setItem(row, 3, QTableWidgetItem(EVIDENCE_WORDS.get(line.evidence, line.evidence)))

    def button(self, row: int, col: int) -> QPushButton | None:
        widget = self.table.cellWidget(row, col)
        return widget if isinstance(widget, QPushButton) else None

    def _button(self, line: QuotedLine, name: str) -> QPushButton:
        button = QPushButton(name)
        button.setToolTip(f"{name} says \u201c{line.text[:60]}\u201d" + (" (the rules' choice)" if name == line.speaker
                                                                          else ""))
        button.clicked.connect(lambda: self.chosen.emit(line.sentence_id, name))
        return button
