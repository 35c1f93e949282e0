"""The voice-family registry: a family added by one line (the tests' tone family, registered
through ``$STUDIO_VOICE_FAMILIES``) is listed by ``studio voices``, rendered by ``studio render
--voice`` and opened by every preset path, with nothing above the engine changed."""

from __future__ import annotations

import json
import os
import wave
from pathlib import Path

import numpy as np
import pytest
from support.render import studio_cmd
from support.tone_family import LINE, tone_env, write_tone_voice

from studio.core.errors import PresetUnavailable, VoiceError
from studio.engine.families import EXTRA_ENV, FAMILIES, families, family_of, fetcher
from studio.engine.presets import describe, open_preset
from studio.engine.voice.catalog import get_voice, list_voices


@pytest.fixture
def tone_voices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "voices"
    write_tone_voice(folder)
    monkeypatch.setenv(EXTRA_ENV, LINE)
    monkeypatch.setenv("STUDIO_VOICES_DIR", str(folder))
    return folder


def test_every_studio_family_is_one_line_and_lists_only_its_own_voices() -> None:
    assert [f.name for f in families()][: len(FAMILIES)] == ["piper", "kokoro", "coqui"]
    for voice in list_voices():
        assert family_of(voice).name == voice.family
        for preset in voice.abilities.presets:  # every preset a voice runs is described for it
            assert describe(preset, voice)


def test_a_family_added_by_one_line_is_listed_opened_and_speaks(tone_voices: Path) -> None:
    voice = get_voice("tone:a440")
    assert (voice.family, voice.sample_rate, voice.abilities.presets) == ("tone", 16000, ("fp32-cpu",))
    assert describe("fp32-cpu", voice).startswith("A pure tone")
    with open_preset("fp32-cpu", voice, threads=1) as engine:
        (audio,) = engine.synthesize_batch([engine.text_to_ids("Hello there.", "en")], voice.default_settings)
    assert audio.size == 11 * 1600 and float(np.abs(audio).max()) == pytest.approx(0.3, abs=1e-3)
    with pytest.raises(PresetUnavailable, match="cannot run preset int8-cpu"):
        open_preset("int8-cpu", voice)


def test_downloads_go_to_the_family_that_names_them() -> None:
    assert [fetcher(n).name for n in ("en_US-lessac-medium", "kokoro:af_heart", "tts_models/en/ljspeech/vits")] \
        == ["piper", "kokoro", "coqui"]
    with pytest.raises(VoiceError, match="no voice family downloads 'nobody:x'"):
        fetcher("nobody:x")


def test_studio_voices_and_render_take_a_family_added_by_one_line(tmp_path: Path) -> None:
    voices = tmp_path / "voices"
    write_tone_voice(voices)
    env = tone_env(voices, {**os.environ, "STUDIO_CACHE_DIR": str(tmp_path / "cache")})
    listed = studio_cmd("voices", env=env)
    assert listed.returncode == 0, listed.stderr
    row = next(r for r in listed.stdout.splitlines() if r.startswith("tone:a440"))
    assert "fp32-cpu" in row and "16000 Hz" in row

    book = tmp_path / "book.md"
    book.write_text("# Tones\n\n## One\n\nA short line. Another line.\n", encoding="utf-8")
    out = tmp_path / "out"
    done = studio_cmd("render", str(book), "-o", str(out), "--format", "wav", "--voice", "tone:a440",
                      "--project", str(tmp_path / "p.studio"), env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    (chapter,) = sorted(out.glob("*.wav"))
    with wave.open(str(chapter)) as w:
        assert w.getframerate() == 16000 and w.getnframes() > 16000 * 2  # two sentences of tone, and the pauses
    rows = json.loads(studio_cmd("inspect", str(tmp_path / "p.studio"), "--spoken", "--json", env=env).stdout)
    assert rows and all(r["phonemes"] == "" for r in rows)  # it takes no phonemes: none are shown
