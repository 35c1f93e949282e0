"""A Coqui voice chosen in the desktop: the Preset tab offers only the presets it can run, and
the book's banner counts every language a multilingual voice speaks."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from studio.desktop.facts import list_voice_choices
from support.coqui import coqui_voices, xtts_voices  # noqa: F401 - fixtures, named as arguments
from support.presets import CPU_ONLY, SETTINGS, machine

WAIT_MS = 180_000  # making a voice loads the model and computes the speaker: slow on a loaded 2-core box


@pytest.fixture
def coqui_installed(coqui_voices, tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_VOICES_DIR", str(coqui_voices))
    monkeypatch.setenv("TTS_HOME", str(tmp_path / "tts-home"))
    monkeypatch.setenv("STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    return coqui_voices


def test_the_preset_tab_never_says_runs_here_for_a_preset_the_voice_cannot_run(qtbot, coqui_installed):
    from studio.ui.voices_dialog import VoicesDialog

    choices = {v.id: v for v in list_voice_choices()}
    assert choices["tinytaco"].presets == ("fp32-torch", "dynamic-int8", "fp16-cuda")
    settings = replace(SETTINGS, voice_id="tinytaco")
    dlg = VoicesDialog(settings, ["en"])
    qtbot.addWidget(dlg)
    dlg.set_facts(machine(CPU_ONLY))
    table = dlg.presets
    for name in ("fp32-cpu", "int8-cpu"):  # they run on this machine, not this voice
        row = table.row_of(name)
        assert row.text(2) == "The chosen voice cannot run it (pick one of the voice's own presets)."
        assert not row.flags() & Qt.ItemFlag.ItemIsSelectable and "tinytaco cannot run it" in row.toolTip(2)
    assert table.row_of("fp32-torch").text(2) == "Yes" and table.row_of("dynamic-int8").text(2) == "Yes"
    assert table.row_of("fp32-torch").text(0).startswith("Best quality, on PyTorch \u2014 engine default")
    rows = [table.tree.topLevelItem(i) for i in range(table.tree.topLevelItemCount())]
    assert all(r.text(2) != "Yes" for r in rows if r.text(1) not in ("fp32-torch", "dynamic-int8"))
    assert table.recommendation.preset in ("fp32-torch", "dynamic-int8")


def test_a_multilingual_voice_voices_each_of_its_languages(coqui_installed):
    from studio.project.unvoiced import said, voice_language

    assert voice_language("tinyyourtts") == "en,fr" and voice_language("tinyvits") == "en"
    assert said("skip", [], "en", voice_language("tinyyourtts"), "fr") == "fr"  # French is voiced
    assert said("skip", [], "en", voice_language("tinyyourtts"), "de") == "skip/de"


def test_the_desktop_renders_a_book_with_a_coqui_voice(qtbot, coqui_installed, tmp_path):
    from studio.stack.build import build_engine
    from support.gui import write_manuscript
    from support.window import WAIT, make_window, open_and_wait, sentences, wait_jobs_done

    win = make_window(qtbot, tmp_path, build=build_engine)
    try:
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "books"))
        with qtbot.waitSignal(win.session.settingsChanged, timeout=WAIT):
            win.session.update_settings(replace(win.session.settings, voice_id="tinyvits", preset=""))
        from studio.ui.book_view import banner_line

        assert win.session.settings.voice_id == "tinyvits"
        assert "no English voice" not in banner_line(win.session.snapshot)[0]
        win.session.render_chapters([1])
        wait_jobs_done(qtbot, win)
        assert win.queue.snapshot.jobs[0].status == "done", win.log_pane.toPlainText()
        assert win.book.model.counts(1)["done"] == len(sentences(win, 1))
        assert "loaded voice tinyvits (fp32-torch)" in win.log_pane.toPlainText()  # its own preset, not fp32-cpu
    finally:
        win.close()


def test_new_voice_from_a_recording_in_the_voice_library(qtbot, xtts_voices, tmp_path, monkeypatch):
    import coqui_checkpoints as build
    import soundfile

    from studio.desktop.voice_library import VoiceLibrary
    from studio.ui.clone_dialog import CloneDialog
    from studio.ui.voice_library_panel import VoiceLibraryPanel

    monkeypatch.setenv("STUDIO_VOICES_DIR", str(xtts_voices))
    monkeypatch.setenv("TTS_HOME", str(tmp_path / "tts-home"))
    library = VoiceLibrary(url="http://127.0.0.1:9", timeout=1)
    panel = VoiceLibraryPanel(library)
    qtbot.addWidget(panel)
    short, good = tmp_path / "short.wav", tmp_path / "cid.wav"
    soundfile.write(short, build.speech_like(3.0), 22050)
    soundfile.write(good, build.speech_like(8.0, 48000), 48000)

    def ask(recording: Path) -> CloneDialog:
        dialog = CloneDialog(["tinyxtts"])
        assert not dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()  # nothing given yet
        dialog.recording.setText(str(recording))
        dialog.name.setText("cid")
        dialog.consent.setText("Cid agrees to this use of his voice, 2026-12-05")
        dialog.exec = lambda: CloneDialog.DialogCode.Accepted  # the producer presses OK
        return dialog

    with qtbot.waitSignal(library.failed, timeout=WAIT_MS) as refused:
        panel.new_voice_from_recording(ask(short))
    assert "a voice needs at least 6 s" in refused.args[0].message and "6 s" in panel.status.text()
    with qtbot.waitSignal(library.installed, timeout=WAIT_MS) as made:
        panel.new_voice_from_recording(ask(good))
    assert made.args[0].id == "cid" and "fp32-torch" in made.args[0].presets
    assert json.loads((xtts_voices / "cid" / "clone.json").read_text())["consent"].startswith("Cid agrees")
    library.shutdown()


def test_the_status_bar_names_the_preset_a_coqui_voice_really_renders_with(coqui_installed):
    from studio.desktop.preset_words import preset_label

    assert preset_label("", "tinyvits", "onnx").startswith("Preset: Best quality, on PyTorch (fp32-torch, engine default)")
    assert "fp32-cpu" in preset_label("", "not-installed", "onnx")  # unknown here: the backend's default
