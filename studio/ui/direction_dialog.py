"""Direction for the selected sentences (one, or a paragraph's): a rate, a pause before,
a pause after, and the words to stress.

Why a small dialog from the tree's menu: direction is given while listening through
a chapter, to a sentence or a paragraph picked in the tree; the waveform's bar sets
the pause after the sentence in focus too. A rate renders the directed sentences
again (their keys change, no other sentence's does); pauses render nothing. Stressed
words are picked in a list of the sentences' words (checked: stressed), which says
whether the project's engine says them (``stress_note``: :func:`studio.desktop.preset_words.emphasis_note`).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QListView, QListWidget,
    QListWidgetItem, QPushButton, QVBoxLayout, QWidget,
)

from studio.project.direction import RATE_RANGE
from studio.project.pauses import MAX_PAUSE_S
from studio.desktop.snapshot import SentenceNode

#: the pause-after box shows this below zero: the project's sentence/paragraph pause
PROJECT_PAUSE = "project's pause"


def stressed_html(text: str, words: tuple[int, ...]) -> str:
    """The sentence with its stressed words bold and underlined (the tree's tooltip)."""
    return " ".join(f"<b><u>{html.escape(w)}</u></b>" if k in words else html.escape(w)
                    for k, w in enumerate(text.split()))


class DirectionDialog(QDialog):
    #: sentence ids, rate (1.0: the project's), pause before (0: none), pause after (None: the project's),
    #: render now, stressed words (sentence id -> word indices; every id present, empty: none)
    directed = Signal(object, float, float, object, bool, object)

    def __init__(self, nodes: list[SentenceNode], parent: QWidget | None = None, stress_note: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Direction")
        self.ids = [n.id for n in nodes]
        first = nodes[0]
        self.rate = QDoubleSpinBox()
        self.rate.setRange(*RATE_RANGE)
        self.rate.setSingleStep(0.05)
        self.rate.setSuffix("x")
        self.rate.setValue(first.direction.rate or 1.0)
        self.rate.setToolTip("Relative to the project's speed (1.00x: the project's); these sentences render again")
        self.before = QDoubleSpinBox()
        self.before.setRange(0.0, MAX_PAUSE_S)
        self.before.setSingleStep(0.1)
        self.before.setSuffix(" s")
        self.before.setValue(first.direction.pause_before or 0.0)
        self.after = QDoubleSpinBox()
        self.after.setRange(-0.05, MAX_PAUSE_S)
        self.after.setSingleStep(0.1)
        self.after.setSuffix(" s")
        self.after.setSpecialValueText(PROJECT_PAUSE)
        self.after.setValue(first.pause_after if first.pause_after is not None else -0.05)
        self.words = QListWidget()  # every word of the sentences, checked: stressed
        self.words.setFlow(QListView.Flow.LeftToRight)
        self.words.setWrapping(True)
        self.words.setResizeMode(QListView.ResizeMode.Adjust)
        self.words.setSpacing(2)
        self.words.setMinimumHeight(90)
        for n, node in enumerate(nodes):
            if n:  # where one sentence ends and the next begins
                bar = QListWidgetItem("\u2016")
                bar.setFlags(Qt.ItemFlag.NoItemFlags)
                self.words.addItem(bar)
            for k, word in enumerate(node.text.split()):
                item = QListWidgetItem(word)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if k in node.direction.emphasis else Qt.CheckState.Unchecked)
                item.setData(Qt.ItemDataRole.UserRole, (node.id, k))
                self.words.addItem(item)
        self._pressed: tuple[QListWidgetItem, Qt.CheckState] | None = None
        self.words.itemPressed.connect(lambda item: setattr(self, "_pressed", (item, item.checkState())))
        self.words.itemClicked.connect(self._toggle)
        self.clear_stress = QPushButton("Clear emphasis")
        self.clear_stress.clicked.connect(self._clear)
        self.stress_note = QLabel(stress_note or "Checked words are said longer and louder.")
        self.stress_note.setWordWrap(True)
        self.render_now = QCheckBox("Render the directed sentences again now (if the rate or the emphasis changed)")
        self.render_now.setChecked(True)
        form = QFormLayout()
        form.addRow("Rate:", self.rate)
        form.addRow("Pause before:", self.before)
        form.addRow("Pause after:", self.after)
        form.addRow("Stress:", self.words)
        form.addRow("", self.clear_stress)
        form.addRow("", self.stress_note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        what = "this sentence" if len(nodes) == 1 else f"these {len(nodes)} sentences"
        layout.addWidget(QLabel(f"Direction for {what}: \u201c{first.text[:60]}\u201d"))
        layout.addLayout(form)
        layout.addWidget(self.render_now)
        layout.addWidget(buttons)

    def stressed(self) -> dict[int, tuple[int, ...]]:
        """The checked words, per sentence (every sentence of the dialog, maybe with none)."""
        out: dict[int, list[int]] = {i: [] for i in self.ids}
        for row in range(self.words.count()):
            item = self.words.item(row)
            if item.data(Qt.ItemDataRole.UserRole) is not None and item.checkState() == Qt.CheckState.Checked:
                sid, k = item.data(Qt.ItemDataRole.UserRole)
                out[sid].append(k)
        return {i: tuple(w) for i, w in out.items()}

    def _toggle(self, item: QListWidgetItem) -> None:
        """A click anywhere on a word checks or unchecks it (not only on its small box, which
        toggles it itself: then the state already changed between press and click)."""
        pressed, self._pressed = self._pressed, None
        if item.data(Qt.ItemDataRole.UserRole) is None or pressed is None or pressed[0] is not item or pressed[1] != item.checkState():
            return
        checked = item.checkState() == Qt.CheckState.Checked
        item.setCheckState(Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked)

    def _clear(self) -> None:
        for row in range(self.words.count()):
            if self.words.item(row).data(Qt.ItemDataRole.UserRole) is not None:
                self.words.item(row).setCheckState(Qt.CheckState.Unchecked)

    def _ok(self) -> None:
        after = None if self.after.value() < 0 else round(self.after.value(), 2)
        self.directed.emit(self.ids, round(self.rate.value(), 3), round(self.before.value(), 2), after,
                           self.render_now.isChecked(), self.stressed())
        self.accept()
