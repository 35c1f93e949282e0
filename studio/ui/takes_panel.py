"""The takes of the selected sentence: listen, compare A/B, choose, take again.

Why a panel of its own: comparing takes is the producer's main review gesture;
it needs the list (date, preset, voice, length, which one is used), two plays
side by side and one click to keep the better one. The panel only sends
requests; the session reads and changes the project in the background.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.desktop.preset_words import plain_name
from studio.desktop.takes import TakeList
from studio.ui.common import fmt_bytes

COLUMNS = ("Used", "Take", "Made", "Preset", "Voice", "Length")


def fmt_size(n: int) -> str:
    return f"{n / 1024:.0f} KiB" if n < 1 << 20 else fmt_bytes(n)


class TakesPanel(QWidget):
    playTakes = Signal(int, object)  # sentence id, list of take ids (one, or A then B)
    chooseTake = Signal(int, int)  # sentence id, take id
    newTake = Signal(int)  # sentence id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.takes: TakeList | None = None
        self.sentence_id: int | None = None
        self.title = QLabel("Select a sentence to see its takes.")
        self.title.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.itemDoubleClicked.connect(lambda _item: self._play())
        self.play_btn = QPushButton("Play")
        self.play_btn.setToolTip("Play the selected take (double-click a row does the same)")
        self.play_btn.clicked.connect(self._play)
        self.ab_btn = QPushButton("Compare A/B")
        self.ab_btn.setToolTip("Select two takes: A is played, a short pause, then B")
        self.ab_btn.clicked.connect(self._compare)
        self.use_btn = QPushButton("Use this take")
        self.use_btn.setToolTip("Export and playback use the chosen take; the choice is kept in the project")
        self.use_btn.clicked.connect(self._choose)
        self.new_btn = QPushButton("New take")
        self.new_btn.setToolTip("Synthesize the sentence again; the earlier takes are kept")
        self.new_btn.clicked.connect(lambda: self.sentence_id is not None and self.newTake.emit(self.sentence_id))
        self.space = QLabel("")
        self.space.setStyleSheet("color: #616161;")
        buttons = QHBoxLayout()
        for b in (self.play_btn, self.ab_btn, self.use_btn, self.new_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.space)
        self._update_buttons()

    def show_sentence(self, sentence_id: int | None, text: str = "") -> None:
        """The selection moved: forget the old list until the new one is read."""
        if sentence_id != self.sentence_id:
            self.sentence_id = sentence_id
            self.takes = None
            self.table.setRowCount(0)
            self.space.setText("")
        self.title.setText(f"Takes of \u201c{text[:80]}\u201d" if sentence_id is not None
                           else "Select a sentence to see its takes.")
        self._update_buttons()

    def set_takes(self, takes: TakeList) -> None:
        if takes.sentence_id != self.sentence_id:
            return
        selected = set(self.selected_ids())
        self.takes = takes
        self.table.setRowCount(len(takes.takes))
        for row, t in enumerate(takes.takes):
            preset = t.engine.partition("/")[2]
            cells = ("\u2605" if t.chosen else "", str(takes.number(t.id)), t.created_at, plain_name(preset), t.voice_id,
                     f"{t.duration:.2f} s")
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, t.id)
                if t.chosen:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                if col == 3:
                    item.setToolTip(f"{t.engine} ({preset or 'default preset'})")
                self.table.setItem(row, col, item)
            if t.id in selected:  # keep an A/B pair selected across a reload
                self.table.selectionModel().select(
                    self.table.model().index(row, 0),
                    QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
        self.space.setText(
            f"{len(takes.takes)} take(s) kept (up to {takes.limit}), {fmt_size(takes.bytes)}; "
            f"all takes in the project: {fmt_size(takes.project_bytes)}")
        self._update_buttons()

    def label_for(self, take_ids: list[int]) -> str:
        """"take 1 then take 2": the takes as this panel numbers them."""
        return " then ".join(f"take {self.takes.number(t) if self.takes else '?'}" for t in take_ids)

    def selected_ids(self) -> list[int]:
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        return [int(self.table.item(r, 0).data(Qt.ItemDataRole.UserRole)) for r in rows if self.table.item(r, 0)]

    def _play(self) -> None:
        ids = self.selected_ids()
        if ids and self.sentence_id is not None:
            self.playTakes.emit(self.sentence_id, ids[:1])

    def _compare(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 2 and self.sentence_id is not None:
            self.playTakes.emit(self.sentence_id, ids)

    def _choose(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1 and self.sentence_id is not None:
            self.chooseTake.emit(self.sentence_id, ids[0])

    def _update_buttons(self) -> None:
        ids = self.selected_ids()
        chosen = self.takes.chosen.id if self.takes is not None and self.takes.chosen else None
        self.play_btn.setEnabled(len(ids) >= 1)
        self.ab_btn.setEnabled(len(ids) == 2)
        self.use_btn.setEnabled(len(ids) == 1 and ids[0] != chosen)
        self.new_btn.setEnabled(self.sentence_id is not None)
