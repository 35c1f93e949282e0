"""The Cast dock's review list with real widgets and the bundled voice: a line that is not sure is
listed with its two most likely speakers; one click on the other one gives it to them, which renders
that line alone again; Edit > Undo gives it back (and its old audio)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from support.cast import CHAPTER
from support.gui import write_manuscript
from support.window import WAIT, open_and_wait, sentences, wait_jobs_done

from studio.project.cast import Casting, Performance
from studio.ui.main_window import MainWindow


def review_texts(window: MainWindow) -> list[str]:
    table = window.cast.review.table
    return [table.item(r, 0).text() for r in range(table.rowCount())]


def test_choosing_a_speaker_in_the_review_list_renders_only_that_line_and_is_undone(  # noqa: ANN001
        qtbot, window: MainWindow, tmp_path: Path) -> None:
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", CHAPTER, name="harbour.md"))
    panel, model = window.cast, window.book.model
    qtbot.waitUntil(lambda: panel.table.rowCount() == 2, timeout=WAIT)
    panel.enabled.setChecked(True)
    rows = sentences(window, 0)
    line = next(s for s in rows if s.text.startswith('"Then take the lamp'))
    tom = next(s for s in rows if s.text.startswith('"To the lighthouse,"'))
    qtbot.waitUntil(lambda: (model.sentence(line.id) or line).speaker == "Mary", timeout=WAIT)
    window.cast_ctl.set_casting("Tom", Casting(performance=Performance(pitch=-2.0)))  # Tom sounds like Tom
    qtbot.waitUntil(lambda: "pitch -2" in panel.table.item(0, 2).text(), timeout=WAIT)
    window.session.render_sentences([line.id, tom.id])
    wait_jobs_done(qtbot, window)

    # the untagged line of the exchange is listed (by turns: not sure), Mary first, Tom the other
    qtbot.waitUntil(lambda: any("Then take the lamp" in t for t in review_texts(window)), timeout=WAIT)
    row = next(i for i, t in enumerate(review_texts(window)) if "Then take the lamp" in t)
    table = panel.review.table
    assert (table.item(row, 1).text(), table.item(row, 2).text()) == ("Mary", "Tom")
    assert table.item(row, 3).text() == "turns in a dialogue"

    # one click on Tom: Tom says it
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualItemRect(table.item(row, 2)).center())
    qtbot.waitUntil(lambda: any(j.spec.label.startswith("Spoken by Tom") for j in window.queue.snapshot.jobs),
                    timeout=WAIT)
    job = next(j for j in window.queue.snapshot.jobs if j.spec.label.startswith("Spoken by Tom"))
    assert job.spec.sentence_ids == (line.id,)  # only that line renders again (Tom's own line keeps its audio)
    wait_jobs_done(qtbot, window)
    qtbot.waitUntil(lambda: model.sentence(line.id).speaker == "Tom", timeout=WAIT)
    qtbot.waitUntil(lambda: not any("Then take the lamp" in t for t in review_texts(window)), timeout=WAIT)

    window.session.undo()  # Edit > Undo: Mary again, and the line's old audio
    qtbot.waitUntil(lambda: model.sentence(line.id).speaker == "Mary", timeout=WAIT)
    undone = [j for j in window.queue.snapshot.jobs if j.spec.label.startswith("Undone")]
    assert [j.spec.sentence_ids for j in undone] == [(line.id,)]
    wait_jobs_done(qtbot, window)
    window.cast_ctl.refresh()
    qtbot.waitUntil(lambda: any("Then take the lamp" in t for t in review_texts(window)), timeout=WAIT)
