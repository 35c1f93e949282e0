"""The Edit and Help menus (issue 41, point 2): Undo / Redo of the producer's edits through the
window, kept across a restart of the app; Find (Ctrl+F) over text and spoken forms; the user
guide (shown in the app: no web browser needed) and the shortcuts; Alt+P opens Project."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QMenu
from support.gui import TINY, write_manuscript
from support.window import WAIT, make_window, open_and_wait

from studio.desktop.logsetup import log_file_path
from studio.ui.guide_window import DOCS, GUIDE, GuideWindow
from studio.ui.help_menu import shortcut_rows
from studio.ui.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("private_dirs")


def text_of(window: MainWindow, sid: int) -> str:
    return next(s.text for c in window.session.snapshot.chapters for s in c.sentences if s.id == sid)


def test_undo_and_redo_through_the_window_and_after_a_restart(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", TINY))
    session, acts = window.session, window.actions_.named
    sid = next(s.id for c in session.snapshot.chapters for s in c.sentences if s.text == "It was warm.")
    session.edit_sentence(sid, "It was very warm.", rerender=False)
    qtbot.waitUntil(lambda: text_of(window, sid) == "It was very warm.", timeout=WAIT)
    qtbot.waitUntil(lambda: acts["undo"].text() == "&Undo sentence edit", timeout=WAIT)
    session.set_chapter_included(1, False)
    qtbot.waitUntil(lambda: acts["undo"].text() == "&Undo chapter exclusion", timeout=WAIT)
    assert acts["undo"].shortcut() == QKeySequence(QKeySequence.StandardKey.Undo)

    acts["undo"].trigger()  # the chapter comes back
    qtbot.waitUntil(lambda: session.snapshot.chapters[1].included, timeout=WAIT)
    assert acts["redo"].text() == "&Redo chapter exclusion" and "Undone: chapter exclusion" in \
        window.statusBar().currentMessage()
    folder = session.snapshot.folder
    window.close()

    again = make_window(qtbot, tmp_path / "restart")  # a new start of the app on the same project
    open_and_wait(qtbot, again, Path(folder))
    named = again.actions_.named
    qtbot.waitUntil(lambda: named["undo"].text() == "&Undo sentence edit", timeout=WAIT)
    assert named["redo"].text() == "&Redo chapter exclusion"
    named["undo"].trigger()
    qtbot.waitUntil(lambda: text_of(again, sid) == "It was warm.", timeout=WAIT)
    named["redo"].trigger()
    qtbot.waitUntil(lambda: text_of(again, sid) == "It was very warm.", timeout=WAIT)
    again.close()


def test_find_searches_text_and_spoken_forms(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    book_text = TINY.replace("A bird sang.", "Dr. Smith sang.")
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", book_text))
    book = window.book
    window.actions_.named["find"].trigger()
    assert book.search.hasFocus() or QApplication.focusWidget() is book.search
    qtbot.keyClicks(book.search, "doctor")  # what the voice says for "Dr."
    qtbot.waitUntil(lambda: book.proxy.matches is not None and book.proxy.matches.needle == "doctor", timeout=WAIT)
    found = [key for key in book.proxy.matches.rows if key[0] == "s"]
    assert len(found) == 1 and text_of(window, found[0][1]) == "Dr. Smith sang."


def test_help_has_the_guide_and_the_shortcuts_and_alt_p_is_project(qtbot, window: MainWindow, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr("PySide6.QtGui.QDesktopServices.openUrl", lambda url: pytest.fail(f"a browser opened {url}"))
    window.actions_.named["guide"].trigger()  # F1: the guide in the app, whether or not a browser is registered
    guide = window.guide_window
    assert isinstance(guide, GuideWindow) and guide.isVisible() and guide.page == GUIDE.resolve()
    assert str(DOCS) in guide.where.text() and str(log_file_path()) in guide.where.text()  # where the files are
    first = guide.text.toPlainText()
    assert "Audiobook Studio" in first or "guide" in first.lower()
    link = next(line.split("](", 1)[1].split(")", 1)[0] for line in GUIDE.read_text().splitlines()
                if "](" in line and ".md" in line.split("](", 1)[1].split(")", 1)[0])
    guide.follow(QUrl(link))  # a link to another page opens it in the same window, and Back returns
    assert guide.page == (GUIDE.parent / link.split("#")[0]).resolve() and guide.text.toPlainText() != first
    guide.go_back()
    assert guide.page == GUIDE.resolve() and not guide.back.isEnabled()
    guide.close()
    rows = dict((what, keys) for keys, what in shortcut_rows(window.actions_.named))
    assert rows["Undo"] == QKeySequence(QKeySequence.StandardKey.Undo).toString(QKeySequence.SequenceFormat.NativeText)
    assert "Find" in rows and "Render Chapter" in rows and "Space" in dict(shortcut_rows({}))
    window.actions_.named["shortcuts"].trigger()
    assert window.shortcuts_dialog.isVisible()
    window.shortcuts_dialog.close()
    titles = [a.text() for a in window.menuBar().actions()]
    mnemonics = [t[t.index("&") + 1].lower() for t in titles if "&" in t]
    assert len(mnemonics) == len(set(mnemonics)) == len(titles)  # each Alt+letter opens one menu
    project = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Project")
    assert isinstance(project, QMenu) and "&P" in project.title()
