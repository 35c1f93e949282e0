"""Direction for the selected sentences (one, or a paragraph's): a rate, a pause before,
a pause after.

Why a small dialog from the tree's menu: direction is given while listening through
a chapter, to a sentence or a paragraph picked in the tree; the waveform's bar sets
the pause after the sentence in focus too. A rate renders the directed sentences
again (their keys change, no other sentence's does); pauses render nothing.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QVBoxLayout, QWidget,
)

from studio.project.direction import RATE_RANGE
from studio.project.pauses import MAX_PAUSE_S
from studio.qt.snapshot import SentenceNode

#: the pause-after box shows this below zero: the project's sentence/paragraph pause
PROJECT_PAUSE = "project's pause"


class DirectionDialog(QDialog):
    #: sentence ids, rate (1.0: the project's), pause before (0: none), pause after (None: the project's), render now
    directed = Signal(object, float, float, object, bool)

    def __init__(self, nodes: list[SentenceNode], parent: QWidget | None = None) -> None:
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
        self.render_now = QCheckBox("Render the directed sentences again now (only if the rate changed)")
        self.render_now.setChecked(True)
        form = QFormLayout()
        form.addRow("Rate:", self.rate)
        form.addRow("Pause before:", self.before)
        form.addRow("Pause after:", self.after)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        what = "this sentence" if len(nodes) == 1 else f"these {len(nodes)} sentences"
        layout.addWidget(QLabel(f"Direction for {what}: \u201c{first.text[:60]}\u201d"))
        layout.addLayout(form)
        layout.addWidget(self.render_now)
        layout.addWidget(buttons)

    def _ok(self) -> None:
        after = None if self.after.value() < 0 else round(self.after.value(), 2)
        self.directed.emit(self.ids, round(self.rate.value(), 3), round(self.before.value(), 2), after,
                           self.render_now.isChecked())
        self.accept()
