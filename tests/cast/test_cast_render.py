"""A cast rendered for real: the bundled voice, a real project, the audio cache, export.

The chapter has a narrator and two characters; Mary is the narrator's voice three
semitones up, Tom three down. Noise is off, so the same input gives the same audio.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.cast import CHAPTER, cast_project, two_speaker_voice
from support.voice import DETERMINISTIC
from support.render import CountingEngine, real_engine

from studio.audio.mastering import MasteringConfig
from studio.audio.pcm import read_wav_bytes
from studio.engine.voice.catalog import get_voice
from studio.delivery.credits import cast_voices, default_credits
from studio.delivery.export import export_chapter_files
from studio.delivery.manifest import write_manifest
from studio.delivery.publish import PublishOptions, book_meta
from studio.rendering.render import render_project
from studio.project.cast import Casting, Performance
from studio.project.store import Project
from studio.text.importer import load_manuscript

def audio_of(project: Project, key: str) -> np.ndarray:
    entry = project.cache_entry(key)
    assert entry is not None
    audio, _rate = read_wav_bytes(project.cache.path_for(key).read_bytes())
    return audio


def median_f0(audio: np.ndarray, rate: int) -> float:
    parselmouth = pytest.importorskip("parselmouth")
    from parselmouth.praat import call

    pitch = call(parselmouth.Sound(audio.astype(np.float64), sampling_frequency=rate), "To Pitch", 0.0, 50, 500)
    return float(call(pitch, "Get quantile", 0, 0, 0.5, "Hertz"))


def longest_quiet(audio: np.ndarray, rate: int) -> float:
    """The longest run of 10 ms frames 40 dB under the clip's peak, in seconds."""
    frame = int(0.01 * rate)
    n = len(audio) // frame
    rms = np.sqrt(np.mean(audio[:n * frame].reshape(n, frame) ** 2, axis=1))
    best = run = 0
    for quiet in rms < np.abs(audio).max() * 10 ** (-40 / 20):
        run = run + 1 if quiet else 0
        best = max(best, run)
    return best * 0.01


def by_text(project: Project) -> dict[str, object]:
    return {r.text: r for r in project.sentences()}


def test_casting_is_off_until_turned_on_and_then_voices_the_characters(tmp_path: Path) -> None:
    project = cast_project(tmp_path)
    before = {r.id: r.expected_key for r in project.sentences()}
    assert not project.cast.enabled()
    project.cast.set_casting("Mary", Casting(performance=Performance(pitch=3.0)))
    assert {r.id: r.expected_key for r in project.sentences()} == before  # off: nothing changes
    project.cast.set_enabled(True)
    names = {m.name: m.lines for m in project.cast.members()}
    assert names == {"Mary": 2, "Tom": 3}
    rows = by_text(project)
    assert rows['"Where are you going at this hour?" asked Mary.'].cast[0].name == "Mary"
    assert rows["The night was calm over the harbour, and the lamps were lit."].cast == ()
    # Tom's lines keep their keys while Tom has no voice of his own: only Mary's change
    changed = {r.text for r in project.sentences() if r.expected_key != before[r.id]}
    assert changed == {'"Where are you going at this hour?" asked Mary.', '"Then take the lamp with you, Tom."'}


