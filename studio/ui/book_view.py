"""The book panel: the tree, its filters and the context menu.

Why signals only: the panel knows what the user pointed at and what they asked
for (play, render, regenerate, a language, an edit); the main window forwards
those requests to the session. The panel never renders or plays anything itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QToolTip,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from studio.core.words import counted
from studio.project.numbering import chapters_label
from studio.desktop.search import SearchResult
from studio.desktop.snapshot import ChapterNode, ParagraphNode, SentenceNode
from studio.ui.book_filter import BookFilter
from studio.ui.book_model import ANY_LANGUAGE, COLUMNS, FILTERS, BookModel
from studio.ui.common import LANGUAGE_NAMES, language_label, language_name
from studio.ui.elided import ElidedLabel


#: a search answer with up to this many matching rows opens the tree to show them all
EXPAND_MATCHES = 300


def banner_line(snapshot) -> tuple[str, str]:
    """``(one line, the filter its "Show" link applies)``: passages without a voice first,
    said plainly ("5 passages look like Latin: no Latin voice, read by the English voice
    with Latin rules?"): a detection can be wrong, and the producer decides."""
    if snapshot is None:
        return "", "All"
    unvoiced = unvoiced_passages(snapshot)
    book = language_name(snapshot.language) if snapshot.language else "the book's language"
    how = {"book": f"read as {book}", "skip": "left out"}.get(snapshot.unvoiced_policy, "")
    parts = []
    for lang, found in sorted(unvoiced.items()):
        name = language_name(lang)
        said = how or f"the {book} voice reads it with {name} rules"
        if len(found) == 1:  # the passage itself, in quotes: "Read 'PEKEE-NUEE-NUEE, ERROMANGOAN.' in English?"
            parts.append(f"\u2018{passage_text(snapshot, *found[0])}\u2019 looks like {name} (no {name} voice: {said}). "
                         f"Read it in {book}?")
        else:
            parts.append(f"{len(found)} passages look like {name} (no {name} voice: {said}). Read them in {book}?")
    long = [c for c in snapshot.chapters if c.too_long]
    if len(long) == 1:
        parts.append(f"Chapter {long[0].index + 1} runs ~{long[0].estimated_s / 60:.0f} min")
    elif long:
        parts.append(f"{len(long)} long chapters")
    split = sum(c.split_paragraphs for c in snapshot.chapters)
    if split:
        parts.append(f"{split} paragraph{'s' if split > 1 else ''} with split sentences")
    return " \u00b7 ".join(parts), ("No voice" if unvoiced else "Flagged")


def passage_text(snapshot, chapter: int, paragraph: int, most: int = 48) -> str:  # noqa: ANN001
    """A paragraph's text for a line of the banner, cut at ``most`` characters."""
    para = next((p for p in snapshot.chapters[chapter].paragraphs if p.index == paragraph), None)
    text = " ".join(para.text.split()) if para is not None else ""
    return text if len(text) <= most else text[:most - 1].rstrip() + "\u2026"


def unvoiced_passages(snapshot) -> dict[str, list[tuple[int, int]]]:
    """language -> (chapter, paragraph) of each passage no voice speaks (the title row excluded)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for c in snapshot.chapters:
        for language, paragraph in c.unvoiced:
            out.setdefault(language, []).append((c.index, paragraph))
    return out


class BookPanel(QWidget):
    playRequested = Signal(object, str)  # list[SentenceNode], label
    playFromRequested = Signal(int)  # sentence id: play it and the rest of its chapter
    renderChapters = Signal(object)  # list[int]
    renderSentences = Signal(object)  # list[int]
    regenerate = Signal(object)  # list[int]
    languageChosen = Signal(int, int, object)  # chapter, paragraph, code or None
    chapterIncluded = Signal(int, bool)  # chapter, included
    chapterRenamed = Signal(int, str)  # chapter, new name ("" : the imported title)
    chapterMerged = Signal(int)  # chapter: merge it with the next one
    chapterSplit = Signal(int, int)  # chapter, paragraph: split before that paragraph
    longChapterMinutesChanged = Signal(float)
    currentChanged = Signal(object)  # node or None
    searchRequested = Signal(str)  # the search text, once typing pauses
    directionRequested = Signal(object)  # list[SentenceNode]: a rate, pauses for them
    speakerRequested = Signal(object)  # SentenceNode: "Spoken by..." (studio.ui.cast_dock)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = BookModel(self)
        self.proxy = BookFilter(self)
        self.proxy.setSourceModel(self.model)
        self.extra_languages: set[str] = set()
        self._banner_mode = "Flagged"

        self.filter_combo = QComboBox()
        self.filter_combo.addItems(FILTERS)
        self.filter_combo.setToolTip("Show every item, or only flagged, unrendered or failed ones")
        self.filter_combo.currentTextChanged.connect(self._filter_changed)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find in the text and spoken forms (Ctrl+F)\u2026")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._search_changed)
        self._search_timer = QTimer(self, singleShot=True, interval=120,
                                    timeout=lambda: self.searchRequested.emit(self.search.text()))
        self.long_minutes = QDoubleSpinBox()
        self.long_minutes.setRange(1, 600)
        self.long_minutes.setDecimals(0)
        self.long_minutes.setSuffix(" min")
        self.long_minutes.setValue(60)
        self.long_minutes.setToolTip("Flag chapters estimated to run longer than this when spoken")
        self.long_minutes.valueChanged.connect(lambda v: self.longChapterMinutesChanged.emit(float(v)))
        self.language_combo = QComboBox()
        self.language_combo.setToolTip("Show only paragraphs spoken in one language")
        self.language_combo.currentIndexChanged.connect(self._language_filter_changed)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.filter_combo)
        bar.addWidget(self.language_combo)
        bar.addWidget(self.search, 1)
        bar.addWidget(QLabel("Long chapter over"))
        bar.addWidget(self.long_minutes)

        self.tree = QTreeView()
        self.tree.setModel(self.proxy)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._menu)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col, width in zip(range(1, len(COLUMNS)), (110, 130, 150, 70)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(col, width)
        self.tree.selectionModel().currentChanged.connect(lambda cur, _prev: self.currentChanged.emit(self.node_at(cur)))

        # one line, however many problems, elided to the window's width: the whole of it in the
        # tooltip and behind "Show" (a long line no longer sets the window's minimum width)
        self.summary = ElidedLabel(link='<a href="show">Show</a>')
        self.summary.setStyleSheet("color: #b26a00;")
        self.summary.linkActivated.connect(self._show_flagged)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)

    # ------------------------------------------------------------ data

    def set_snapshot(self, snapshot) -> None:
        self.model.set_snapshot(snapshot)
        self._show_warnings(snapshot)
        if snapshot is not None and len(snapshot.chapters) <= 12:
            self.tree.expandToDepth(0)

    def update_snapshot(self, snapshot) -> None:
        """A newer snapshot of the open book (new flags, states): tree kept as it is."""
        self.model.update_snapshot(snapshot)
        self._show_warnings(snapshot)

    def _show_warnings(self, snapshot) -> None:
        self._fill_languages(snapshot)
        self.refresh_banner()

    def refresh_banner(self) -> None:
        """One line from the tree's current data (a language override shows at once), with "Show"
        and, for passages no voice speaks, "Keep them English" (the book's language)."""
        line, self._banner_mode = banner_line(self.model.snapshot)
        snap = self.model.snapshot
        keep = ""
        found = unvoiced_passages(snap) if snap is not None else {}
        book = escape(language_name(snap.language)) if snap is not None else ""
        if len(found) == 1:
            them = "it" if sum(len(f) for f in found.values()) == 1 else "them"
            keep = f" \u00b7 <a href=\"keep\">Read {them} in {book}</a>"
        elif found:  # each language its own choice: keeping a stray Slovak English leaves the real Latin alone
            keep = "".join(f" \u00b7 <a href=\"keep:{lang}\">Read the {escape(language_name(lang))} in {book}</a>"
                           for lang in sorted(found))
        self.summary.link = f'<a href="show">Show</a>{keep}'
        self.summary.set_full_text(f"\u26a0 {line}" if line else "",
                                   "\n".join(snap.warnings) if snap is not None else "")
        self.summary.setVisible(bool(line))

    def _show_flagged(self, link: str = "") -> None:
        if link == "keep" or link.startswith("keep:"):
            self.keep_book_language(link.partition(":")[2])
            return
        self.filter_combo.setCurrentText(self._banner_mode)
        if self.summary.elided():  # the part that did not fit, at once (it stays in the tooltip too)
            QToolTip.showText(self.summary.mapToGlobal(self.summary.rect().bottomLeft()), self.summary.toolTip(),
                              self.summary)

    def keep_book_language(self, language: str = "") -> None:
        """The banner's choice: the passages without a voice (of ``language`` only, when given)
        are read in the book's language."""
        snap = self.model.snapshot
        if snap is None or not snap.language:
            return
        for lang, found in unvoiced_passages(snap).items():
            if language and lang != language:
                continue
            for chapter, paragraph in found:
                self.languageChosen.emit(chapter, paragraph, snap.language)

    def _fill_languages(self, snapshot) -> None:
        current = self.language_combo.currentData() or ""
        langs = sorted(set().union(*(c.languages for c in snapshot.chapters))) if snapshot else []
        if self.language_combo.count() and langs == [self.language_combo.itemData(i) for i in range(1, self.language_combo.count())]:
            return  # the same languages: the filter stands (setting it again filters the whole tree again)
        self.language_combo.blockSignals(True)
        self.language_combo.clear()
        self.language_combo.addItem(ANY_LANGUAGE, "")
        for code in langs:
            self.language_combo.addItem(language_label(code), code)
        self.language_combo.setCurrentIndex(max(0, self.language_combo.findData(current)))
        self.language_combo.blockSignals(False)
        self.proxy.set_language(self.language_combo.currentData() or "")

    def _language_filter_changed(self, _index: int) -> None:
        self.proxy.set_language(self.language_combo.currentData() or "")
        if self.language_combo.currentData():
            self.tree.expandAll()

    def node_at(self, proxy_index: QModelIndex):
        return self.model.node(self.proxy.mapToSource(proxy_index))

    def selected_indexes(self) -> list[QModelIndex]:
        rows = self.tree.selectionModel().selectedRows(0)
        if not rows and self.tree.currentIndex().isValid():
            rows = [self.tree.currentIndex().siblingAtColumn(0)]
        return [self.proxy.mapToSource(i) for i in rows]

    def selected_nodes(self) -> list:
        return [n for n in (self.model.node(i) for i in self.selected_indexes()) if n is not None]

    def selected_sentences(self) -> list[SentenceNode]:
        """Sentences of the selection in reading order, without duplicates."""
        seen: dict[int, SentenceNode] = {}
        for idx in self.selected_indexes():
            for s in self.model.sentences_under(idx):
                seen.setdefault(s.id, s)
        order = {s.id: i for i, s in enumerate(s for c in (self.model.snapshot.chapters if self.model.snapshot else ())
                                                for s in c.sentences)}
        return sorted(seen.values(), key=lambda s: order.get(s.id, 0))

    def selected_chapters(self) -> list[int]:
        out = set()
        for node in self.selected_nodes():
            out.add(node.index if isinstance(node, ChapterNode) else node.chapter)
        return sorted(out)

    def select_sentence(self, sentence_id: int, scroll: bool = True) -> None:
        idx = self.proxy.mapFromSource(self.model.sentence_index(sentence_id))
        if idx.isValid():
            self.tree.setCurrentIndex(idx)
            if scroll:
                self.tree.scrollTo(idx)

    def show_playing(self, sentence_id: int | None, follow: bool = True) -> None:
        src = self.model.set_playing(sentence_id if sentence_id is not None and sentence_id >= 0 else None)
        if follow and src.isValid():
            idx = self.proxy.mapFromSource(src)
            if idx.isValid():
                self.tree.scrollTo(idx, QAbstractItemView.ScrollHint.EnsureVisible)

    def play_selection(self) -> None:
        nodes = self.selected_sentences()
        if nodes:
            first = self.selected_nodes()[0]
            label = first.title if isinstance(first, ChapterNode) else (nodes[0].text[:40] + ("\u2026" if len(nodes) > 1 else ""))
            self.playRequested.emit(nodes, label)

    # ------------------------------------------------------------ menu

    def _search_changed(self, text: str) -> None:
        if text.strip():
            self._search_timer.start()  # a burst of keystrokes becomes one search
        else:
            self._search_timer.stop()
            self.proxy.set_needle("")

    def apply_search(self, result: SearchResult) -> None:
        """The answer to the newest search (older answers and a cleared field are ignored)."""
        if result.needle == self.search.text() and result.needle.strip():
            few = len(result.rows) <= EXPAND_MATCHES
            if not few:  # the first letters match most of the book: opening every chapter would take seconds
                self.tree.collapseAll()  # before filtering, so no expanded row has to be mapped again
            self.proxy.set_matches(result)
            if few:  # a few places: show them all at once
                self.tree.expandAll()

    def _filter_changed(self, mode: str) -> None:
        self.proxy.set_mode(mode)
        if mode != "All":
            self.tree.expandAll()

    def _menu(self, pos: QPoint) -> None:
        idx = self.tree.indexAt(pos)
        if not idx.isValid():
            return
        node = self.node_at(idx)
        menu = QMenu(self)
        self._add(menu, "Play", self.play_selection, "Play from the cache, or synthesize what is not rendered yet")
        if isinstance(node, SentenceNode):
            self._add(menu, "Play to the end of the chapter", lambda: self.playFromRequested.emit(node.id))
        menu.addSeparator()
        chapters = self.selected_chapters()
        names = {c.index: c.display_name for c in self.model.snapshot.chapters} if self.model.snapshot else {}
        label = f"Render {chapters_label(chapters, names)}" if chapters else "Render chapter"
        self._add(menu, label, lambda: self.renderChapters.emit(chapters))
        ids = [s.id for s in self.selected_sentences()]
        self._add(menu, f"Render selection ({counted(len(ids), 'sentence')})", lambda: self.renderSentences.emit(ids))
        self._add(menu, "Regenerate (new take)", lambda: self.regenerate.emit(ids),
                  "Synthesize again even though the audio exists")
        self._add(menu, "Direction\u2026", lambda: self.directionRequested.emit(self.selected_sentences()),
                  "A rate and pauses for the selected sentences")
        if isinstance(node, ChapterNode):
            menu.addSeparator()
            if node.included:
                self._add(menu, "Exclude from the book", lambda: self.chapterIncluded.emit(node.index, False),
                          "Render Book and export leave it out; the other chapters keep their numbers")
            else:
                self._add(menu, "Include in the book", lambda: self.chapterIncluded.emit(node.index, True))
            self._add(menu, "Rename chapter\u2026", lambda: self._ask_name(node))
            if self.model.snapshot is not None and node.index + 1 < len(self.model.snapshot.chapters):
                self._add(menu, "Merge with next chapter", lambda: self.chapterMerged.emit(node.index),
                          "One chapter (this one's name); every sentence keeps its audio")
        if isinstance(node, SentenceNode):
            menu.addSeparator()
            self._add(menu, "Edit text\u2026 (F2)", lambda: self.tree.edit(idx.siblingAtColumn(0)))
            self._add(menu, "Copy text", lambda: QGuiApplication.clipboard().setText(node.text))
            self._add(menu, "Spoken by\u2026", lambda: self.speakerRequested.emit(node),
                      "Who says this sentence's quoted words; kept when the book is imported again")
        para = self._paragraph_of(node)
        if para is not None and para.index is not None:
            menu.addSeparator()
            if para.index > 0:
                self._add(menu, "Split chapter here", lambda: self.chapterSplit.emit(para.chapter, para.index),
                          "A new chapter starts with this paragraph; every sentence keeps its audio")
            self._language_menu(menu.addMenu("Speak this paragraph in"), para)
        menu.popup(self.tree.viewport().mapToGlobal(pos))

    def _paragraph_of(self, node) -> ParagraphNode | None:
        if isinstance(node, ParagraphNode):
            return node
        if isinstance(node, SentenceNode) and self.model.snapshot is not None and node.paragraph is not None:
            chapter = self.model.snapshot.chapters[node.chapter]
            return next((p for p in chapter.paragraphs if p.index == node.paragraph), None)
        return None

    def _language_menu(self, menu: QMenu, para: ParagraphNode) -> None:
        detected = menu.addAction(f"Detected: {language_label(para.language)} ({para.confidence:.0%})")
        detected.setCheckable(True)
        detected.setChecked(para.override is None)
        detected.triggered.connect(lambda: self.languageChosen.emit(para.chapter, para.index, None))
        menu.addSeparator()
        codes = sorted(set(LANGUAGE_NAMES) | self.extra_languages, key=lambda c: LANGUAGE_NAMES.get(c, c))
        voiced = set(self.model.snapshot.voice_languages) if self.model.snapshot else set()
        for code in codes:
            text = language_label(code) + ("" if code in voiced else "  \u2014 no voice")
            act = menu.addAction(text)
            act.setCheckable(True)
            act.setChecked(para.override == code)
            act.triggered.connect(lambda _=False, c=code: self.languageChosen.emit(para.chapter, para.index, c))
        menu.addSeparator()
        other = menu.addAction("Other code\u2026")
        other.triggered.connect(lambda: self._ask_language(para))

    def _ask_name(self, chapter: ChapterNode) -> None:
        name, ok = QInputDialog.getText(self, "Rename chapter", "Name (files and tags use it; empty: the imported title):",
                                        text=chapter.display_name)
        if ok:
            self.chapterRenamed.emit(chapter.index, name.strip())

    def _ask_language(self, para: ParagraphNode) -> None:
        code, ok = QInputDialog.getText(self, "Language", "ISO 639-1 code (e.g. fr, de, la):", text=para.effective_language)
        if ok and code.strip():
            self.languageChosen.emit(para.chapter, para.index, code.strip())

    def _add(self, menu: QMenu, text: str, slot, tip: str = "") -> QAction:
        act = menu.addAction(text)
        act.triggered.connect(slot)
        if tip:
            act.setToolTip(tip)
        return act

    def sentences_of_chapters(self, chapters: Sequence[int]) -> list[SentenceNode]:
        snap = self.model.snapshot
        if snap is None:
            return []
        return [self.model.sentence(s.id) for c in chapters for s in snap.chapters[c].sentences]  # type: ignore[misc]
