"""One chapter numbering and one duration estimate everywhere, for a book whose first
chapters are front matter: the tree, the queue, the tree's menu, the export dialog,
`studio inspect` (manuscript and project) and the exported files (names, MP3 track
tags, the manifest; from the window and from `studio export`) agree.

Real widgets, real project files and SQLite, the real bundled voice through the
real model worker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, QPoint
from PySide6.QtWidgets import QApplication, QMenu
from support.gui import FRONT
from support.gui import write_manuscript
from support.window import WAIT, open_and_wait, wait_jobs_done

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


def menu_texts(win: MainWindow, row: int, trigger: str | None = None) -> list[str]:
    """The tree's context menu on a chapter row, as the producer sees it (``trigger``: click that action)."""
    book = win.book
    index = book.proxy.mapFromSource(book.model.index(row, 0, QModelIndex()))
    book.tree.setCurrentIndex(index)
    book._menu(book.tree.visualRect(index).center() + QPoint(1, 1))
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    texts = [a.text() for a in menu.actions()]
    if trigger is not None:
        next(a for a in menu.actions() if a.text() == trigger).trigger()
    menu.close()
    return texts


#: Three chapters of front matter (left out by default), then the story.
FRONT_THREE = """# Keeper

## Copyright

Copyright 2025 A. Author.

## Dedication

For the keepers of every light.

## Epigraph

The sea remembers.

## Chapter 1

The lamp was lit at dusk. The boats came home.

## Chapter 2

Fog rolled in. The horn sounded twice.
"""


def number_of(name: str) -> int:
    """A file name's leading number: ``"04 - Chapter 1.mp3"`` -> 4."""
    return int(re.match(r"^(\d+) - ", name).group(1))  # type: ignore[union-attr]


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


def test_front_matter_first_files_and_track_tags_carry_the_trees_numbers(
        qtbot, window: MainWindow, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from mutagen.id3 import ID3

    manuscript = write_manuscript(tmp_path / "books", FRONT_THREE, "keeper.md")
    open_and_wait(qtbot, window, manuscript)
    session, model = window.session, window.book.model
    snap = session.snapshot
    assert [(c.front_matter, c.included) for c in snap.chapters] == [(True, False)] * 3 + [(False, True)] * 2
    total = len(snap.chapters)  # 5: the book's chapter count, the highest number

    tree = {r + 1: str(model.index(r, 0).data()) for r in range(model.rowCount())}
    # the book's own "Chapter 1" is not numbered twice ("4. Chapter 1"): the one number is the track's
    assert tree[4] == "Chapter 1 (track 4)" and tree[5] == "Chapter 2 (track 5)"

    jobs: dict[int, str] = {}
    for row, number in ((3, 4), (4, 5)):  # each chapter rendered from its own menu entry
        menu_texts(window, row, trigger=f"Render {tree[number]}")
        qtbot.waitUntil(lambda: len(window.queue.model.jobs) == len(jobs) + 1, timeout=WAIT)
        jobs[number] = window.queue.model.jobs[-1].spec.label
    assert jobs == {4: "Chapter 1 (track 4)", 5: "Chapter 2 (track 5)"}
    wait_jobs_done(qtbot, window)

    window.open_export()  # MP3, publish-ready (the default), credits and sample included
    dlg = window.export_dialog
    dlg.set_format("mp3")
    assert dlg.publishing() and dlg.checked_chapters() == [3, 4]
    dlg.folder.setText(str(tmp_path / "gui"))
    dlg.export_btn.click()
    qtbot.waitUntil(lambda: dlg.result_published is not None, timeout=WAIT)
    listing = {r[0]: r[-1] for r in (
        [dlg.results.item(r, c).text() for c in range(dlg.results.columnCount())] for r in range(dlg.results.rowCount()))}
    dlg.close()
    names = sorted(listing)
    assert names == ["00 - Opening credits.mp3", "04 - Chapter 1.mp3", "05 - Chapter 2.mp3",
                     "06 - Closing credits.mp3", "Keeper - Retail sample.mp3"]
    for name in ("04 - Chapter 1.mp3", "05 - Chapter 2.mp3"):
        n = number_of(name)
        trck = str(ID3(str(tmp_path / "gui" / name))["TRCK"])
        assert trck == f"{n}/{total + 1}"  # the tree's number over the book's count (+1: closing credits)
        assert tree[n] == f"{name[5:-4]} (track {n})" and jobs[n] == tree[n]  # tree, queue, file agree
        assert listing[name] == f"book chapter {n}"  # the dialog's result table says the same
        assert (tmp_path / "gui" / name.replace(".mp3", ".srt")).is_file()  # subtitles under the same number
    assert str(ID3(str(tmp_path / "gui" / "00 - Opening credits.mp3"))["TRCK"]) == f"0/{total + 1}"
    manifest = json.loads((tmp_path / "gui" / "manifest.json").read_text())
    assert {e["file"]: e["number"] for e in manifest["files"]} == {
        n: (None if "sample" in n else number_of(n)) for n in names}
    assert [e["book_chapters"] for e in manifest["files"] if e["kind"] == "chapter"] == [[4], [5]]

    capsys.readouterr()
    assert studio_main(["export", str(snap.folder), "-o", str(tmp_path / "cli"), "--format", "mp3"]) == 0
    printed = capsys.readouterr().out
    cli = sorted(p.name for p in (tmp_path / "cli").glob("*.mp3"))
    assert cli == names  # `studio export` names the files as the window did
    assert "04 - Chapter 1.mp3" in printed and "[book chapter 4]" in printed
    assert str(ID3(str(tmp_path / "cli" / "04 - Chapter 1.mp3"))["TRCK"]) == f"4/{total + 1}"

    window.open_export()  # the plain export (as rendered): the same numbers, total without credits
    dlg = window.export_dialog
    dlg.set_format("mp3")
    dlg.publish.setChecked(False)
    dlg.folder.setText(str(tmp_path / "plain"))
    dlg.export_btn.click()
    qtbot.waitUntil(lambda: dlg.result_progress is not None, timeout=WAIT)
    dlg.close()
    plain = sorted(p.name for p in (tmp_path / "plain").iterdir())
    assert plain == ["04 - Chapter 1.mp3", "05 - Chapter 2.mp3"]
    assert [str(ID3(str(tmp_path / "plain" / n))["TRCK"]) for n in plain] == [f"4/{total}", f"5/{total}"]
