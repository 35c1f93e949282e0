"""One chapter numbering and one duration estimate everywhere, for a book whose first
chapter is front matter: the tree, the queue, the tree's menu, the export dialog and
`studio inspect` (manuscript and project) agree.

Real widgets, real project files and SQLite, the real bundled voice through the
real model worker.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, QPoint
from PySide6.QtWidgets import QApplication, QMenu
from gui_support import FRONT
from gui_support import write_manuscript
from window_support import WAIT, open_and_wait, wait_jobs_done, window  # noqa: F401 - fixtures

from studio.cli import main as studio_main
from studio.engine.voice.catalog import get_voice
from studio.project.duration import book_estimates, chapter_estimates
from studio.project.numbering import chapter_labels
from studio.project.store import Project
from studio.text.importer import load_manuscript
from studio.ui.main_window import MainWindow

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]



def inspect_rows(capsys, target: Path) -> dict[str, tuple[str, str]]:  # noqa: ANN001
    """`studio inspect` run in-process: chapter name -> (#, duration)."""
    assert studio_main(["inspect", str(target)]) == 0
    out = capsys.readouterr().out
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^(\d+)\s+(\S.*?)\s{2,}(\d+)\s+(\d+:\d\d)", line)
        if m:
            rows[m.group(2)] = (m.group(1), m.group(4))
    return rows


def menu_texts(win: MainWindow, row: int) -> list[str]:
    """The tree's context menu on a chapter row, as the producer sees it."""
    book = win.book
    index = book.proxy.mapFromSource(book.model.index(row, 0, QModelIndex()))
    book.tree.setCurrentIndex(index)
    book._menu(book.tree.visualRect(index).center() + QPoint(1, 1))
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    texts = [a.text() for a in menu.actions()]
    menu.close()
    return texts


def test_front_matter_first_one_number_in_tree_queue_menu_dialog_and_inspect(
        qtbot, window: MainWindow, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    manuscript = write_manuscript(tmp_path / "books", FRONT)
    open_and_wait(qtbot, window, manuscript)
    session, model = window.session, window.book.model
    snap = session.snapshot
    assert snap.chapters[0].front_matter and not snap.chapters[0].included

    tree = [str(model.index(r, 0).data()) for r in range(model.rowCount())]
    assert tree[0].startswith("1. Dedication (") and tree[0].endswith("excluded)")
    assert tree[1:] == ["2. One", "3. Two", "4. Three"]  # the front matter keeps its number; nothing shifts

    assert "Render 3. Two" in menu_texts(window, 2)
    session.render_chapters([2])
    qtbot.waitUntil(lambda: bool(window.queue.model.jobs), timeout=WAIT)
    assert window.queue.model.jobs[0].spec.label == "3. Two"
    wait_jobs_done(qtbot, window)

    with Project.open(snap.folder) as project:
        labels = chapter_labels(project)
    assert [c.number for c in labels] == [1, 2, 3, 4] and labels[2].label == "3. Two"
    assert labels[0].status.endswith("excluded")

    rows = inspect_rows(capsys, Path(snap.folder))
    assert rows["Two"][0] == "3" and rows["Dedication"][0] == "1"

    window.open_export()
    dlg = window.export_dialog
    items = [dlg.chapters.item(i).text() for i in range(dlg.chapters.count())]
    assert items[2].startswith("3. Two  \u2014  ")
    tree_length = str(model.index(2, 4).data())  # rendered: the exact length, no "~"
    assert not tree_length.startswith("~") and items[2].endswith(tree_length)  # one estimate, dialog = tree
    assert rows["Two"][1] == tree_length  # and `studio inspect` on the project
    dlg.close()


def test_one_estimate_for_a_manuscript_its_new_project_and_the_tree(qtbot, window: MainWindow,  # noqa: ANN001
                                                                     tmp_path: Path, capsys) -> None:
    manuscript = write_manuscript(tmp_path / "books", FRONT)
    open_and_wait(qtbot, window, manuscript)
    snap = window.session.snapshot
    from_manuscript = book_estimates(load_manuscript(manuscript), get_voice(None).id)
    with Project.open(snap.folder) as project:
        from_project = chapter_estimates(project)
    from_tree = [c.estimated_s for c in snap.chapters]
    assert from_manuscript == pytest.approx(from_project, abs=0.01)
    assert from_tree == pytest.approx(from_project, abs=0.01)
    assert all(s > 1.0 for s in from_manuscript)
    rows = inspect_rows(capsys, manuscript)  # `studio inspect` on the manuscript: the voice's rate, not 155 wpm
    assert rows["Two"][0] == "3"
    m, s = rows["Two"][1].split(":")
    assert int(m) * 60 + int(s) == round(from_manuscript[2])
    window.open_export()
    window.export_dialog.set_format("mp3")
    assert window.export_dialog.publish.isChecked()  # MP3 is publish-ready unless the producer says not
    window.export_dialog.set_format("wav")
    assert not window.export_dialog.publish.isChecked()  # WAV stays as rendered (for an editor)
    window.export_dialog.close()
