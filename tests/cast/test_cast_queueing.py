"""What a cast change queues, with real widgets and the bundled voice: only the rendered sentences
whose audio the change replaces (a recast, a merge), nothing for a Voice dialog closed as it
was or a rename, and the Merge dialog proposes the character the producer means."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDialog, QInputDialog
from support.cast import CHAPTER
from support.gui import write_manuscript
from support.window import WAIT, open_and_wait, sentences, wait_jobs_done

from studio.desktop.cast import merge_proposal
from studio.project.cast import Casting, Performance
from studio.ui.cast_dock import CastingDialog
from studio.ui.main_window import MainWindow


def jobs(window: MainWindow, prefix: str) -> list:
    return [j for j in window.queue.snapshot.jobs if j.spec.label.startswith(prefix)]


def test_recast_and_merge_queue_exactly_the_changed_rendered_sentences(  # noqa: ANN001
        qtbot, window: MainWindow, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", CHAPTER, name="harbour.md"))
    panel, ctl = window.cast, window.cast_ctl
    qtbot.waitUntil(lambda: panel.table.rowCount() == 2, timeout=WAIT)
    panel.enabled.setChecked(True)
    rows = sentences(window, 0)
    mary = next(s for s in rows if s.text.startswith('"Where are you going'))
    mary_unrendered = next(s for s in rows if s.text.startswith('"Then take the lamp'))
    tom = next(s for s in rows if s.text.startswith('"To the lighthouse,"'))
    qtbot.waitUntil(lambda: window.book.model.sentence(mary.id).speaker == "Mary", timeout=WAIT)
    window.session.render_sentences([mary.id, tom.id])  # the rest of the chapter is never rendered
    wait_jobs_done(qtbot, window)

    # the Voice... dialog closed with OK and nothing changed: nothing is asked, nothing queued
    panel.table.selectRow(1)
    assert panel.selected_name() == "Mary"
    monkeypatch.setattr(CastingDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    with qtbot.assertNotEmitted(panel.castingChosen):
        panel.voice_button.click()
    ctl.set_casting("Mary", Casting())  # the same casting through the controller: no job either

    ctl.set_casting("Mary", Casting(performance=Performance(pitch=2.0)))
    qtbot.waitUntil(lambda: bool(jobs(window, "Recast Mary")), timeout=WAIT)
    assert [j.spec.label for j in jobs(window, "Recast")] == ["Recast Mary: 1 sentence"]
    assert jobs(window, "Recast Mary")[0].spec.sentence_ids == (mary.id,)  # not her unrendered line
    wait_jobs_done(qtbot, window)

    ctl.rename("Mary", "Mary Hale")  # a name is not a voice: nothing to render again
    ctl.merge("Mary Hale", "Tom")  # Tom's rendered line now has Mary's pitch
    qtbot.waitUntil(lambda: bool(jobs(window, "Merge Tom")), timeout=WAIT)
    assert not jobs(window, "Rename")
    job = jobs(window, "Merge Tom")[0]
    assert job.spec.label == "Merge Tom into Mary Hale: 1 sentence"
    assert job.spec.sentence_ids == (tom.id,)
    assert mary_unrendered.id not in job.spec.sentence_ids
    wait_jobs_done(qtbot, window)

    # the dock shows who is who: Tom is one of Mary Hale's names; Split... parts him again
    qtbot.waitUntil(lambda: panel.table.rowCount() == 1, timeout=WAIT)
    assert panel.table.item(0, 0).text() == "Mary Hale" and "Tom" in panel.table.item(0, 3).text().split(", ")
    panel.table.selectRow(0)
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a, **k: ("Tom", True)))
    panel.split_button.click()
    qtbot.waitUntil(lambda: bool(jobs(window, "Split Tom")), timeout=WAIT)
    assert jobs(window, "Split Tom")[0].spec.sentence_ids == (tom.id,)  # his line in his own voice again
    qtbot.waitUntil(lambda: panel.table.rowCount() == 2, timeout=WAIT)



def test_the_merge_dialog_proposes_the_character_meant() -> None:
    assert merge_proposal("Ahab", ["Stubb", "Captain Ahab", "Flask"]) == 1
    assert merge_proposal("Mr. Stubb", ["Captain Ahab", "Stubb"]) == 1
    assert merge_proposal("Flask", ["Stubb", "Captain Ahab"], selected=("Captain Ahab", "Flask")) == 1