def test_a_cast_chapter_is_rendered_with_performances_recast_undone_and_exported(tmp_path: Path) -> None:
    project = cast_project(tmp_path)
    project.cast.set_enabled(True)
    project.cast.set_casting("Mary", Casting(performance=Performance(pitch=3.0)))
    project.cast.set_casting("Tom", Casting(performance=Performance(pitch=-3.0)))
    engine = CountingEngine(real_engine())
    done = render_project(project, engine, batch_size=8)
    assert done.failed == 0 and done.done == done.total == len(project.sentences())
    # a quote and its narration in one sentence: two parts; parts are batched by voice and settings, and
    # a performance is applied after synthesis, so the 8 parts of the 5 cast sentences are one engine call
    assert '"Where are you going at this hour?"' in engine.spoken and "asked Mary." in engine.spoken
    assert engine.calls == [3, 8]  # the title and two narration sentences, then the cast sentences' parts

    # Mary's whole-sentence line is the plain voice three semitones up (Praat's pitch track)
    rows = by_text(project)
    line = rows['"Then take the lamp with you, Tom."']
    cast = audio_of(project, line.expected_key)
    plain = real_engine().synthesize(line.spoken, "en", DETERMINISTIC)
    shift = 12 * np.log2(median_f0(cast, 22050) / median_f0(plain, 22050))
    assert 2.5 <= shift <= 3.5, shift

    # the join inside '"To the lighthouse," said Tom.': no click, and no gap beyond the comma's pause
    # (the voice's own pause at that comma, the sentence spoken whole, is about 0.2 s)
    joined = audio_of(project, rows['"To the lighthouse," said Tom.'].expected_key)
    assert np.abs(np.diff(joined)).max() < 0.5 and np.isfinite(joined).all()
    whole = real_engine().synthesize('"To the lighthouse," said Tom.', "en", DETERMINISTIC)
    assert longest_quiet(joined, 22050) <= longest_quiet(whole, 22050) + 0.05

    # recasting Tom renders exactly the sentences Tom speaks in, and nothing else
    toms = {r.id for r in project.sentences() if any(p.name == "Tom" for p in r.cast)}
    assert len(toms) == 3
    project.cast.set_casting("Tom", Casting(performance=Performance(pitch=-2.0, pace=0.9)))
    pending = {r.id for r in project.sentences() if r.state != "done"}
    assert pending == toms
    engine.spoken.clear()
    again = render_project(project, engine, batch_size=8)
    assert again.synthesized == 3 and again.reused == 0
    # undo: the old audio is found again, nothing is spoken
    project.cast.set_casting("Tom", Casting(performance=Performance(pitch=-3.0)))
    engine.spoken.clear()
    undone = render_project(project, engine, batch_size=8)
    assert undone.synthesized == 0 and undone.reused == 3 and engine.spoken == []

    files = export_chapter_files(project, tmp_path / "out", "wav", engine=engine)
    assert len(files) == 1 and files[0].path.stat().st_size > 10_000
    spoken = [r.duration for r in project.sentences()]
    assert sum(spoken) < files[0].duration < sum(spoken) + 1.5 * len(spoken)  # the audio, with its pauses
    closing = default_credits(project, narrator="Joe", author="A", title="T").closing
    assert "With the voices of Tom, voiced by Joe, lower; and Mary, voiced by Joe, higher." in closing
    assert cast_voices(project) == (("Tom", "Joe (pitch -3)"), ("Mary", "Joe (pitch +3)"))  # by number of lines
    manifest = write_manifest(tmp_path / "manifest.json", fmt="mp3", mastering=MasteringConfig(),
                              meta=book_meta(project, PublishOptions(fmt="mp3")), files=[], warnings=[])
    assert json.loads(manifest.read_text(encoding="utf-8"))["book"]["cast"] == [
        {"character": "Tom", "voice": "Joe (pitch -3)"}, {"character": "Mary", "voice": "Joe (pitch +3)"}]


def test_a_corrected_attribution_survives_a_reimport(tmp_path: Path) -> None:
    project = cast_project(tmp_path)
    project.cast.set_enabled(True)
    line = by_text(project)['"I have it here," he said.']
    assert line.cast == () or line.cast[0].name == "Tom"
    project.cast.correct(line.id, "Mary")
    project.cast.set_casting("Mary", Casting(performance=Performance(pitch=2.0)))
    assert by_text(project)['"I have it here," he said.'].cast[0].name == "Mary"
    edited = tmp_path / "edited.md"
    edited.write_text(CHAPTER.replace("The night was calm", "The night was still"), encoding="utf-8")
    project.replace_book(load_manuscript(edited))
    after = by_text(project)
    assert after['"I have it here," he said.'].cast[0].name == "Mary"  # found again by its text
    assert after["The night was still over the harbour, and the lamps were lit."].cast == ()
    line = by_text(project)['"I have it here," he said.']
    project.edit_sentence(line.id, '"I have it right here," he said.')  # an edit: the parts follow the new text
    edited_row = by_text(project)['"I have it right here," he said.']
    assert [(p.start, p.end, p.name) for p in edited_row.cast] == [(0, 23, "Mary"), (23, 32, "")]
    project.edit_sentence(line.id, '"I have it here," he said.')
    project.cast.set_enabled(False)  # a re-import while casting is off: the lines are there when it is on again
    project.replace_book(load_manuscript(edited))
    project.cast.set_enabled(True)
    assert by_text(project)['"I have it here," he said.'].cast[0].name == "Mary"


def test_a_two_speaker_voice_speaks_each_character_with_its_speaker(tmp_path: Path) -> None:
    from studio.engine.presets import open_preset
    from studio.engine.piper.voices import piper_voice_info

    duo = piper_voice_info(two_speaker_voice(tmp_path / "voices"))
    project = cast_project(tmp_path)
    project.cast.set_enabled(True)
    project.cast.set_casting("Mary", Casting(voice_id=duo.id, speaker=0))
    project.cast.set_casting("Tom", Casting(voice_id=duo.id, speaker=1))
    opened: list = []

    def engine_for(voice_id: str):
        assert voice_id == duo.id
        opened.append(open_preset("fp32-cpu", duo))
        return opened[-1]

    done = render_project(project, real_engine(), engine_for=engine_for, batch_size=8,
                          voice_lookup=lambda v: duo if v == duo.id else get_voice(v))
    assert done.failed == 0 and len(opened) == 1
    rows = by_text(project)
    mary = audio_of(project, rows['"Then take the lamp with you, Tom."'].expected_key)
    tom = audio_of(project, rows['"I will be back before the morning comes."'].expected_key)
    plain_mary = real_engine().synthesize(rows['"Then take the lamp with you, Tom."'].spoken, "en", DETERMINISTIC)
    plain_tom = real_engine().synthesize(rows['"I will be back before the morning comes."'].spoken, "en", DETERMINISTIC)
    assert abs(len(mary) / len(plain_mary) - 1.0) < 0.05  # speaker 0: the voice's own pace
    assert 1.4 < len(tom) / len(plain_tom) < 1.7  # speaker 1: its row of the table, 1.6x
