"""The book audit panel: everything the voice would say other than as a narrator reads it.

Why a panel before rendering: a symbol's name, a word spelled letter by letter, an English
passage given another language or a word guessed is heard only in the finished audio;
the producer reads the list (by kind, with its sentences, as ``studio inspect --audit``
prints it) and fixes what matters first. The audit runs on the session's task runner
(:func:`studio.rendering.book_audit.audit_project`): no widget reads the project. It
reports its progress and can be stopped; a row opens its sentence in the book view
(double-click); the words spelled on purpose (codes such as "Theorem VFSLS") are
accepted in one undoable step.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtWidgets import (QDialog, QHBoxLayout, QHeaderView, QLabel, QProgressBar, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from studio.core.errors import Cancelled
from studio.desktop.messages import ErrorInfo
from studio.desktop.tasks import TaskRunner
from studio.project.store import Project
from studio.rendering.book_audit import accept_spelled, audit_project
from studio.text.audit import KINDS, Audit, Finding

_COUNT = re.compile(r" \(\d+x\)$")


class AuditDialog(QDialog):
    """The findings, one row each (kind, chapter, sentence number, what, the sentence).

    ``open_sentence(chapter, index)`` (1-based, as the rows number them) shows that sentence
    in the book view; None: rows open nothing."""

    def __init__(self, project: Project, tasks: TaskRunner, parent: QWidget | None = None,
                 open_sentence: Callable[[int, int], None] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Book Audit")
        self.resize(980, 560)
        self.project, self.tasks = project, tasks  # the runner delivers the result to this dialog
        self.open_sentence = open_sentence
        self.audit: Audit | None = None
        self.stopped = False
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.progress = QProgressBar()
        self.stop_btn = QPushButton("Stop")
        self.stop_btn.clicked.connect(self.stop)
        self.accept_btn = QPushButton("Accept the spelled words")
        self.accept_btn.setToolTip("Codes and abbreviations the author spells (\"Theorem VFSLS\"): each gets a "
                                   "pronunciation that spells it, so the audit lists it no more (undoable)")
        self.accept_btn.clicked.connect(self.accept_spelled)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Kind", "Chapter", "#", "What", "Sentence"])
        self.table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.cellDoubleClicked.connect(self._open_row)
        bar = QHBoxLayout()
        bar.addWidget(self.progress, 1)
        bar.addWidget(self.stop_btn)
        bar.addWidget(self.accept_btn)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(bar)
        layout.addWidget(self.table)
        self.start()

    def start(self) -> None:
        """Audit the book in the background, reporting how far it has read."""
        self.stopped = False
        self.summary.setText("Listening to the book on paper\u2026")
        self.progress.setRange(0, 0)
        self.progress.show()
        self.stop_btn.setEnabled(True)
        self.accept_btn.setEnabled(False)
        project = self.project

        def work(report: Callable[[object], None]) -> Audit:
            def heard(done: int, total: int) -> None:
                if self.stopped:
                    raise Cancelled("audit stopped")
                report((done, total))
            return audit_project(project, heard)

        self.tasks.run(work, on_done=self.show_audit, on_error=self._failed, on_progress=self._advanced,
                       action="audit the book")

    def stop(self) -> None:
        """Stop the audit at its next step (read on the task thread)."""
        self.stopped = True
        self.stop_btn.setEnabled(False)

    def _advanced(self, value: object) -> None:
        done, total = value  # type: ignore[misc]
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)
        self.summary.setText(f"Listening to the book on paper\u2026 sentence {done} of {total}")

    def show_audit(self, audit: Audit) -> None:
        self.audit = audit
        self.progress.hide()
        self.stop_btn.setEnabled(False)
        counts = audit.counts()
        silent = audit.silent_counts()
        left_out = f" Left out of the audio: {', '.join(f'{w} {n}' for w, n in silent.items())}." if silent else ""
        self.summary.setText(
            f"{audit.sentences} sentences, {audit.words} words. " +
            "; ".join(f"{k}: {n}" for k, n in counts.items()) + "." + left_out +
            " Symbols, spelled words and other languages are heard wrong; guessed words and heteronyms are "
            "worth a listen. Double-click a row to see its sentence in the book.")
        self.accept_btn.setEnabled(bool(counts.get("spelled")))
        self.table.setRowCount(len(audit.findings))
        for row, f in enumerate(audit.findings):
            for col, value in enumerate((f.kind, str(f.chapter), str(f.index), f.detail, " ".join(f.text.split()))):
                item = QTableWidgetItem(value)
                item.setToolTip(KINDS[f.kind] if col == 0 else value)
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()

    def finding(self, row: int) -> Finding | None:
        return self.audit.findings[row] if self.audit is not None and 0 <= row < len(self.audit.findings) else None

    def _open_row(self, row: int, _column: int) -> None:
        f = self.finding(row)
        if f is not None and f.chapter and self.open_sentence is not None:
            self.open_sentence(f.chapter, f.index)

    def accept_spelled(self) -> None:
        """Every word the audit lists as spelled is accepted as spelled; then the audit runs again."""
        if self.audit is None:
            return
        words = [_COUNT.sub("", f.detail) for f in self.audit.of_kind("spelled")]
        project = self.project
        self.accept_btn.setEnabled(False)
        self.tasks.run(lambda: accept_spelled(project, words), on_done=lambda _n: self.start(), on_error=self._failed,
                       action="accept the spelled words")

    def _failed(self, error: ErrorInfo) -> None:
        self.progress.hide()
        self.stop_btn.setEnabled(False)
        self.summary.setText("The audit was stopped." if self.stopped else f"The audit failed: {error.message}")


def open_audit_dialog(window) -> AuditDialog | None:  # window: studio.ui.main_window.MainWindow
    """The menu's hook: the audit of the open project; a row opens its sentence in the book view."""
    s = window.session
    if s.project is None:
        return None

    def show(chapter: int, index: int) -> None:
        snapshot = window.book.model.snapshot
        if snapshot is None or not 0 < chapter <= len(snapshot.chapters):
            return
        sentences = snapshot.chapters[chapter - 1].sentences
        if 0 < index <= len(sentences):
            window.pages.setCurrentWidget(window.book)
            window.book.select_sentence(sentences[index - 1].id)

    dlg = AuditDialog(s.project, s.tasks, window, open_sentence=show)
    window.audit_dialog = dlg
    dlg.open()
    return dlg
