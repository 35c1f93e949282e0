"""XTTS v2 built small offline (its tokenizer file written by the test's builder), a voice cloned
from a recording, rendered seeded and split under its text limit; recordings refused with reasons."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from studio.core.errors import StudioError, VoiceError
from studio.engine.base import SynthesisSettings
from studio.engine.presets import open_preset
from studio.engine.voice.catalog import get_voice
from support.coqui import xtts_voices  # noqa: F401 - a fixture, named as an argument
from support.render import studio_cmd

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning")


def _voice(root: Path, voice_id: str, tmp_path: Path):
    return get_voice(voice_id, root, hub_dir=tmp_path / "none")


def test_an_xtts_needs_a_speaker_and_a_clone_has_one_with_its_consent(xtts_voices, tmp_path):
    base = _voice(xtts_voices, "tinyxtts", tmp_path)
    assert base.abilities.cloning and base.abilities.presets == () and base.abilities.languages == ("en", "fr")
    ann = _voice(xtts_voices, "ann", tmp_path)
    assert ann.abilities.speakers == ("ann",) and ann.abilities.presets == ("fp32-torch", "fp16-cuda")
    assert ann.consent == "Ann Lee agrees to this use of her voice, 2026-12-05" and ann.sample_rate == 24000
    record = json.loads((xtts_voices / "ann" / "clone.json").read_text())
    assert record["base"] == "tinyxtts" and record["recording"] == "ann.wav"
    assert (xtts_voices / "ann" / "speaker_latents.pth").is_file()  # computed once, stored with the voice
    assert ann.model_path.name == "speaker_latents.pth"  # the cache keys' fingerprint: another recording, new keys


def test_a_cloned_xtts_voice_renders_the_same_audio_twice_in_each_language(xtts_voices, tmp_path):
    engine = open_preset("fp32-torch", _voice(xtts_voices, "ann", tmp_path), threads=1)
    engine.load()
    en = engine.text_to_ids("The river was quiet today.", "en")
    fr = engine.text_to_ids("Bonjour mes amis.", "fr")
    assert en[0] != fr[0]  # the passage's language rides along
    first = engine.synthesize_batch([en, fr], SynthesisSettings())
    again = engine.synthesize_batch([en, fr], SynthesisSettings())
    for a, b in zip(first, again):
        assert a.dtype == np.float32 and a.size > 1000
        np.testing.assert_array_equal(a, b)  # seeded sampling


def test_a_sentence_over_the_text_limit_is_split_at_words_and_joined_without_a_click(xtts_voices, tmp_path):
    from studio.engine.coqui.ids import PIECE_BREAK, pieces
    from studio.engine.waveform import joined as join_pieces

    engine = open_preset("fp32-torch", _voice(xtts_voices, "ann", tmp_path), threads=1)
    engine.load()
    words = "the river was quiet today and the garden was green".split()
    long = " ".join(words[i % len(words)] for i in range(70)) + "."  # ~330 characters, English limit 250
    ids = engine.text_to_ids(long, "en")
    parts = pieces(ids[1:])
    assert len(parts) == 2 and ids.count(PIECE_BREAK) == 1
    said = [engine.model.tokenizer.decode(p[1:]) for p in parts]
    assert all(len(s) <= 250 for s in said)
    spoken = [w.strip(".,") for s in said for w in s.split()]
    assert spoken == [w.strip(".") for w in long.split()]  # every word whole, in order
    joined = join_pieces([np.full(480, 0.5, np.float32), np.full(480, -0.5, np.float32)], 24000)
    assert joined.size == 960 and abs(joined[479]) < 1e-6 and abs(joined[480]) < 1e-6  # the seam meets at zero
    assert np.max(np.abs(np.diff(joined))) < 0.01  # a ramp, not a 1.0 jump


def test_clone_refuses_bad_recordings_with_a_plain_reason(xtts_voices, tmp_path):
    import coqui_checkpoints as build

    from studio.audio.reference_clip import prepare_reference

    rate = 22050
    cases = {
        "short.wav": (build.speech_like(3.0), "s of sound; a voice needs at least 6 s"),
        "clipped.wav": (np.clip(build.speech_like(8.0) * 20, -1, 1), "is clipped"),
        "silent.wav": (np.concatenate([build.speech_like(4.0), np.zeros(rate * 12, np.float32),
                                       build.speech_like(4.0)]), "mostly silence"),
        "quiet.wav": (build.speech_like(8.0) * 0.002, "too quiet"),
    }
    for name, (audio, reason) in cases.items():
        sf.write(tmp_path / name, audio, rate)
        with pytest.raises(StudioError, match=reason):
            prepare_reference(tmp_path / name, rate)
    long = tmp_path / "long.wav"
    sf.write(long, np.zeros(rate * 11 * 60, np.float32), rate)
    with pytest.raises(StudioError, match="11 minutes long"):
        prepare_reference(long, rate)


def test_clone_on_the_command_line(xtts_voices, tmp_path):
    import os

    import coqui_checkpoints as build

    env = {**os.environ, "STUDIO_VOICES_DIR": str(xtts_voices), "TTS_HOME": str(tmp_path / "tts"), "OMP_NUM_THREADS": "1"}
    sf.write(tmp_path / "bob.wav", build.speech_like(5.0, 44100), 44100)
    short = studio_cmd("voices", "clone", "bob", "--from", str(tmp_path / "bob.wav"), "--model", "tinyxtts",
                       "--consent", "Bob agrees", env=env)
    assert short.returncode == 2 and "a voice needs at least 6 s" in short.stderr
    assert not (xtts_voices / "bob").exists()
    taco = studio_cmd("voices", "clone", "bob", "--from", str(tmp_path / "bob.wav"), "--model", "en_US-joe-medium",
                      "--consent", "Bob agrees", env=env)
    assert taco.returncode == 2 and "cannot take a voice from a recording" in taco.stderr
    with pytest.raises(VoiceError, match="exists already"):
        from studio.engine.voice.cloning import clone_voice

        clone_voice(_voice(xtts_voices, "tinyxtts", tmp_path), "ann", build.speech_like(8.0), 22050, "x",
                    tmp_path / "a.wav", xtts_voices)


def test_the_consent_is_carried_into_the_disclosure_of_credits_and_manifest(xtts_voices, tmp_path, monkeypatch):
    from studio.delivery.credits import default_credits, disclosure
    from studio.project.opening import new_project_settings, open_for_manuscript

    monkeypatch.setenv("STUDIO_VOICES_DIR", str(xtts_voices))
    monkeypatch.setenv("TTS_HOME", str(tmp_path / "tts"))
    book = tmp_path / "book.md"
    book.write_text("# Book\n\nThe river was quiet today.\n", encoding="utf-8")
    project = open_for_manuscript(book, tmp_path / "book.studio", new_project_settings(get_voice("ann"))).project
    try:
        said = disclosure(project)  # the manifest's "disclosure", the tags' and the closing credits' last line
        assert "made from a recording, with consent: Ann Lee agrees to this use of her voice, 2026-12-05" in said
        assert said in default_credits(project, narrator="", author="", title="Book").closing
    finally:
        project.close()


def test_an_xtts_voice_says_its_non_commercial_licence_at_export(xtts_voices, tmp_path, monkeypatch):
    from studio.delivery.credits import licence_warnings
    from studio.project.opening import new_project_settings, open_for_manuscript

    monkeypatch.setenv("STUDIO_VOICES_DIR", str(xtts_voices))
    monkeypatch.setenv("TTS_HOME", str(tmp_path / "tts"))
    assert get_voice("ann").licence == "CPML"  # XTTS's released weights: the Coqui Public Model License
    book = tmp_path / "book.md"
    book.write_text("# Book\n\nThe river was quiet today.\n", encoding="utf-8")
    project = open_for_manuscript(book, tmp_path / "book.studio", new_project_settings(get_voice("ann"))).project
    try:
        assert licence_warnings(project) == ["the voice ann is under the Coqui Public Model License: non-commercial "
                                             "use only: a book read with it cannot be sold"]
    finally:
        project.close()
