"""The main window for the GUI tests: made with the shared voice, opened on a file, waited on (no tests in here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from support.gui import shared_factory
from PySide6.QtCore import QSettings, Qt

from studio.desktop.session import ProjectSession
from studio.desktop.sinks import NullSink
from studio.desktop.snapshot import SentenceNode
from studio.ui.import_flow import BESIDE, PROJECTS_DIR_KEY
from studio.ui.main_window import MainWindow

WAIT = 120_000  # ms; generous for a loaded 2-core box


def make_window(qtbot, tmp_path: Path, engines: list | None = None, **session_kw) -> MainWindow:  # noqa: ANN001
    session_kw.setdefault("build", shared_factory(engines))
    session_kw.setdefault("sink_factory", lambda: NullSink(speed=8.0))
    session = ProjectSession(readout_interval=0.25, **session_kw)
    win = MainWindow(session, window_settings(tmp_path))
    win.proof.auto.setChecked(False)  # proof-listening after renders: tests/desktop/test_proof_gui.py
    qtbot.addWidget(win)
    win.setWindowState(Qt.WindowState.WindowNoState)  # the offscreen screen is small: the window starts maximized
    win.resize(1280, 800)
    win.show()
    return win


def window_settings(tmp_path: Path) -> QSettings:
    """The window's settings file of a test: its books keep their projects beside them (a producer
    is asked once for a folder of projects: tests/desktop/test_projects_folder.py)."""
    settings = QSettings(str(tmp_path / "studio.ini"), QSettings.Format.IniFormat)
    if settings.value(PROJECTS_DIR_KEY) is None:
        settings.setValue(PROJECTS_DIR_KEY, BESIDE)
    return settings


def open_and_wait(qtbot, win: MainWindow, path: Path) -> None:  # noqa: ANN001
    win.open_path(path)
    qtbot.waitUntil(lambda: win.session.snapshot is not None and win.book.model.rowCount() > 0, timeout=WAIT)


def sentences(win: MainWindow, chapter: int) -> list[SentenceNode]:
    return win.book.sentences_of_chapters([chapter])


def wait_jobs_done(qtbot, win: MainWindow) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: bool(win.queue.snapshot.jobs) and not win.queue.snapshot.active, timeout=WAIT)


def visible_rows(win: MainWindow) -> list[str]:
    proxy, out = win.book.proxy, []

    def walk(parent) -> None:  # noqa: ANN001
        for row in range(proxy.rowCount(parent)):
            idx = proxy.index(row, 0, parent)
            out.append(str(idx.data()))
            walk(idx)

    from PySide6.QtCore import QModelIndex

    walk(QModelIndex())
    return out


def big_book(chapters: int = 141, paragraphs: int = 12) -> str:
    """About 200k words: the size of Moby-Dick."""
    out = ["# The Big Book\n"]
    for c in range(1, chapters + 1):
        out.append(f"\n## Chapter {c}\n")
        for p in range(paragraphs):
            out.append("\n" + " ".join(
                f"Sailor {c}-{p}-{k} hauled the wet rope across the deck while the wind rose over the grey water."
                for k in range(7)) + "\n")
    out[-1] += "\nThe white whale surfaced once, far off, and was gone.\n"
    return "".join(out)


def direction_dialog(win: MainWindow, ids: list[int]):  # -> DirectionDialog
    """Select these sentences in the tree and choose Direction... from its menu, as a producer does."""
    from PySide6.QtWidgets import QApplication, QMenu

    from studio.ui.direction_dialog import DirectionDialog

    book, model = win.book, win.book.model
    book.select_sentence(ids[0])
    flags = book.tree.selectionModel().SelectionFlag
    for sid in ids[1:]:
        book.tree.selectionModel().select(book.proxy.mapFromSource(model.sentence_index(sid)),
                                          flags.Select | flags.Rows)
    book._menu(book.tree.visualRect(book.proxy.mapFromSource(model.sentence_index(ids[0]))).center())
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    next(a for a in menu.actions() if a.text() == "Direction\u2026").trigger()
    menu.close()
    dlg = win.direction_dialog
    assert isinstance(dlg, DirectionDialog) and dlg.ids == list(ids)
    return dlg


class RecordingSink(NullSink):
    """A device-less sink that keeps every block it played that was not silence."""

    def __init__(self) -> None:
        super().__init__(speed=8.0)
        self.heard: list[np.ndarray] = []

    def start(self, rate: int, pull) -> None:  # noqa: ANN001
        def keep(frames: int) -> np.ndarray:
            block = pull(frames)
            if block.any():
                self.heard.append(block.copy())
            return block

        super().start(rate, keep)

    def played(self, probe: np.ndarray) -> bool:
        """Whether these exact samples were played (in one piece)."""
        heard = list(self.heard)
        stream = np.concatenate(heard) if heard else np.zeros(0, np.float32)
        starts = np.flatnonzero(stream[: max(0, stream.size - probe.size + 1)] == probe[0])
        return any(np.array_equal(stream[i:i + probe.size], probe) for i in starts)
