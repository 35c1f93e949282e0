"""Speed & pauses in the main window: new pauses render nothing and change the
lengths shown; a new speed makes every sentence pending.

Real widgets, real project files and SQLite, the real bundled voice through the
real model worker.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox
from support.gui import write_manuscript
from support.window import WAIT, open_and_wait, sentences, wait_jobs_done

from studio.core.speed import length_scale_of
from studio.project.store import Project
from studio.ui.book_model import LENGTH, STATE
from studio.ui.main_window import MainWindow
from studio.ui.pacing_dialog import PacingDialog

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]


def rendered_chapter(qtbot, window: MainWindow, tmp_path: Path) -> int:
    """The tiny book open, its chapter "Two" rendered; returns that chapter's index."""
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books"))
    chapter = next(c.index for c in window.session.snapshot.chapters if c.title == "Two")
    window.session.render_chapters([chapter])
    wait_jobs_done(qtbot, window)
    qtbot.waitUntil(lambda: all(s.state == "done" for s in sentences(window, chapter)), timeout=WAIT)
    return chapter


def open_dialog(window: MainWindow) -> PacingDialog:
    window.actions_.named["pacing"].trigger()
    dlg = window.pacing_dialog
    assert dlg.isVisible()
    return dlg


def save(qtbot, window: MainWindow, dlg: PacingDialog) -> None:
    with qtbot.waitSignal(window.session.settingsChanged, timeout=WAIT):
        dlg.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()
    qtbot.waitUntil(lambda: window.book.model.snapshot.timing.pauses == window.session.settings.pauses
                    and window.book.model.snapshot.timing.length_scale
                    == window.session.settings.synthesis.length_scale, timeout=WAIT)


def test_new_pauses_render_nothing_and_every_length_shown_follows(qtbot, window: MainWindow,
                                                                  tmp_path: Path) -> None:
    chapter = rendered_chapter(qtbot, window, tmp_path)
    model, session = window.book.model, window.session
    other = next(c.index for c in session.snapshot.chapters if c.index != chapter and c.sentences)
    shown = str(model.index(chapter, LENGTH).data())
    assert not shown.startswith("~")  # rendered: the exported length, pauses included
    before = {c.index: c.estimated_s for c in model.snapshot.chapters}
    jobs = len(session.queue.snapshot().jobs)

    dlg = open_dialog(window)
    dlg.pauses["paragraph"].setValue(4.0)
    dlg.pauses["title"].setValue(5.0)
    assert "render nothing again" in dlg.note.text()
    save(qtbot, window, dlg)

    assert session.settings.pauses.paragraph == 4.0 and session.settings.pauses.title == 5.0
    assert all(str(model.sentence_index(s.id).siblingAtColumn(STATE).data()) == "done"
               for s in sentences(window, chapter))
    assert len(session.queue.snapshot().jobs) == jobs  # nothing queued
    after = {c.index: c.estimated_s for c in model.snapshot.chapters}
    assert after[chapter] > before[chapter] + 5.0 and after[other] > before[other] + 5.0
    assert str(model.index(chapter, LENGTH).data()) != shown
    book = window.book
    book.tree.setCurrentIndex(book.proxy.mapFromSource(model.index(chapter, 0)))
    assert f"about {model.index(chapter, LENGTH).data()} when spoken" in window.inspector.info.text()
    with Project.open(session.snapshot.folder) as project:  # what is shown is what is stored
        assert all(r.state == "done" for r in project.sentences([chapter]))
        assert project.settings().pauses.paragraph == 4.0


def test_a_new_speed_makes_every_sentence_pending_and_back_finds_the_audio(qtbot, window: MainWindow,
                                                                           tmp_path: Path) -> None:
    chapter = rendered_chapter(qtbot, window, tmp_path)
    model, session = window.book.model, window.session
    other = next(c.index for c in session.snapshot.chapters if c.index != chapter and c.sentences)
    before = model.snapshot.chapters[other].estimated_s

    dlg = open_dialog(window)
    assert dlg.speed.value() == 1.0
    dlg.speed.setValue(1.25)
    assert "renders every sentence again" in dlg.note.text()
    save(qtbot, window, dlg)

    assert session.settings.synthesis.length_scale == length_scale_of(1.25)
    ids = [s.id for s in sentences(window, chapter)]
    assert all(str(model.sentence_index(i).siblingAtColumn(STATE).data()) == "pending" for i in ids)
    assert str(model.index(chapter, STATE).data()).split(";")[0] == f"0/{len(ids)} rendered"  # then the proof state
    assert str(model.index(chapter, LENGTH).data()).startswith("~")
    assert model.snapshot.chapters[other].estimated_s < before  # faster speech, shorter book

    dlg = open_dialog(window)
    assert dlg.speed.value() == pytest.approx(1.25)
    dlg.speed.setValue(1.0)
    save(qtbot, window, dlg)
    assert session.settings.synthesis.length_scale == 1.0
    assert all(str(model.sentence_index(i).siblingAtColumn(STATE).data()) == "done" for i in ids)
