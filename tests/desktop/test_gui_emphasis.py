"""Emphasis from the direction dialog: the producer clicks a word of a sentence, the
sentence alone renders again (its key is the only one that changes), the tree says
which word is stressed; "Clear emphasis" takes it away and the plain audio comes back
from the cache without rendering.

Real widgets, real project files and SQLite, the real bundled voice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from support.gui import BOOK, write_manuscript
from support.window import WAIT, direction_dialog, open_and_wait, sentences, wait_jobs_done

from studio.engine.emphasis import HEARD_ON
from studio.stack.build import effective_preset
from studio.project.direction import Direction
from studio.project.emphasis import emphases
from studio.project.store import Project
from studio.desktop.snapshot import SentenceNode
from studio.ui.direction_dialog import DirectionDialog
from studio.ui.main_window import MainWindow

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]


def _click_ok(dlg: DirectionDialog) -> None:
    dlg.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()


def test_the_dialog_says_when_the_project_renders_stress_plainly(qtbot) -> None:  # noqa: ANN001
    from studio.core.triton_target import TritonTarget
    from studio.engine.voice.catalog import get_voice
    from studio.project.opening import new_project_settings
    from studio.desktop.preset_words import emphasis_note

    settings = new_project_settings(get_voice(None))
    assert emphasis_note(settings) == "Checked words are said longer and louder."  # fp32-cpu says them
    note = emphasis_note(settings.with_changes(preset="fp32-torch"))
    assert "with preset fp32-torch they are rendered plainly" in note and all(name in note for name in HEARD_ON)
    triton = settings.with_changes(triton=TritonTarget(servers=("localhost:8001",)))
    assert "with Triton servers they are rendered plainly" in emphasis_note(triton)
    node = SentenceNode(id=7, chapter=0, paragraph=0, index=0, text="Say it again.", language="en", was_split=False,
                        state="done", reason=None, cache_key=None, expected_key="k", duration=1.0, synth_count=1,
                        direction=Direction(emphasis=(1,)))
    other = SentenceNode(id=8, chapter=0, paragraph=0, index=1, text="Then go.", language="en", was_split=False,
                         state="done", reason=None, cache_key=None, expected_key="k2", duration=1.0, synth_count=1)
    dlg = DirectionDialog([node, other], None, note)  # a paragraph's two sentences
    qtbot.addWidget(dlg)
    assert dlg.stress_note.text() == note
    assert [dlg.words.item(k).text() for k in range(dlg.words.count())] == ["Say", "it", "again.", "\u2016", "Then", "go."]
    assert dlg.stressed() == {7: (1,), 8: ()}  # the stored stress shows checked
    dlg.words.item(5).setCheckState(Qt.CheckState.Checked)
    assert dlg.stressed() == {7: (1,), 8: (1,)}
    dlg.clear_stress.click()
    assert dlg.stressed() == {7: (), 8: ()}


def test_stress_a_word_from_the_dialog_then_clear_it(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", BOOK))
    session, model = window.session, window.book.model
    session.render_chapters([0])
    wait_jobs_done(qtbot, window)
    folder = session.snapshot.folder
    with Project.open(folder) as project:
        before = {r.id: r for r in project.sentences()}
    target = next(s for s in sentences(window, 0) if s.text == "The sun was out.")

    dlg = direction_dialog(window, [target.id])
    words = [dlg.words.item(k).text() for k in range(dlg.words.count())]
    assert words == ["The", "sun", "was", "out."]
    assert all(dlg.words.item(k).checkState() == Qt.CheckState.Unchecked for k in range(4))
    assert effective_preset(session.settings).name in HEARD_ON  # the bundled voice's preset says it
    assert "plainly" not in dlg.stress_note.text()
    sun = dlg.words.item(1)
    qtbot.mouseClick(dlg.words.viewport(), Qt.MouseButton.LeftButton, pos=dlg.words.visualItemRect(sun).center())
    assert sun.checkState() == Qt.CheckState.Checked  # a click on the word checks it
    assert dlg.stressed() == {target.id: (1,)}
    assert dlg.render_now.isChecked()
    _click_ok(dlg)

    qtbot.waitUntil(lambda: model.sentence(target.id).direction.emphasis == (1,), timeout=WAIT)
    flags = str(model.sentence_index(target.id).siblingAtColumn(3).data())
    assert "stress: sun" in flags
    tip = str(model.sentence_index(target.id).data(Qt.ItemDataRole.ToolTipRole))
    assert "The <b><u>sun</u></b> was out." in tip
    qtbot.waitUntil(lambda: model.sentence(target.id).synth_count == 2 and model.sentence(target.id).state == "done",
                    timeout=WAIT)
    wait_jobs_done(qtbot, window)
    with Project.open(folder) as project:
        assert emphases(project.db) == {target.id: (1,)}
        after = {r.id: r for r in project.sentences()}
    assert {i for i in before if before[i].expected_key != after[i].expected_key} == {target.id}
    assert all(after[i].synth_count == before[i].synth_count + (i == target.id) for i in after)
    assert after[target.id].duration > before[target.id].duration  # the stressed word is said longer

    dlg = direction_dialog(window, [target.id])  # the dialog shows the stress; Clear emphasis removes it
    assert dlg.words.item(1).checkState() == Qt.CheckState.Checked
    dlg.clear_stress.click()
    assert dlg.stressed() == {target.id: ()}
    _click_ok(dlg)
    qtbot.waitUntil(lambda: model.sentence(target.id).direction.emphasis == (), timeout=WAIT)
    qtbot.waitUntil(lambda: model.sentence(target.id).state == "done", timeout=WAIT)
    wait_jobs_done(qtbot, window)
    assert "stress" not in str(model.sentence_index(target.id).siblingAtColumn(3).data())
    with Project.open(folder) as project:
        assert emphases(project.db) == {}
        last = {r.id: r for r in project.sentences()}
    assert last[target.id].expected_key == before[target.id].expected_key  # the plain audio again
    assert last[target.id].synth_count == 2 and last[target.id].state == "done"  # from the cache
