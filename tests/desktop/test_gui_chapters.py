"""Merging and splitting chapters from the tree's menus: real window, project and voice.

The tree must move rows in place (expanded chapters and the selection stay) and
rendered sentences must stay rendered: a merge or split re-renders nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QMenu
from support.gui import TINY, write_manuscript
from support.window import WAIT, open_and_wait, wait_jobs_done
from support.epub import epub3_single_file

from studio.project.store import Project
from studio.ui.main_window import MainWindow

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]


def menu_texts(win: MainWindow, source: QModelIndex) -> list[str]:
    """Open the tree's context menu on ``source`` (a model index) and return its entries."""
    book = win.book
    idx = book.proxy.mapFromSource(source)
    book.tree.scrollTo(idx)
    book._menu(book.tree.visualRect(idx).center())
    menu = book.findChildren(QMenu, options=Qt.FindChildOption.FindDirectChildrenOnly)[-1]
    texts = [a.text() for a in menu.actions()]
    menu.close()
    return texts


def trigger(win: MainWindow, source: QModelIndex, text: str) -> None:
    book = win.book
    idx = book.proxy.mapFromSource(source)
    book.tree.scrollTo(idx)
    book._menu(book.tree.visualRect(idx).center())
    menu = book.findChildren(QMenu, options=Qt.FindChildOption.FindDirectChildrenOnly)[-1]
    next(a for a in menu.actions() if a.text() == text).trigger()
    menu.close()


def names(win: MainWindow) -> list[str]:
    return [str(win.book.model.index(r, 0).data()) for r in range(win.book.model.rowCount())]


def test_merge_and_split_from_the_menus_keep_audio_rows_and_selection(
        qtbot, window: MainWindow, tmp_path: Path) -> None:
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", TINY))
    book, model, session = window.book, window.book.model, window.session
    session.render_chapters([0, 1])
    wait_jobs_done(qtbot, window)
    rendered = {s.id for c in (0, 1) for s in model.snapshot.chapters[c].sentences}
    assert all(model.sentence(i).state == "done" for i in rendered)
    three = model.snapshot.chapters[2].sentences[1].id
    book.tree.expand(book.proxy.mapFromSource(model.index(2, 0)))  # Three, expanded: it stays so
    book.select_sentence(three)

    assert "Merge with next chapter" not in menu_texts(window, model.index(2, 0))  # the last chapter
    session.pause()  # a waiting chapter render names chapters by position: no merge until it is done
    job = session.render_chapters([2])
    trigger(window, model.index(0, 0), "Merge with next chapter")
    assert window.errors and "while chapter renders are queued" in window.errors[-1].message
    assert model.rowCount() == 3
    session.cancel(job)
    session.resume()
    qtbot.waitUntil(lambda: not window.queue.snapshot.active, timeout=WAIT)
    trigger(window, model.index(0, 0), "Merge with next chapter")
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=WAIT)
    assert names(window) == ["1. One", "2. Three"]
    assert {s.id for s in model.snapshot.chapters[0].sentences} == rendered
    assert all(model.sentence(i).state == "done" for i in rendered)  # nothing to render again
    assert model.counts(0)["done"] == len(rendered)
    current = book.proxy.mapToSource(book.tree.currentIndex())
    assert model.node(current).id == three  # the selection moved with its sentence
    assert book.tree.isExpanded(book.proxy.mapFromSource(model.index(1, 0)))
    assert not window.queue.snapshot.active  # no job was queued

    one = model.index(0, 0)
    book.tree.expand(book.proxy.mapFromSource(one))
    assert "Split chapter here" not in menu_texts(window, model.index(0, 0, one))  # the first paragraph
    heading_two = model.index(2, 0, one)
    assert model.node(heading_two).text == "Two"
    trigger(window, heading_two, "Split chapter here")
    qtbot.waitUntil(lambda: model.rowCount() == 3, timeout=WAIT)
    assert names(window) == ["1. One", "2. Two", "3. Three"]
    assert all(model.sentence(i).state == "done" for i in rendered)
    assert not window.queue.snapshot.active
    with Project.open(session.snapshot.folder) as project:
        assert [c.name for c in project.chapter_control.all()] == ["One", "Two", "Three"]
        assert project.counts([0, 1])["done"] == len(rendered)


def test_a_contents_page_is_shown_excluded_with_its_reason_and_can_be_included(
        qtbot, window: MainWindow, tmp_path: Path) -> None:
    (tmp_path / "books").mkdir()
    open_and_wait(qtbot, window, epub3_single_file(tmp_path / "books" / "one.epub"))
    model = window.book.model
    assert names(window)[:3] == ["1. Contents (table of contents, excluded)", "2. One File (front matter, excluded)",
                                 "Part One (track 3)"]
    trigger(window, model.index(0, 0), "Include in the book")
    qtbot.waitUntil(lambda: model.snapshot.chapters[0].included, timeout=WAIT)
    assert names(window)[0] == "1. Contents (table of contents)"  # included, still said what it is


def test_the_waveform_follows_a_merge_of_the_chapter_it_shows(qtbot, window: MainWindow, tmp_path: Path) -> None:
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", TINY))
    book, model, session = window.book, window.book.model, window.session
    session.render_chapters([0, 1])
    wait_jobs_done(qtbot, window)
    first = {s.id for s in model.snapshot.chapters[0].sentences}
    both = first | {s.id for s in model.snapshot.chapters[1].sentences}
    book.tree.setCurrentIndex(book.proxy.mapFromSource(model.index(0, 0)))
    qtbot.waitUntil(lambda: window.wave.data is not None
                    and {s.sentence_id for s in window.wave.data.spans} == first, timeout=WAIT)
    trigger(window, model.index(0, 0), "Merge with next chapter")
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=WAIT)
    qtbot.waitUntil(lambda: {s.sentence_id for s in window.wave.data.spans} == both, timeout=WAIT)


def test_an_unrendered_chapters_waveform_is_as_long_as_its_estimate(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """Unrendered sentences are drawn as long as the duration estimate predicts: the waveform
    and the tree's length column tell the producer the same thing."""
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", TINY))
    book, model = window.book, window.book.model
    book.tree.setCurrentIndex(book.proxy.mapFromSource(model.index(0, 0)))
    chapter = model.snapshot.chapters[0]
    qtbot.waitUntil(lambda: window.wave.data is not None and len(window.wave.data.spans) == len(chapter.sentences),
                    timeout=WAIT)
    assert not any(span.rendered for span in window.wave.data.spans)
    pauses = window.session.settings.pauses  # the file ends with silence the waveform does not draw
    drawn = chapter.estimated_s - pauses.paragraph - pauses.chapter_end
    assert window.wave.data.duration == pytest.approx(drawn, abs=0.01)  # the same predictions, laid out alike
