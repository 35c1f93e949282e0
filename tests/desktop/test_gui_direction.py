"""Direction for one paragraph's sentences from the tree: a rate changes exactly those
sentences' cache keys (they render again, slower; nothing else does), a pause before and
after re-render nothing and lengthen the export by exactly that much; the tree shows it.

Real widgets, real project files and SQLite, the real bundled voice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox
from support.gui import write_manuscript
from support.gui import BOOK, exported_seconds
from support.window import WAIT, direction_dialog, open_and_wait, sentences, wait_jobs_done

from studio.project.direction import directions
from studio.project.store import Project
from studio.desktop.snapshot import estimate
from studio.ui.main_window import MainWindow

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]



def test_direction_changes_only_the_touched_keys_and_the_export_follows(qtbot, window: MainWindow,  # noqa: ANN001
                                                                         tmp_path: Path) -> None:
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", BOOK))
    session, model = window.session, window.book.model
    session.render_chapters([0, 1])
    wait_jobs_done(qtbot, window)
    folder = session.snapshot.folder
    with Project.open(folder) as project:
        before = {r.id: r for r in project.sentences()}
    before_file = exported_seconds(folder, tmp_path / "before")
    body = [s for s in sentences(window, 0) if s.paragraph is not None]
    touched = body[1:3]

    dlg = direction_dialog(window, [s.id for s in touched])  # the producer picks two sentences
    dlg.rate.setValue(0.8)
    dlg.before.setValue(0.4)
    dlg.after.setValue(1.0)
    dlg.render_now.setChecked(False)
    dlg.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()

    qtbot.waitUntil(lambda: model.sentence(touched[0].id).direction.rate == 0.8, timeout=WAIT)
    with Project.open(folder) as project:
        after = {r.id: r for r in project.sentences()}
        assert set(directions(project.db)) == {s.id for s in touched}
    changed = {i for i in before if before[i].expected_key != after[i].expected_key}
    assert changed == {s.id for s in touched}  # exactly the directed sentences
    assert all(after[i].state == "pending" for i in changed) and all(
        after[i].state == "done" for i in after if i not in changed)
    flags = str(model.sentence_index(touched[0].id).siblingAtColumn(3).data())
    assert "0.8x" in flags and "0.40 s before" in flags and "1.00 s after" in flags

    session.render_sentences([s.id for s in touched])
    qtbot.waitUntil(lambda: all(model.sentence(s.id).state == "done" for s in touched), timeout=WAIT)
    wait_jobs_done(qtbot, window)
    with Project.open(folder) as project:
        again = {r.id: r for r in project.sentences()}
    assert all(again[i].synth_count == (2 if i in changed else 1) for i in again)  # nothing else rendered
    for s in touched:  # read at 0.8x: longer (the voice's leading/trailing silence scales too)
        assert again[s.id].duration > before[s.id].duration * 1.1
    added_audio = sum(again[s.id].duration - before[s.id].duration for s in touched)
    pauses = session.settings.pauses
    added_pauses = 2 * 0.4 + (1.0 - pauses.sentence) * 2
    after_file = exported_seconds(folder, tmp_path / "after")
    assert after_file - before_file == pytest.approx(added_audio + added_pauses, abs=2e-3)
    chapter = session.snapshot.chapters[0]
    shown = estimate(chapter, session.snapshot.timing, [model.sentence(s.id) for s in chapter.sentences])
    assert shown == pytest.approx(after_file, abs=0.01)  # the tree's length is the file's
