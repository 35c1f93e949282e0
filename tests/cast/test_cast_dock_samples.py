"""The Cast dock's Rename..., Play a sample line and the Voice... dialog's sample of each speaker,
with real widgets, the real preview playback and a test-built two-speaker voice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtWidgets import QInputDialog
from support.cast import CHAPTER, two_speaker_voice
from support.gui import shared_factory, write_manuscript
from support.window import WAIT, RecordingSink, make_window, open_and_wait, sentences

from studio.engine.voice.catalog import VOICES_DIR_ENV
from studio.project.cast import Casting
from studio.ui.main_window import MainWindow


def names(window: MainWindow) -> list[str]:
    table = window.cast.table
    return [table.item(r, 0).text() for r in range(table.rowCount())]


def test_rename_in_the_dock_survives_a_reimport(qtbot, window: MainWindow, tmp_path: Path,  # noqa: ANN001
                                                 monkeypatch) -> None:  # noqa: ANN001
    path = write_manuscript(tmp_path / "books", CHAPTER, name="harbour.md")
    open_and_wait(qtbot, window, path)
    qtbot.waitUntil(lambda: names(window) == ["Tom", "Mary"], timeout=WAIT)
    window.cast.table.selectRow(0)
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("Thomas Hale", True)))
    window.cast.rename_button.click()
    qtbot.waitUntil(lambda: names(window) == ["Thomas Hale", "Mary"], timeout=WAIT)

    path.write_text(CHAPTER.replace("the door closed", "the door shut"), encoding="utf-8")  # the book changed
    window.open_path(path)  # imported again
    qtbot.waitUntil(lambda: any("door shut" in s.text for s in sentences(window, 0)), timeout=WAIT)
    window.cast_ctl.refresh()
    qtbot.waitUntil(lambda: names(window) == ["Thomas Hale", "Mary"], timeout=WAIT)
    assert window.cast.table.item(0, 1).text() == "3"


def _played(qtbot, window: MainWindow, sink: list[RecordingSink], label: str, start) -> np.ndarray:  # noqa: ANN001
    """What the preview played for one request (started by ``start()``), once it has finished."""
    seen: list = []
    window.session.preview.positionChanged.connect(seen.append)
    before = len(sink[0].heard) if sink else 0
    start()
    qtbot.waitUntil(lambda: any(p.label == label and p.state == "playing" for p in seen), timeout=WAIT)
    qtbot.waitUntil(lambda: window.session.preview.position().state != "playing", timeout=WAIT)
    window.session.preview.positionChanged.disconnect(seen.append)
    return np.concatenate(sink[0].heard[before:])


def test_each_speaker_of_a_two_speaker_voice_is_heard_before_choosing(qtbot, tmp_path: Path,  # noqa: ANN001
                                                                       monkeypatch) -> None:  # noqa: ANN001
    from studio.desktop.cast import installed_voices
    from studio.engine.presets import open_preset
    from studio.ui.cast_dock import CastingDialog

    two_speaker_voice(tmp_path / "voices")
    monkeypatch.setenv(VOICES_DIR_ENV, str(tmp_path / "voices"))
    shared = shared_factory()
    built: list[str] = []

    def build(plan):  # noqa: ANN001, ANN202 - the duo voice for real; the narrator the shared bundled one
        built.append(plan.voice.id if plan.voice else "")
        return open_preset("fp32-cpu", plan.voice) if plan.voice and plan.voice.id == "en_US-duo-medium" \
            else shared(plan)

    sinks: list[RecordingSink] = []
    window = make_window(qtbot, tmp_path, build=build, sink_factory=lambda: sinks.append(RecordingSink()) or sinks[-1])
    try:
        open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", CHAPTER, name="harbour.md"))
        qtbot.waitUntil(lambda: names(window) == ["Tom", "Mary"], timeout=WAIT)
        dialog = CastingDialog("Tom", Casting(), installed_voices(), window)
        qtbot.addWidget(dialog)
        dialog.sampleRequested.connect(window.cast.speakerSample.emit)  # as the dock's Voice... button wires it
        dialog.voice.setCurrentIndex(dialog.voice.findData("en_US-duo-medium"))
        heard = {}
        for sid in (0, 1):
            dialog.speaker.setCurrentIndex(dialog.speaker.findData(sid))
            heard[sid] = _played(qtbot, window, sinks, f"sample: en_US-duo-medium speaker {sid}",
                                 dialog.sample_button.click)
        assert "en_US-duo-medium" in built
        assert heard[0].size and heard[1].size
        assert 1.3 < heard[1].size / heard[0].size < 1.9  # speaker 1 speaks 1.6x slower: its own audio
        assert dialog.casting() == Casting("en_US-duo-medium", 1)  # the sample chose nothing

        # Play a sample line: Mary's first line in her voice and speaker, casting still off
        window.cast.table.selectRow(1)
        lines = {}
        for sid in (0, 1):
            window.cast.castingChosen.emit("Mary", Casting("en_US-duo-medium", sid))
            qtbot.waitUntil(lambda: f"en_US-duo-medium:{sid}" in window.cast.table.item(1, 2).text(), timeout=WAIT)
            window.cast.table.selectRow(1)
            lines[sid] = _played(qtbot, window, sinks, "sample: Mary", window.cast.play_button.click)
        assert 1.3 < lines[1].size / lines[0].size < 1.9
        assert not window.queue.snapshot.jobs  # casting is off: a sample renders nothing into the book
    finally:
        window.close()
