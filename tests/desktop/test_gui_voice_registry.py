"""The desktop asks the voice-family registry, never a family: a family added by one line (the
tests' tone family) is in the Voices window's lists and presets; a voice's languages and its
presets' words are the ones ``studio voices`` and its family give (Kokoro's jm_kumo: "ja, en")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support.presets import CPU_ONLY, SETTINGS, machine
from support.presets import library_row as row
from support.render import studio_cmd
from support.tone_family import LINE, tone_env, write_tone_voice

from studio.desktop.facts import list_voice_choices, presets_for_voice
from studio.desktop.voice_library import VoiceLibrary
from studio.engine.families import EXTRA_ENV
from studio.engine.kokoro.packs import offline_packs_file
from studio.ui.voices_dialog import VoicesDialog

WAIT = 120_000
NO_CATALOGUE = "http://127.0.0.1:9"  # nothing listens: the Piper catalogue is unavailable, the rest still lists


@pytest.fixture
def voices_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "my-voices"
    write_tone_voice(folder, language="fr")
    monkeypatch.setenv(EXTRA_ENV, LINE)
    monkeypatch.setenv("STUDIO_VOICES_DIR", str(folder))
    monkeypatch.setenv("TTS_HOME", str(tmp_path / "tts-home"))
    return folder


def open_dialog(qtbot):  # noqa: ANN001, ANN201
    dlg = VoicesDialog(SETTINGS, ["en", "fr"], library=VoiceLibrary(url=NO_CATALOGUE, timeout=10))
    qtbot.addWidget(dlg)
    dlg.show()
    facts = replace(machine(CPU_ONLY), voices=list_voice_choices())
    dlg.set_facts(facts)
    return dlg, facts


def test_a_family_added_by_one_line_is_in_the_voices_window(qtbot, voices_dir) -> None:  # noqa: ANN001
    dlg, facts = open_dialog(qtbot)
    assert dlg.default_voice.findData("tone:a440") >= 0
    fr, en = dlg.combos["fr"], dlg.combos["en"]
    assert fr.itemText(fr.findData("tone:a440")) == "Tone a440 \u2014 tone:a440"  # a French voice, listed as one
    assert en.itemText(en.findData("tone:a440")).endswith("(fr voice)")
    qtbot.waitUntil(lambda: bool(row(dlg, "tone:a440")), timeout=WAIT)
    assert row(dlg, "tone:a440")[1] == "fr" and row(dlg, "tone:a440")[-1] == "installed"
    presets = {p.name: p for p in presets_for_voice(facts, "tone:a440").presets}
    assert presets["fp32-cpu"].summary.startswith("A pure tone") and not presets["int8-cpu"].available


@pytest.mark.skipif(offline_packs_file() is None, reason="the offline Kokoro voices are not installed")
def test_a_voice_speaks_the_same_languages_in_the_window_and_on_the_command_line(qtbot, voices_dir) -> None:  # noqa: ANN001
    listed = studio_cmd("voices", env=tone_env(voices_dir))
    assert listed.returncode == 0, listed.stderr
    cli = next(r for r in listed.stdout.splitlines() if r.startswith("kokoro:jm_kumo"))
    assert "  ja, en  " in cli
    dlg, facts = open_dialog(qtbot)
    kumo = next(v for v in facts.voices if v.id == "kokoro:jm_kumo")
    assert kumo.languages == "ja, en"
    qtbot.waitUntil(lambda: bool(row(dlg, "kokoro:jm_kumo")), timeout=WAIT)
    assert row(dlg, "kokoro:jm_kumo")[1] == "ja, en"
    en, fr = dlg.combos["en"], dlg.combos["fr"]
    assert not en.itemText(en.findData("kokoro:jm_kumo")).endswith("voice)")  # it reads English: no "(ja voice)"
    assert fr.itemText(fr.findData("kokoro:jm_kumo")).endswith("(ja, en voice)")
    words = {p.name: p.summary for p in presets_for_voice(facts, "kokoro:jm_kumo").presets}
    assert words["fp32-cpu"].startswith("Kokoro v1.0") and "widened to float32" in words["fp32-cpu"]
    assert "not calibrated" in words["int8-cpu"]  # its own words, not the Piper voices' calibrated INT8
