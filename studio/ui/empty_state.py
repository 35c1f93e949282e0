"""What the window shows before a project is open: how to start, and where you were.

Why: an empty tree says nothing to a new user. This page offers the two ways
in (import a manuscript, open the bundled sample), says that a file can be
dropped on the window, and lists the recent projects to pick up where one left
off. It only emits requests; the window opens things.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget

from studio.text.importer import SUPPORTED_SUFFIXES

#: the sample manuscript shipped with the studio
SAMPLE_BOOK = Path(__file__).resolve().parents[2] / "resources" / "sample.md"


class EmptyState(QWidget):
    importRequested = Signal()
    sampleRequested = Signal()
    openRequested = Signal(str)  # a recent project folder

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        title = QLabel("<h2>Start an audiobook</h2>")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.import_btn = QPushButton("Import a manuscript\u2026")
        self.import_btn.setToolTip("A manuscript file; its project folder is made beside it")
        self.import_btn.clicked.connect(self.importRequested)
        self.sample_btn = QPushButton("Open the sample book")
        self.sample_btn.setToolTip("A three-chapter story with a French passage and a long sentence: try everything on it")
        self.sample_btn.clicked.connect(self.sampleRequested)
        self.sample_btn.setEnabled(SAMPLE_BOOK.is_file())
        for b in (self.import_btn, self.sample_btn):
            b.setMinimumHeight(36)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.import_btn)
        buttons.addWidget(self.sample_btn)
        buttons.addStretch(1)
        kinds = " ".join(SUPPORTED_SUFFIXES)
        self.hint = QLabel(f"or drop a manuscript ({kinds}) or a project folder anywhere on this window")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)  # never wider than the window (a laptop screen)
        self.hint.setStyleSheet("color: #616161;")
        self.recent_title = QLabel("<b>Recent projects</b>")
        self.recent = QListWidget()
        self.recent.setMaximumWidth(640)
        self.recent.itemActivated.connect(lambda item: self.openRequested.emit(item.data(Qt.ItemDataRole.UserRole)))
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(title)
        layout.addLayout(buttons)
        layout.addWidget(self.hint)
        layout.addSpacing(24)
        layout.addWidget(self.recent_title, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(self.recent, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)

    def set_recent(self, folders: list[str]) -> None:
        self.recent.clear()
        for folder in folders:
            item = QListWidgetItem(f"{Path(folder).name}   \u2014   {folder}")
            item.setData(Qt.ItemDataRole.UserRole, folder)
            item.setToolTip("Double-click (or Enter) to open")
            self.recent.addItem(item)
        self.recent_title.setVisible(bool(folders))
        self.recent.setVisible(bool(folders))
