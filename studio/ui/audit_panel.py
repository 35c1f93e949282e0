"""The book audit panel: everything the voice would say other than as a narrator reads it.

Why a panel before rendering: a symbol's name, a word spelled letter by letter, an English
passage given another language or a word guessed is heard only in the finished audio;
the producer reads the list (by kind, with its sentences, as ``studio inspect --audit``
prints it) and fixes what matters first. The audit runs on the session's task runner
(:func:`studio.rendering.book_audit.audit_project`): no widget reads the project.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from studio.desktop.messages import ErrorInfo
from studio.desktop.tasks import TaskRunner
from studio.project.store import Project
from studio.rendering.book_audit import audit_project
from studio.text.audit import KINDS, Audit


class AuditDialog(QDialog):
    """The findings, one row each (kind, chapter, sentence number, what, the sentence)."""

    def __init__(self, project: Project, tasks: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Book Audit")
        self.resize(980, 560)
        self.tasks = tasks  # kept: the runner delivers the result to this dialog
        self.audit: Audit | None = None
        self.summary = QLabel("Listening to the book on paper\u2026")
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Kind", "Chapter", "#", "What", "Sentence"])
        self.table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        self.tasks.run(lambda: audit_project(project), on_done=self.show_audit, on_error=self._failed,
                  action="audit the book")

    def show_audit(self, audit: Audit) -> None:
        self.audit = audit
        counts = audit.counts()
        self.summary.setText(
            f"{audit.sentences} sentences, {audit.words} words. " +
            "; ".join(f"{k}: {n}" for k, n in counts.items()) +
            ". Symbols, spelled words and other languages are heard wrong; guessed words and heteronyms are "
            "worth a listen.")
        self.table.setRowCount(len(audit.findings))
        for row, f in enumerate(audit.findings):
            for col, value in enumerate((f.kind, str(f.chapter), str(f.index), f.detail, " ".join(f.text.split()))):
                item = QTableWidgetItem(value)
                item.setToolTip(KINDS[f.kind] if col == 0 else value)
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()

    def _failed(self, error: ErrorInfo) -> None:
        self.summary.setText(f"The audit failed: {error.message}")


def open_audit_dialog(window) -> AuditDialog | None:  # window: studio.ui.main_window.MainWindow
    """The menu's hook: the audit of the open project."""
    s = window.session
    if s.project is None:
        return None
    dlg = AuditDialog(s.project, s.tasks, window)
    window.audit_dialog = dlg
    dlg.open()
    return dlg
