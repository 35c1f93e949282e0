"""The Cast dock, the speaker in the tree and "Spoken by..." in a sentence's menu, with real widgets."""

from __future__ import annotations

from pathlib import Path

from support.gui import write_manuscript
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu
from support.cast import CHAPTER
from support.window import WAIT, open_and_wait, sentences

from studio.project.cast import Casting, Performance
from studio.project.store import Project
from studio.ui.main_window import MainWindow


def test_cast_dock_lists_casts_and_spoken_by_corrects_a_line(qtbot, window: MainWindow, tmp_path: Path,  # noqa: ANN001
                                                             monkeypatch) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", CHAPTER, name="harbour.md"))
    panel, model = window.cast, window.book.model
    qtbot.waitUntil(lambda: panel.table.rowCount() == 2, timeout=WAIT)
    assert [panel.table.item(r, 0).text() for r in range(2)] == ["Tom", "Mary"]
    assert not panel.enabled.isChecked()

    panel.enabled.setChecked(True)  # casting on: the tree shows who speaks
    line = next(s for s in sentences(window, 0) if s.text.startswith('"Then take the lamp'))
    qtbot.waitUntil(lambda: (model.sentence(line.id) or line).speaker == "Mary", timeout=WAIT)
    assert "spoken by Mary" in str(model.sentence_index(line.id).siblingAtColumn(3).data())

    panel.castingChosen.emit("Mary", Casting(performance=Performance(pitch=2.0)))  # the Voice... dialog's answer
    qtbot.waitUntil(lambda: "pitch +2" in panel.table.item(1, 2).text(), timeout=WAIT)
    assert not window.queue.snapshot.jobs  # nothing was rendered, so nothing to render again

    # "Spoken by..." from the sentence's menu: the producer says Tom says it
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a, **k: ("Tom", True)))
    book = window.book
    book.select_sentence(line.id)
    book._menu(book.tree.visualRect(book.proxy.mapFromSource(model.sentence_index(line.id))).center())
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    next(a for a in menu.actions() if a.text() == "Spoken by\u2026").trigger()
    menu.close()
    qtbot.waitUntil(lambda: model.sentence(line.id).speaker == "Tom", timeout=WAIT)
    with Project.open(window.session.snapshot.folder) as project:
        row = next(r for r in project.sentences() if r.id == line.id)
        assert row.cast[0].name == "Tom" and project.cast.castings()["Mary"].performance.pitch == 2.0


def test_the_voice_dialog_offers_installed_voices_and_a_voices_speakers(qtbot) -> None:  # noqa: ANN001
    from studio.desktop.cast import VoiceSpeakers, installed_voices
    from studio.ui.cast_dock import CastingDialog

    voices = installed_voices()
    assert any(v.voice_id == "en_US-joe-medium" and v.speakers == () for v in voices)
    duo = VoiceSpeakers("en_US-duo-medium", "Duo", ((0, "ann"), (1, "bob")))
    dialog = CastingDialog("Tom", Casting(performance=Performance(pitch=-2.0)), voices + (duo,))
    qtbot.addWidget(dialog)
    assert dialog.casting() == Casting(performance=Performance(pitch=-2.0))  # as given: the narrator's voice
    dialog.voice.setCurrentIndex(dialog.voice.findData("en_US-duo-medium"))
    assert [dialog.speaker.itemText(i) for i in range(dialog.speaker.count())] == ["default", "0: ann", "1: bob"]
    dialog.speaker.setCurrentIndex(2)
    assert dialog.casting() == Casting("en_US-duo-medium", 1, Performance(pitch=-2.0))
