"""Details of the current item: text editor for a sentence, language for a paragraph.

Why a separate panel as well as in-place editing: long sentences are awkward to
edit in a tree cell, and the paragraph's detected language with its confidence
deserves a proper combo box. Everything goes out as a request signal.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox, QFormLayout, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget,
)

from studio.core.words import counted
from studio.desktop.snapshot import ChapterNode, ParagraphNode, SentenceNode
from studio.ui.row_words import fmt_duration
from studio.ui.common import LANGUAGE_NAMES, language_label
from studio.ui.spoken_view import SpokenPanel


class Inspector(QWidget):
    saveText = Signal(int, str)  # sentence id, text
    regenerate = Signal(object)  # list[int]
    play = Signal()
    languageChosen = Signal(int, int, object)  # chapter, paragraph, code or None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._node = None
        self.heading = QLabel("Select a chapter, paragraph or sentence.")
        self.heading.setWordWrap(True)
        self.heading.setStyleSheet("font-weight: 600;")
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.language = QComboBox()
        self.language.setToolTip("The language this paragraph is spoken in (detection can be overridden)")
        self.language.activated.connect(self._language_picked)
        self.editor = QPlainTextEdit()
        self.editor.setPlaceholderText("Sentence text")
        self.editor.setTabChangesFocus(True)
        self.editor.textChanged.connect(self._dirty)
        self.save_btn = QPushButton("Save && re-render")
        self.save_btn.setToolTip("Store the new text; only this sentence is rendered again")
        self.save_btn.clicked.connect(self._save)
        self.regen_btn = QPushButton("New take")
        self.regen_btn.setToolTip("Synthesize this sentence again (the voice varies a little each time)")
        self.regen_btn.clicked.connect(lambda: self._node and self.regenerate.emit([self._node.id]))
        self.spoken = SpokenPanel()  # what the voice says, and the producer's override
        self.play_btn = QPushButton("Play")
        self.play_btn.clicked.connect(self.play)

        form = QFormLayout()
        form.addRow("Language:", self.language)
        buttons = QHBoxLayout()
        buttons.addWidget(self.play_btn)
        buttons.addWidget(self.regen_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.save_btn)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.info)
        layout.addLayout(form)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.spoken)
        layout.addLayout(buttons)
        self.show_node(None)

    def show_node(self, node, paragraph: ParagraphNode | None = None) -> None:  # noqa: ANN001
        """Show ``node`` (a chapter, paragraph or sentence; ``paragraph`` is a sentence's)."""
        self._node = node
        self._para = paragraph if isinstance(node, SentenceNode) else (node if isinstance(node, ParagraphNode) else None)
        is_sentence = isinstance(node, SentenceNode)
        self.editor.blockSignals(True)
        self.editor.setPlainText(node.text if is_sentence else "")
        self.editor.blockSignals(False)
        self.editor.setEnabled(is_sentence)
        self.spoken.show_sentence(node.id if is_sentence else None, node.text if is_sentence else "",
                                  node.spoken if is_sentence else "")
        self.save_btn.setEnabled(False)
        self.regen_btn.setEnabled(is_sentence)
        self.play_btn.setEnabled(node is not None)
        para = self._para
        self.language.setEnabled(para is not None and para.index is not None)
        self.language.clear()
        if para is not None and para.index is not None:
            self.language.addItem(f"Detected: {language_label(para.language)} ({para.confidence:.0%})", None)
            for code in sorted(LANGUAGE_NAMES, key=LANGUAGE_NAMES.get):
                self.language.addItem(language_label(code), code)
            if para.override:
                at = self.language.findData(para.override)
                if at < 0:
                    self.language.addItem(para.override, para.override)
                    at = self.language.count() - 1
                self.language.setCurrentIndex(at)
        if node is None:
            self.heading.setText("Select a chapter, paragraph or sentence.")
            self.info.setText("")
        elif isinstance(node, ChapterNode):
            self.heading.setText(node.label)
            self.info.setText(f"{node.words} words, about {fmt_duration(node.estimated_s)} when spoken; "
                              f"{counted(len(node.paragraphs), 'paragraph')}, {counted(len(node.sentences), 'sentence')}."
                              + (" Flagged as long." if node.too_long else ""))
        elif isinstance(node, ParagraphNode):
            self.heading.setText(f"Paragraph {node.index + 1 if node.index is not None else '(title)'} "
                                 f"of chapter {node.chapter + 1}")
            extra = " No installed voice speaks this language; map one in Voices & presets." if node.unvoiced else ""
            self.info.setText(f"{counted(len(node.sentences), 'sentence')}.{extra}")
        else:
            self.heading.setText(f"Sentence {node.id} (chapter {node.chapter + 1})")
            state = node.state + (f" \u2014 {node.reason}" if node.reason and node.state == "failed" else "")
            dur = f", {node.duration:.1f} s" if node.duration and node.state == "done" else ""
            split = " Cut from a longer sentence at the length cap." if node.was_split else ""
            self.info.setText(f"State: {state}{dur}; language {node.language}; synthesized {node.synth_count}x.{split}")

    def _dirty(self) -> None:
        node = self._node
        self.save_btn.setEnabled(isinstance(node, SentenceNode) and self.editor.toPlainText().strip() != node.text)

    def _save(self) -> None:
        node = self._node
        text = " ".join(self.editor.toPlainText().split())
        if isinstance(node, SentenceNode) and text and text != node.text:
            self.saveText.emit(node.id, text)
            self.save_btn.setEnabled(False)

    def _language_picked(self, row: int) -> None:
        para = self._para
        if para is None or para.index is None:
            return
        code = self.language.itemData(row)
        if code != para.override:
            self.languageChosen.emit(para.chapter, para.index, code)
