"""The sentence inspector's spoken form: what the voice will say, the changes from the
print highlighted, and the producer's override for this one sentence.

Why shown and overridable here: the normaliser decides how "1914-18", "St." or "Henry
VIII" is read, and a producer must be able to hear-check and correct one sentence's
reading without editing the manuscript (the printed text, the chapter files' subtitles
and the search stay as printed).
"""

from __future__ import annotations

import difflib
import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget


def highlighted(printed: str, spoken: str) -> str:
    """``spoken`` as rich text with the words that differ from ``printed`` marked."""
    a, b = printed.split(), spoken.split()
    out: list[str] = []
    for op, _i1, _i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        words = html.escape(" ".join(b[j1:j2]))
        if not words:
            continue
        out.append(words if op == "equal" else f"<span style='background:#fff2a8;font-weight:600'>{words}</span>")
    return " ".join(out)


class SpokenPanel(QWidget):
    """Spoken form of the selected sentence, with an override field."""

    spokenChosen = Signal(int, object)  # sentence id, the words to say or None for the automatic form

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._id: int | None = None
        self._text = ""
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setToolTip("What the voice will say: numbers, dates, abbreviations and the like written out "
                              "(changes from the printed text are highlighted)")
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("Say this sentence as\u2026")
        self.edit.setToolTip("Override how this one sentence is spoken; the manuscript text stays as it is")
        self.edit.textEdited.connect(self._dirty)
        self.edit.returnPressed.connect(self._apply)
        self.apply_btn = QPushButton("Say it so")
        self.apply_btn.setToolTip("Store this spoken form for the sentence; only it is rendered again")
        self.apply_btn.clicked.connect(self._apply)
        self.reset_btn = QPushButton("Automatic")
        self.reset_btn.setToolTip("Drop the override: the normaliser's spoken form applies again")
        self.reset_btn.clicked.connect(lambda: self._id is not None and self.spokenChosen.emit(self._id, None))
        row = QHBoxLayout()
        row.addWidget(self.edit, 1)
        row.addWidget(self.apply_btn)
        row.addWidget(self.reset_btn)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addLayout(row)
        self.show_sentence(None, "", "")

    def show_sentence(self, sentence_id: int | None, text: str, spoken: str) -> None:
        """Show one sentence (``sentence_id`` None: nothing selected, the panel hides)."""
        self._id, self._text = sentence_id, text
        self.setVisible(sentence_id is not None)
        said = spoken or text
        if said == text:
            self.label.setText("<b>Spoken:</b> as printed")
        else:
            self.label.setText(f"<b>Spoken:</b> {highlighted(text, said)}")
        self.edit.setText(said)
        self.apply_btn.setEnabled(False)

    def _dirty(self) -> None:
        self.apply_btn.setEnabled(self._id is not None and bool(self.edit.text().strip()))

    def _apply(self) -> None:
        words = " ".join(self.edit.text().split())
        if self._id is not None and words:
            self.spokenChosen.emit(self._id, words)
            self.apply_btn.setEnabled(False)
