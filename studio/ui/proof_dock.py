"""The Proof dock: the sentences proof-listening flagged, worst first, and what to do about each.

Why a list of exceptions: the point of proof-listening is that a producer listens
to the few sentences the recogniser doubts instead of the whole book. Each row
says why (missing, substituted, cut short ...); the details show the expected and
the heard words with the differences highlighted; a click selects the sentence in
the tree and the waveform (Space plays it); the buttons re-render it as a new
take, open the pronunciation dialog pre-filled with the flagged word, put the
sentence in the editor, or mark it as fine (stored with the project).
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from studio.project.numbering import chapter_label
from studio.desktop.proof import NOT_LISTENED, ProofController, ProofEntry, ProofView
from studio.ui.elided import ElidedLabel

COLUMNS = ("Chapter", "Sentence", "Why", "Score")
CHAPTER_COLUMNS = ("Chapter", "Proof-listening")
SEVERITY = {3: "\u25cf\u25cf\u25cf", 2: "\u25cf\u25cf", 1: "\u25cf"}


def highlighted(text: str, marked: str, colour: str) -> str:
    """``text`` as HTML with the words of ``marked`` highlighted (case and punctuation ignored)."""
    marks = {w.strip(".,;:!?\"'\u201c\u201d\u2019()").casefold() for w in marked.split()}
    out = []
    for word in text.split():
        bare = word.strip(".,;:!?\"'\u201c\u201d\u2019()").casefold()
        esc = html.escape(word)
        out.append(f'<b style="background:{colour}">{esc}</b>' if bare and bare in marks else esc)
    return " ".join(out)


def rows_table(columns: tuple[str, ...], stretch: int) -> QTableWidget:
    """A read-only table whose rows are chosen one at a time; column ``stretch`` takes the room left."""
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(columns)
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.horizontalHeader().setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    return table


class ProofPanel(QWidget):
    sentenceChosen = Signal(int)
    regenerate = Signal(object)  # list of sentence ids
    addPronunciation = Signal(str)  # the flagged word
    editSentence = Signal(int)
    markFine = Signal(int)
    listenRequested = Signal()
    chapterChosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = ProofView("", (), ())
        # one line, elided (the whole line in the tooltip): a word-wrapping label has a height for its
        # width, which made the dock's scroll area give the panel its whole preferred height, so a
        # short dock scrolled its buttons out of sight
        self.summary = ElidedLabel(NOT_LISTENED)
        self.summary.setStyleSheet("font-weight: 600;")
        self.listen_btn = QPushButton("Listen now")
        self.listen_btn.setToolTip("Proof-listen every rendered sentence that has not been checked")
        self.listen_btn.clicked.connect(self.listenRequested)
        self.auto = QCheckBox("After each render")
        self.auto.setToolTip("Proof-listen in the background after every render (it pauses while rendering)")
        self.table = rows_table(COLUMNS, stretch=2)
        self.table.itemSelectionChanged.connect(self._selected)
        # the chapters as rows (a wall of "ch. 9: not proof-listened; ch. 10: ..." no more)
        self.chapters = rows_table(CHAPTER_COLUMNS, stretch=1)
        self.chapters.itemSelectionChanged.connect(self._chapter_selected)
        lists = QSplitter(Qt.Orientation.Horizontal)
        lists.addWidget(self.table)
        lists.addWidget(self.chapters)
        lists.setStretchFactor(0, 3)
        lists.setStretchFactor(1, 2)
        self.details = QTextBrowser()
        self.details.setMaximumHeight(120)
        # a short dock shrinks the lists and the details first (to a row, then nothing): the summary,
        # Listen now and the buttons under the lists stay in sight instead of scrolling out of the dock
        for squeezable in (self.table, self.chapters, self.details):
            squeezable.setMinimumHeight(1)
        middle = QSplitter(Qt.Orientation.Vertical)
        middle.addWidget(lists)
        middle.addWidget(self.details)
        middle.setStretchFactor(0, 3)
        middle.setStretchFactor(1, 1)
        self.rerender_btn = QPushButton("Re-render (new take)")
        self.lexicon_btn = QPushButton("Add pronunciation\u2026")
        self.edit_btn = QPushButton("Edit sentence")
        self.fine_btn = QPushButton("Mark as fine")
        self.rerender_btn.clicked.connect(lambda: self._act(lambda e: self.regenerate.emit([e.sentence_id])))
        self.lexicon_btn.clicked.connect(lambda: self._act(lambda e: self.addPronunciation.emit(e.word)))
        self.edit_btn.clicked.connect(lambda: self._act(lambda e: self.editSentence.emit(e.sentence_id)))
        self.fine_btn.clicked.connect(lambda: self._act(lambda e: self.markFine.emit(e.sentence_id)))
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.auto)
        top.addWidget(self.listen_btn)
        buttons = QHBoxLayout()
        for b in (self.rerender_btn, self.lexicon_btn, self.edit_btn, self.fine_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(middle, 1)
        layout.addLayout(buttons)
        self._enable(None)

    def current(self) -> ProofEntry | None:
        row = self.table.currentRow()
        return self.view.entries[row] if 0 <= row < len(self.view.entries) else None

    def set_view(self, view: ProofView, names: dict[int, str] | None = None) -> None:
        keep = self.current()
        self.view = view
        self.table.setRowCount(len(view.entries))
        for r, e in enumerate(view.entries):
            why = f"{SEVERITY.get(e.severity, '')} {e.reason}"
            cells = (str(e.chapter + 1), str(e.number) if e.number else "title", why, f"{e.score:.0f}")
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(e.text)
                self.table.setItem(r, c, item)
        self.summary.set_full_text(view.book)
        self.chapters.setRowCount(len(view.chapters))
        for r, (idx, words) in enumerate(view.chapters):
            name = (names or {}).get(idx, "")
            for c, text in enumerate((chapter_label(idx, name, status=False) if name else str(idx + 1), words)):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, idx)
                item.setToolTip(f"Chapter {idx + 1}: {words}")
                self.chapters.setItem(r, c, item)
        again = next((r for r, e in enumerate(view.entries) if keep and e.sentence_id == keep.sentence_id), None)
        if again is not None:
            self.table.selectRow(again)
        else:
            self.details.clear()
            self._enable(None)

    def show_progress(self, p: Any) -> None:  # studio.proof.sentences.ProofProgress
        if not p.stopped:
            self.summary.set_full_text(f"{p.words()} ({p.flagged} to review so far)")

    def chapter_rows(self) -> list[tuple[str, str]]:
        t = self.chapters
        return [(t.item(r, 0).text(), t.item(r, 1).text()) for r in range(t.rowCount())]

    def _chapter_selected(self) -> None:
        row = self.chapters.currentRow()
        item = self.chapters.item(row, 0) if row >= 0 else None
        if item is not None:
            self.chapterChosen.emit(int(item.data(Qt.ItemDataRole.UserRole)))

    def _selected(self) -> None:
        entry = self.current()
        self._enable(entry)
        if entry is None:
            return
        expected = " ".join(f.expected for f in entry.flags)
        heard = " ".join(f.heard for f in entry.flags)
        self.details.setHtml(
            f"<p><b>Why:</b> {html.escape(entry.reason)}</p>"
            f"<p><b>Expected:</b> {highlighted(entry.text, expected, '#ffcdd2')}</p>"
            f"<p><b>Heard:</b> {highlighted(entry.heard, heard, '#fff59d')}</p>"
            f"<p><i>{html.escape(entry.advice)}</i></p>")
        self.sentenceChosen.emit(entry.sentence_id)

    def _enable(self, entry: ProofEntry | None) -> None:
        for b in (self.rerender_btn, self.edit_btn, self.fine_btn):
            b.setEnabled(entry is not None)
        self.lexicon_btn.setEnabled(entry is not None and bool(entry.word))
        self.rerender_btn.setEnabled(entry is not None and entry.retake_helps)

    def _act(self, fn) -> None:  # noqa: ANN001
        entry = self.current()
        if entry is not None:
            fn(entry)


def install_proof_dock(window: Any, controller: ProofController | None = None) -> ProofPanel:
    """Add the Proof dock to the main window and wire it to the session (a few lines in the window)."""
    from studio.ui.lexicon_panel import open_lexicon_dialog

    session = window.session
    ctl = controller or ProofController(session, window)
    panel = ProofPanel()
    window.proof, window.proof_ctl = panel, ctl
    window.docks["proof"] = window._dock("Proof", panel, Qt.DockWidgetArea.BottomDockWidgetArea)
    window.tabifyDockWidget(window.docks["queue"], window.docks["proof"])
    window.docks["queue"].raise_()
    ctl.auto = str(window.qsettings.value("proof/autoListen", True)).lower() not in ("false", "0")
    panel.auto.setChecked(ctl.auto)

    def set_auto(on: bool) -> None:
        ctl.auto = on
        window.qsettings.setValue("proof/autoListen", on)

    panel.auto.toggled.connect(set_auto)
    def names() -> dict[int, str]:
        snap = window.book.model.snapshot
        return {c.index: c.display_name for c in snap.chapters} if snap is not None else {}

    def show_chapter(idx: int) -> None:
        book = window.book
        source = book.model.index(idx, 0)
        if source.isValid():
            book.tree.setCurrentIndex(book.proxy.mapFromSource(source))
            book.tree.scrollTo(book.tree.currentIndex())

    ctl.viewChanged.connect(lambda v: panel.set_view(v, names()))
    panel.chapterChosen.connect(show_chapter)
    ctl.viewChanged.connect(lambda v: window.book.model.set_proof(frozenset(e.sentence_id for e in v.entries),
                                                                  dict(v.chapters)))
    ctl.progress.connect(panel.show_progress)
    ctl.listening.connect(window.queue.set_listening)  # "Proof-listening chapter 3: 40 %" in the queue
    ctl.listening.connect(lambda state: window.readouts.set_listening(state))
    ctl.failed.connect(lambda text: panel.summary.set_full_text(f"Proof-listening stopped: {text}"))
    panel.listenRequested.connect(ctl.listen)
    panel.markFine.connect(ctl.mark_fine)
    panel.sentenceChosen.connect(lambda sid: window.book.select_sentence(sid))
    panel.regenerate.connect(lambda ids: session.render_sentences(ids, regenerate=True))
    panel.editSentence.connect(lambda sid: (window.book.select_sentence(sid), window.inspector.editor.setFocus()))

    def add_pronunciation(word: str) -> None:
        dlg = open_lexicon_dialog(window)
        if dlg is not None:
            dlg.word.setText(word)
            dlg.value.setFocus()

    panel.addPronunciation.connect(add_pronunciation)
    return panel
