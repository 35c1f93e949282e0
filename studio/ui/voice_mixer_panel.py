"""The Voices window's mixer tab: two or more voices that can be blended, each with a weight;
Listen plays the blend speaking a sentence, Save as... keeps it as a named voice.

Why heard first: a blend is a guess until it is heard; nothing is written to the voices
folder until the producer has listened and names it. The work (mixing, synthesis,
saving) runs on the library's task thread; this tab only shows and asks.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox, QDoubleSpinBox, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget,
)

from studio.desktop.facts import VoiceChoice
from studio.desktop.voice_library import BlendSample, VoiceLibrary

#: what a new mixer starts with: two parts
FIRST_PARTS = 2


class VoiceMixerPanel(QWidget):
    def __init__(self, library: VoiceLibrary, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.voices: tuple[VoiceChoice, ...] = ()
        self.parts: list[tuple[QComboBox, QDoubleSpinBox]] = []
        self.grid = QGridLayout()
        self.grid.addWidget(QLabel("Voice"), 0, 0)
        self.grid.addWidget(QLabel("Weight"), 0, 1)
        self.add_btn = QPushButton("Add a voice")
        self.add_btn.clicked.connect(self.add_part)
        self.name = QLineEdit()
        self.name.setPlaceholderText("Name of the new voice (letters, digits, _ and -)")
        self.listen_btn = QPushButton("\u25b6 Listen")
        self.listen_btn.setToolTip("Hear the blend speak a sentence (nothing is saved)")
        self.listen_btn.clicked.connect(self.listen)
        self.save_btn = QPushButton("Save as\u2026")
        self.save_btn.setToolTip("Keep the blend as a voice of its own, listed with the others")
        self.save_btn.clicked.connect(self.save)
        self.status = QLabel("Pick two or more voices and their weights, then Listen.")
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        for w in (self.add_btn, self.listen_btn, self.name, self.save_btn):
            row.addWidget(w)
        layout = QVBoxLayout(self)
        layout.addLayout(self.grid)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addStretch(1)
        for _ in range(FIRST_PARTS):
            self.add_part()
        library.blendHeard.connect(self._heard)
        library.installed.connect(lambda c: c.mixable and self.status.setText(f"{c.id} is saved: choose it on the "
                                                                               "Voices tab"))
        library.mixFailed.connect(lambda err: self.status.setText(f"\u26a0 {err.message}"))  # a download's: its own tab

    def set_voices(self, voices: tuple[VoiceChoice, ...]) -> None:
        """The voices whose abilities say they can be mixed fill each part's list (choices kept)."""
        self.voices = tuple(v for v in voices if v.mixable)
        for i, (combo, _) in enumerate(self.parts):
            chosen = combo.currentData()
            combo.clear()
            for v in self.voices:
                combo.addItem(f"{v.name} \u2014 {v.id}", v.id)
            at = combo.findData(chosen)
            combo.setCurrentIndex(at if at >= 0 else min(i, combo.count() - 1))
        ok = len(self.voices) >= 2
        for b in (self.listen_btn, self.save_btn):
            b.setEnabled(ok)
        if not ok:
            self.status.setText("The mixer needs two voices that can be blended (Kokoro packs: Get voices).")

    def add_part(self) -> None:
        combo, weight = QComboBox(), QDoubleSpinBox()
        weight.setRange(0.05, 10.0)
        weight.setSingleStep(0.1)
        weight.setValue(1.0)
        row = len(self.parts) + 1
        self.grid.addWidget(combo, row, 0)
        self.grid.addWidget(weight, row, 1)
        self.parts.append((combo, weight))
        self.set_voices(self.voices)

    def recipe(self) -> str:
        """``VOICE=WEIGHT,...`` as the mixer reads it (a voice picked twice: its weights add up)."""
        weights: dict[str, float] = {}
        for combo, weight in self.parts:
            if combo.currentData():
                weights[combo.currentData()] = weights.get(combo.currentData(), 0.0) + weight.value()
        return ",".join(f"{vid}={w:g}" for vid, w in weights.items())

    def listen(self) -> None:
        self.status.setText(f"Mixing {self.recipe()}\u2026")
        self.library.listen(self.recipe())

    def save(self) -> None:
        name = self.name.text().strip()
        if not name:
            self.status.setText("Type a name for the new voice, then Save as\u2026")
            return
        self.status.setText(f"Saving the blend as {name}\u2026")
        self.library.save_blend(name, self.recipe())

    def _heard(self, heard: BlendSample) -> None:
        played = "playing" if not heard.played else f"not played ({heard.played})"
        self.status.setText(f"{heard.recipe}: {heard.seconds:.1f} s, {played}; the sample is {heard.path}. "
                            "Save as\u2026 to keep it.")
