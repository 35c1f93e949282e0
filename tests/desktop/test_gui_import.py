"""File > Import: the old book is cleared at once, the project goes where the producer
says (the folder offered next time), progress is shown and Cancel leaves nothing behind.

Real widgets, real files, real SQLite; only the two file choosers are answered by the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QPushButton
from support.gui import TINY, write_manuscript
from support.window import WAIT, make_window, open_and_wait

from studio.core.errors import Cancelled
from studio.project.store import Project
from studio.desktop.importing import ImportWatch
from studio.text.importer import load_manuscript
from studio.ui.import_flow import PROJECTS_DIR_KEY

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]

#: a longer book: many chapters, so the import has many steps to show (and to cancel between)
MANY = "# Many Chapters\n\n" + "\n\n".join(
    f"## Chapter {n}\n\n" + " ".join(f"Sentence {k} of chapter {n} is here." for k in range(1, 30))
    for n in range(1, 121))



def answer(win, manuscript: Path, folder: Path, asked: list[str]) -> None:  # noqa: ANN001
    win.importer.choose_manuscript = lambda start: str(manuscript)
    win.importer.choose_folder = lambda start: (asked.append(start), str(folder))[1]


def test_import_asks_where_to_keep_the_project_remembers_it_and_clears_the_old_book_at_once(
        qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "first", TINY, "first.md"))
    other = write_manuscript(tmp_path / "books", TINY.replace("Tiny Book", "Second Book"), "second.md")
    projects, asked = tmp_path / "projects", []
    projects.mkdir()
    answer(window, other, projects, asked)
    window.actions_.named["import"].trigger()
    assert window.session.snapshot is None and window.pages.currentWidget() is window.empty  # cleared at once
    assert window.book.model.rowCount() == 0
    qtbot.waitUntil(lambda: window.session.snapshot is not None, timeout=WAIT)
    assert Path(window.session.snapshot.folder) == projects / "second.studio"
    assert not (tmp_path / "books" / "second.studio").exists()  # nothing written beside the manuscript
    assert asked == [str(tmp_path / "books")]  # first time: the manuscript's folder is offered
    assert window.qsettings.value(PROJECTS_DIR_KEY) == str(projects)
    assert window.importer.dialog is None  # the progress dialog closed itself

    window.actions_.named["new"].trigger()  # New Project is the same flow: the remembered folder is offered
    qtbot.waitUntil(lambda: window.session.snapshot is not None, timeout=WAIT)
    assert asked[-1] == str(projects) and Path(window.session.snapshot.folder) == projects / "second.studio"


def test_import_shows_its_steps_and_cancel_leaves_nothing(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    book = write_manuscript(tmp_path / "books", MANY, "many.md")
    steps: list = []
    window.importer.start(book, tmp_path / "projects" / "many.studio")
    window.importer.watch.stepped.connect(steps.append)
    window.importer.dialog.findChild(QPushButton).click()  # the producer presses Cancel at once
    qtbot.waitUntil(lambda: window.importer.dialog is None, timeout=WAIT)
    assert "Import cancelled" in window.statusBar().currentMessage()
    assert window.errors == []  # a cancel is no error
    assert not (tmp_path / "projects" / "many.studio").exists() and window.session.snapshot is None

    steps.clear()
    window.importer.start(book, tmp_path / "projects" / "many.studio")
    window.importer.watch.stepped.connect(steps.append)  # (the first step may have gone by already)
    qtbot.waitUntil(lambda: window.session.snapshot is not None, timeout=WAIT)
    stages = [s.stage for s in steps]
    # reading, each chapter's languages (two passes: the bar moves through a long book's detection), its
    # sentences, saving
    assert window.importer.watch.steps == 1 + 120 + 120 + 120 + 1
    assert stages.count("Detecting languages") == 120
    assert stages.count("Splitting sentences") == 120 and stages[-1] == "Saving the project"
    assert Project.is_project(tmp_path / "projects" / "many.studio")


def test_the_import_stops_at_the_next_step_after_cancel(tmp_path: Path) -> None:
    """The text layer itself: a progress callback that raises Cancelled stops load_manuscript."""
    book = write_manuscript(tmp_path, MANY, "many.md")
    seen: list[str] = []

    def progress(stage: str, done: int, total: int) -> None:
        seen.append(stage)
        if stage == "Splitting sentences" and done == 3:
            raise Cancelled("stop")

    with pytest.raises(Cancelled):
        load_manuscript(book, progress=progress)
    assert seen[-1] == "Splitting sentences" and seen.count("Splitting sentences") == 4
    watch = ImportWatch()
    watch.cancel()
    with pytest.raises(Cancelled):
        watch("Reading the manuscript", 0, 1)


BOOK_WITH_FRONT = """# Whale Book

## Contents

One. Two.

## Epigraph

The sea is the same everywhere, said an old sailor.

## Dedication

For everyone who ever went to sea.

## Chapter 1. Loomings

Call me Ishmael. Some years ago I went to sea.

## Chapter 2. The Carpet-Bag

I stuffed a shirt or two into my old carpet-bag.
"""


def test_reading_the_front_matter_is_one_choice_for_the_book_contents_stay_out(
        qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    from studio.project.front_matter import front_kind

    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", BOOK_WITH_FRONT, "whale.md"))
    snap = window.session.snapshot
    assert [c.front_matter for c in snap.chapters[:3]] == [True, True, True]
    assert [c.included for c in snap.chapters] == [False, False, False, True, True]  # the import's default
    action = window.actions_.named["read_front"]
    assert not action.isChecked()
    window.session.set_chapter_included(2, False)  # the producer decided the dedication by hand
    action.trigger()  # Project > Read Front Matter
    qtbot.waitUntil(lambda: window.session.snapshot.read_front, timeout=WAIT)
    model = window.book.model
    rows = [str(model.index(r, 0).data()) for r in range(model.rowCount())]
    assert rows[0] == "1. Contents (front matter, excluded)" and rows[1] == "2. Epigraph (front matter)"
    assert [c.included for c in window.session.snapshot.chapters] == [False, True, False, True, True]
    with Project.open(window.session.snapshot.folder) as project:
        assert project.chapter_control.included() == [1, 3, 4]  # Render Book and export follow
    assert [front_kind(t) for t in ("Table of Contents", "Copyright", "Title Page", "Epigraph", "EXTRACTS")] == \
        ["contents", "copyright", "title", "readable", "readable"]
    window.close()
    again = make_window(qtbot, tmp_path)  # the choice is the book's: stored in the project
    open_and_wait(qtbot, again, Path(snap.folder))
    assert again.actions_.named["read_front"].isChecked()
    again.close()
