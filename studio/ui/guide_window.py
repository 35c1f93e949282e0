"""Help > User Guide: the guide's pages (docs/*.md) shown inside the app.

Why not the desktop's browser: where no browser is registered (a fresh Linux install, a
locked-down machine) Qt's ``openUrl`` only logs "Unable to detect a launcher" and F1 did
nothing. Qt renders Markdown itself, so the guide is read here: a link to another page opens
it in the same window, a web link goes to the browser when there is one, and the first line
says where the pages and the log file are, for whoever wants them elsewhere.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from studio.desktop.logsetup import log_file_path

#: the guide's folder: one page per topic, beside the package in a source checkout or install
DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDE = DOCS / "index.md"


class GuideWindow(QDialog):
    """The guide's pages, with Back and Contents; not modal (the book stays usable beside it)."""

    def __init__(self, parent: QWidget | None = None, start: Path = GUIDE) -> None:
        super().__init__(parent)
        self.setWindowTitle("User guide \u2014 Audiobook Studio")
        self.page: Path | None = None
        self._history: list[Path] = []
        self.where = QLabel(f"The guide's pages are in {DOCS}; the log file is {log_file_path()}")
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(self.where.textInteractionFlags() | self.where.textInteractionFlags().TextSelectableByMouse)
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)  # every link is decided here: a page, a section, or the web
        self.text.anchorClicked.connect(self.follow)
        self.back = QPushButton("Back")
        self.back.clicked.connect(self.go_back)
        contents = QPushButton("Contents")
        contents.clicked.connect(lambda: self.show_page(GUIDE))
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        row = QHBoxLayout()
        for b in (self.back, contents):
            row.addWidget(b)
        row.addStretch(1)
        row.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.where)
        layout.addWidget(self.text, 1)
        layout.addLayout(row)
        self.resize(820, 640)
        self.show_page(start)

    def show_page(self, path: Path, *, remember: bool = True) -> bool:
        """Show one page (its pictures from its own folder); False when it is not there."""
        path = path.resolve()
        if not path.is_file():
            self.text.setPlainText(f"The page {path} is not installed here.")
            return False
        if remember and self.page is not None and self.page != path:
            self._history.append(self.page)
        self.page = path
        self.text.setSearchPaths([str(path.parent)])
        self.text.setMarkdown(path.read_text(encoding="utf-8"))
        self.back.setEnabled(bool(self._history))
        self.setWindowTitle(f"{path.stem.replace('-', ' ').capitalize()} \u2014 User guide")
        return True

    def go_back(self) -> None:
        if self._history:
            self.show_page(self._history.pop(), remember=False)

    def follow(self, url: QUrl) -> None:
        """A page of the guide opens here (its section too); anything else in the desktop's browser."""
        if url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
            return
        target = url.path()
        if target and self.page is not None:
            self.show_page(self.page.parent / target)
        if url.fragment():
            self.text.scrollToAnchor(url.fragment())


def open_guide(window: QWidget) -> GuideWindow:
    """Help > User Guide (F1): the guide's contents in the app, one window kept and raised."""
    guide = getattr(window, "guide_window", None)
    if not isinstance(guide, GuideWindow):
        guide = GuideWindow(window)
        window.guide_window = guide  # type: ignore[attr-defined] - kept: a dialog without an owner reference is collected
    guide.show()
    guide.raise_()
    return guide
