"""Export chapters as WAV or MP3 into a folder, in the background, with progress.

Why the dialog only offers complete chapters: export never synthesizes (what is
exported is exactly what was rendered and checked), so a chapter with pending or
failed sentences is listed but disabled, with the reason. When the files are
written the dialog offers to open the folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QUrl, Qt, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QComboBox, QDialog, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem,
    QProgressBar, QPushButton, QVBoxLayout, QWidget,
)

from studio.qt.messages import ErrorInfo, ExportProgress
from studio.qt.snapshot import BookSnapshot
from studio.ui.book_model import BookModel, fmt_duration


class ExportDialog(QDialog):
    exportRequested = Signal(str, str, object)  # folder, format, chapter indexes

    def __init__(self, snapshot: BookSnapshot, model: BookModel, folder: str, parent: QWidget | None = None,
                 open_url: Callable[[QUrl], object] = QDesktopServices.openUrl) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export chapters")
        self.resize(640, 480)
        self.open_url = open_url
        self.result_progress: ExportProgress | None = None
        self.folder = QLineEdit(folder)
        browse = QPushButton("Browse\u2026")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        self.format = QComboBox()
        self.format.addItem("MP3 (128 kbit/s)", "mp3")
        self.format.addItem("WAV (16-bit PCM)", "wav")
        form = QFormLayout()
        form.addRow("Folder:", row)
        form.addRow("Format:", self.format)

        self.chapters = QListWidget()
        for c in snapshot.chapters:
            counts = model.counts(c.index)
            total = sum(counts.values())
            done = counts.get("done", 0)
            nodes = [model.sentence(s.id) for s in c.sentences]
            seconds = sum(n.duration or 0.0 for n in nodes if n is not None and n.state == "done")
            complete = done == total and total > 0
            why = fmt_duration(seconds) if complete else (
                f"{counts.get('failed', 0)} failed" if counts.get("failed") else f"{total - done} of {total} not rendered")
            item = QListWidgetItem(f"{c.index + 1}. {c.title}  \u2014  {why}")
            item.setData(Qt.ItemDataRole.UserRole, c.index)
            if complete:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if not c.front_matter else Qt.CheckState.Unchecked)
            else:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
                item.setToolTip("Render this chapter completely before exporting it")
            self.chapters.addItem(item)

        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("ready")
        self.status = QLabel("Only fully rendered chapters can be exported.")
        self.status.setWordWrap(True)
        self.export_btn = QPushButton("Export")
        self.export_btn.setDefault(True)
        self.export_btn.clicked.connect(self._export)
        self.open_btn = QPushButton("Open folder")
        self.open_btn.setVisible(False)
        self.open_btn.clicked.connect(self.open_folder)
        close = QPushButton("Close")
        close.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.export_btn)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Chapters:"))
        layout.addWidget(self.chapters, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self._sync_button()
        self.chapters.itemChanged.connect(lambda *_: self._sync_button())

    def checked_chapters(self) -> list[int]:
        out = []
        for i in range(self.chapters.count()):
            item = self.chapters.item(i)
            if item.flags() & Qt.ItemFlag.ItemIsUserCheckable and item.checkState() == Qt.CheckState.Checked:
                out.append(int(item.data(Qt.ItemDataRole.UserRole)))
        return out

    def set_format(self, fmt: str) -> None:
        self.format.setCurrentIndex(max(0, self.format.findData(fmt)))

    def _sync_button(self) -> None:
        self.export_btn.setEnabled(bool(self.checked_chapters()) and bool(self.folder.text().strip()))

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export to folder", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def _export(self) -> None:
        chapters = self.checked_chapters()
        folder = self.folder.text().strip()
        if not chapters or not folder:
            return
        self.export_btn.setEnabled(False)
        self.open_btn.setVisible(False)
        self.progress.setRange(0, len(chapters))
        self.progress.setValue(0)
        self.progress.setFormat(f"0/{len(chapters)} chapters")
        self.status.setText("Exporting in the background\u2026 you can keep working.")
        self.exportRequested.emit(folder, self.format.currentData(), chapters)

    # ------------------------------------------------------------ results (GUI thread)

    def on_progress(self, p: ExportProgress) -> None:
        self.progress.setRange(0, max(1, p.total))
        self.progress.setValue(p.done)
        self.progress.setFormat(f"{p.done}/{p.total} chapters")
        if p.current:
            self.status.setText(f"Writing \u201c{p.current}\u201d\u2026")

    def on_done(self, p: ExportProgress) -> None:
        self.result_progress = p
        self.on_progress(p)
        self.status.setText(f"Wrote {len(p.files)} file(s), {fmt_duration(p.seconds)} of audio, to {self.folder.text()}.")
        self.open_btn.setVisible(True)
        self.export_btn.setEnabled(True)

    def on_error(self, err: ErrorInfo) -> None:
        self.progress.setFormat("failed")
        self.status.setText(f"Export failed: {err.message}")
        self.export_btn.setEnabled(True)

    def open_folder(self) -> None:
        self.open_url(QUrl.fromLocalFile(str(Path(self.folder.text()).resolve())))
