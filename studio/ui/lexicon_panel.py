"""Pronunciations: the project's lexicon entries, and the words worth an entry.

Why a dialog of its own: an entry changes how a word sounds everywhere in the book
(every sentence containing it renders again), so the producer needs to see how
often each word occurs, where first, and to hear it -- alone and in that sentence
-- before and after the change. The words the voice will likely guess (names,
acronyms; see :mod:`studio.text.lexicon_report`) are offered as suggestions.

Playing goes through the app's preview (``playRequested``): it synthesizes with the
project's lexicon applied, so what is heard is what the render will say.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QFormLayout, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton,
    QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget,
)

from studio.core.lexicon import LexiconEntry
from studio.rendering.lexicon_checks import unknown_ipa
from studio.project.store import Project
from studio.text.lexicon_report import LexiconReport, WordUse, report_for_sentences

log = logging.getLogger(__name__)

KINDS = (("Respelling", "alias"), ("IPA phonemes", "phoneme"))


def play_text_for(word: str, sentence: str) -> str:
    """The word alone, then its first sentence: one passage for the preview."""
    word = word.strip()
    alone = word if word[-1:] in ".!?" else f"{word}."
    return f"{alone} {sentence.strip()}" if sentence.strip() else alone


class LexiconDialog(QDialog):
    """Add, edit and remove entries; ``changed`` after every edit (keys changed)."""

    changed = Signal()
    renderAgain = Signal(object)  # ids of rendered sentences whose pronunciation changed: queued at once
    playRequested = Signal(str, str)  # text, language

    def __init__(self, project: Project, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Pronunciations")
        self.resize(900, 560)
        self.project = project
        self.report = LexiconReport((), ())
        self.entries = QTableWidget(0, 6)
        self.entries.setHorizontalHeaderLabels(["Word", "Says", "Kind", "Case", "Sentences", "First sentence"])
        self.suggestions = QTableWidget(0, 3)
        self.suggestions.setHorizontalHeaderLabels(["Word", "Sentences", "First sentence"])
        for table in (self.entries, self.suggestions):
            table.verticalHeader().hide()
            table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
            table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
            table.horizontalHeader().setSectionResizeMode(table.columnCount() - 1, QHeaderView.ResizeMode.Stretch)
        self.entries.itemSelectionChanged.connect(self._entry_selected)
        self.suggestions.itemSelectionChanged.connect(self._suggestion_selected)
        tabs = QTabWidget()
        tabs.addTab(self.entries, "Entries")
        tabs.addTab(self.suggestions, "Words to check")

        self.word = QLineEdit()
        self.kind = QComboBox()
        for label, kind in KINDS:
            self.kind.addItem(label, kind)
        self.value = QLineEdit()
        self.value.setPlaceholderText("'Win', or IPA such as 'wˈɪn'")
        self.exact = QCheckBox("Match this capitalisation only")
        self.language = QLineEdit()
        self.language.setPlaceholderText("all languages (or e.g. en, fr)")
        form = QFormLayout()
        form.addRow("Word or phrase:", self.word)
        form.addRow("Kind:", self.kind)
        form.addRow("Say:", self.value)
        form.addRow("", self.exact)
        form.addRow("Language:", self.language)
        self.save_btn = QPushButton("Add / Update")
        self.save_btn.clicked.connect(self.save_entry)
        self.remove_btn = QPushButton("Remove")
        self.remove_btn.clicked.connect(self.remove_entry)
        self.play_btn = QPushButton("\u25b6 Play")
        self.play_btn.setToolTip("Speak the word alone, then in its first sentence, with the saved entry (as the render will)")
        self.play_btn.clicked.connect(self.play)
        buttons = QHBoxLayout()
        for b in (self.save_btn, self.remove_btn, self.play_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(tabs, 1)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        self.reload()

    # ------------------------------------------------------------ data

    def reload(self) -> None:
        """Re-read the entries and recount the words (after every edit)."""
        rows = [(r.text, r.language) for r in self.project.sentences() if r.paragraph is not None]
        lexicon = self.project.lexicon.effective()
        self.report = report_for_sentences(rows, lexicon)
        uses = {u.entry.key: u for u in self.report.with_entries if u.entry is not None}
        own = self.project.lexicon.entries().entries
        self.entries.setRowCount(len(own))
        for i, e in enumerate(own):
            use = uses.get(e.key)
            cells = (e.grapheme, e.value, {k: lbl for lbl, k in KINDS}[e.kind],
                     "exact" if e.case_sensitive else "any", str(use.count if use else 0),
                     use.first_sentence if use else "")
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, e)
                self.entries.setItem(i, col, item)
        self.suggestions.setRowCount(len(self.report.suggestions))
        for i, u in enumerate(self.report.suggestions):
            for col, text in enumerate((u.word, str(u.count), u.first_sentence)):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, u)
                self.suggestions.setItem(i, col, item)

    def _selected(self, table: QTableWidget) -> object | None:
        items = table.selectedItems()
        return items[0].data(Qt.ItemDataRole.UserRole) if items else None

    def _entry_selected(self) -> None:
        entry = self._selected(self.entries)
        if isinstance(entry, LexiconEntry):
            self.word.setText(entry.grapheme)
            self.kind.setCurrentIndex(self.kind.findData(entry.kind))
            self.value.setText(entry.value)
            self.exact.setChecked(entry.case_sensitive)
            self.language.setText(entry.language or "")

    def _suggestion_selected(self) -> None:
        use = self._selected(self.suggestions)
        if isinstance(use, WordUse):
            self.word.setText(use.word)
            self.value.clear()
            self.value.setFocus()

    def form_entry(self) -> LexiconEntry:
        """The entry as the form says (ValueError when incomplete)."""
        return LexiconEntry(self.word.text(), self.kind.currentData(), self.value.text(),
                            self.exact.isChecked(), self.language.text().strip() or None)

    # ------------------------------------------------------------ actions

    def _guard(self, action: Callable[[], str]) -> bool:
        try:
            self.message.setText(action())
            return True
        except (ValueError, OSError) as err:
            self.message.setText(f"<b>{err}</b>")
        except Exception as err:  # noqa: BLE001 - StudioError and friends: say it, keep the dialog
            log.warning("lexicon edit failed: %s", err)
            self.message.setText(f"<b>{err}</b>")
        return False

    def save_entry(self) -> bool:
        def run() -> str:
            entry = self.form_entry()
            voice, unknown = unknown_ipa(self.project, entry)
            if unknown:
                raise ValueError(f"the voice {voice} has no phoneme for {' '.join(unknown)}")
            return f"{entry.grapheme}: saved; " + self._render_again(lambda: self.project.lexicon.add([entry]))
        return self._guard(run)

    def remove_entry(self) -> bool:
        def run() -> str:
            word, language = self.word.text(), self.language.text().strip() or None
            removed: list[int] = []
            again = self._render_again(lambda: removed.append(self.project.lexicon.remove(word, language=language)))
            return f"removed {removed[0]} entr{'y' if removed[0] == 1 else 'ies'} for {word}; {again}"
        return self._guard(run)

    def _render_again(self, change: Callable[[], object]) -> str:
        """Make ``change`` to the lexicon, queue the rendered sentences it changes (what the message
        says will render again is what is queued) and say how many."""
        before = {r.id: r.expected_key for r in self.project.sentences()}
        change()
        moved = [r for r in self.project.sentences() if before.get(r.id) != r.expected_key]
        again = [r.id for r in moved if r.cache_key]  # they have audio with the old pronunciation
        self.reload()
        self.changed.emit()
        if again:
            self.renderAgain.emit(again)
        later = len(moved) - len(again)
        parts = [f"{len(again)} sentence{'s' if len(again) != 1 else ''} queued to render again"] if again else []
        if later:
            parts.append(f"{later} not rendered yet will use it")
        return ("; ".join(parts) or "no sentence changes") + "."

    def play(self) -> str:
        """Ask the preview for the word alone and its first sentence (stored entry applied)."""
        word = self.word.text().strip()
        if not word:
            return ""
        matches = [u for u in (*self.report.with_entries, *self.report.suggestions)
                   if u.word.casefold() == word.casefold()]
        sentence, language = (matches[0].first_sentence, matches[0].language) if matches else ("", "")
        text = play_text_for(word, sentence)
        self.playRequested.emit(text, language or self.project.book().language)
        return text


def open_lexicon_dialog(window) -> LexiconDialog | None:  # window: studio.ui.main_window.MainWindow
    """The menu's hook: the dialog for the open project, wired to the preview and a refresh."""
    s = window.session
    if s.project is None:
        return None
    dlg = LexiconDialog(s.project, window)
    dlg.playRequested.connect(lambda text, lang: s.preview.play_text(text, lang, s.voice_for(lang), "pronunciation"))
    dlg.changed.connect(s.refresh)
    dlg.renderAgain.connect(lambda ids: s.render_sentences(ids, f"New pronunciation: {len(ids)} sentence(s)"))
    window.lexicon_dialog = dlg
    dlg.open()
    return dlg
