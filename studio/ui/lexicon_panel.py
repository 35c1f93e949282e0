"""Pronunciations: the project's lexicon entries, and the words worth an entry.

Why a dialog of its own: an entry changes how a word sounds everywhere in the book
(every sentence containing it renders again), so the producer needs to see how
often each word occurs, where first, and to hear it -- alone and in that sentence
-- before and after the change. The words the voice will likely guess (names,
acronyms; see :mod:`studio.text.lexicon_report`) are offered as suggestions.

Playing goes through the app's preview (``playRequested``): it synthesizes with the
project's lexicon applied, so what is heard is what the render will say. Reading and
editing go through the session's task runner (:mod:`studio.desktop.pronunciations`):
no widget reads the project database.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QFormLayout, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton,
    QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget,
)
from shiboken6 import isValid

from studio.core.words import counted
from studio.core.lexicon import LexiconEntry
from studio.desktop.messages import ErrorInfo
from studio.desktop.pronunciations import LexiconView, lexicon_view, remove_entry, save_entry
from studio.desktop.tasks import TaskRunner
from studio.project.store import Project
from studio.text.lexicon_report import LexiconReport, WordUse

KINDS = (("Respelling", "alias"), ("IPA phonemes", "phoneme"))


def play_text_for(word: str, sentence: str) -> str:
    """The word alone, then its first sentence: one passage for the preview."""
    word = word.strip()
    alone = word if word[-1:] in ".!?" else f"{word}."
    return f"{alone} {sentence.strip()}" if sentence.strip() else alone


class LexiconDialog(QDialog):
    """Add, edit and remove entries; ``changed`` after every edit (keys changed), ``shown``
    whenever what the project holds is on screen (after the first read and every edit)."""

    changed = Signal()
    shown = Signal()
    renderAgain = Signal(object)  # ids of rendered sentences whose pronunciation changed: queued at once
    playRequested = Signal(str, str)  # text, language

    def __init__(self, project: Project, tasks: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Pronunciations")
        self.resize(900, 560)
        self.project, self.tasks = project, tasks
        self.report = LexiconReport((), ())
        self.book_language = ""
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
        """Read the entries and count the words again, in the background."""
        project = self.project
        self.tasks.run(lambda: lexicon_view(project), on_done=self._show, on_error=self._failed,
                       action="read the pronunciations")

    def _show(self, view: LexiconView) -> None:
        if not isValid(self):  # closed while the task ran
            return
        self.report, self.book_language = view.report, view.book_language
        uses = {u.entry.key: u for u in self.report.with_entries if u.entry is not None}
        self.entries.setRowCount(len(view.entries))
        for i, e in enumerate(view.entries):
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
        if view.message:
            self.message.setText(view.message)
        self.shown.emit()

    def _edited(self, view: LexiconView) -> None:
        self._show(view)
        if isValid(self):
            self.changed.emit()
            if view.render_again:
                self.renderAgain.emit(list(view.render_again))

    def _failed(self, error: ErrorInfo) -> None:
        if isValid(self):
            self.message.setText(f"<b>{error.message}</b>")
            self.shown.emit()

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

    def save_entry(self) -> bool:
        """Save the form's entry in the background; False (and why) when the form is incomplete."""
        try:
            entry = self.form_entry()
        except ValueError as err:
            self.message.setText(f"<b>{err}</b>")
            return False
        project = self.project
        self.tasks.run(lambda: save_entry(project, entry), on_done=self._edited, on_error=self._failed,
                       action="save the pronunciation")
        return True

    def remove_entry(self) -> bool:
        """Remove the form's word in the background; False when there is no word."""
        word, language = self.word.text(), self.language.text().strip() or None
        if not word.strip():
            self.message.setText("<b>choose the word to remove</b>")
            return False
        project = self.project
        self.tasks.run(lambda: remove_entry(project, word, language), on_done=self._edited, on_error=self._failed,
                       action="remove the pronunciation")
        return True

    def play(self) -> str:
        """Ask the preview for the word alone and its first sentence (stored entry applied)."""
        word = self.word.text().strip()
        if not word:
            return ""
        matches = [u for u in (*self.report.with_entries, *self.report.suggestions)
                   if u.word.casefold() == word.casefold()]
        sentence, language = (matches[0].first_sentence, matches[0].language) if matches else ("", "")
        text = play_text_for(word, sentence)
        self.playRequested.emit(text, language or self.book_language)
        return text


def open_lexicon_dialog(window) -> LexiconDialog | None:  # window: studio.ui.main_window.MainWindow
    """The menu's hook: the dialog for the open project, wired to the preview and a refresh."""
    s = window.session
    if s.project is None:
        return None
    dlg = LexiconDialog(s.project, s.tasks, window)
    dlg.playRequested.connect(lambda text, lang: s.preview.play_text(text, lang, s.voice_for(lang), "pronunciation"))
    dlg.changed.connect(s.refresh)
    dlg.renderAgain.connect(lambda ids: s.render_sentences(ids, f"New pronunciation: {counted(len(ids), 'sentence')}"))
    window.lexicon_dialog = dlg
    dlg.open()
    return dlg
