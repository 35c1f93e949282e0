"""The render job and export with the real bundled voice, real SQLite, real files."""

from __future__ import annotations

import shutil
import wave
from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import ProjectError
from studio.engine.voice.catalog import get_voice
from studio.delivery.export import clean_filename, default_chapters, export_chapter_files, safe_filename
from studio.delivery.export import export_chapters
from studio.rendering.render import RenderProgress, render_project
from studio.project.opening import new_project_settings
from studio.project.store import Project
from support.render import CountingEngine, ffprobe_duration, make_book, para, real_engine

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path):
    proj = Project.create(tmp_path / "p", make_book(), new_project_settings(get_voice(None)))
    yield proj
    proj.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory):
    """A project rendered once per module (synthesis is the slow part)."""
    folder = tmp_path_factory.mktemp("template") / "p"
    engine = CountingEngine(real_engine())
    seen: list[RenderProgress] = []
    with Project.create(folder, make_book(), new_project_settings(get_voice(None))) as proj:
        result = render_project(proj, engine, progress=seen.append)
    return folder, engine, seen, result


@pytest.fixture
def rendered(template, tmp_path: Path):
    """A private copy of the rendered template project."""
    shutil.copytree(template[0], tmp_path / "p")
    proj = Project.open(tmp_path / "p")
    yield proj
    proj.close()


def test_render_then_rerender_reuses_every_sentence(template, rendered: Project) -> None:
    _folder, engine, seen, result = template
    project = rendered
    # 9 speakable units ("* * *" needs no voice); each synthesized exactly once
    assert len(engine.spoken) == 9 and len(set(engine.spoken)) == 9
    assert (result.done, result.total, result.failed, result.synthesized) == (10, 10, 0, 9)
    assert result.audio_seconds > 3 and result.rtf > 0 and result.eta == 0.0
    assert [p.done for p in seen] == sorted(p.done for p in seen) and seen[-1].done == 10
    assert project.counts()["done"] == 10
    assert all(r.synth_count == (1 if r.text != "* * *" else 0) for r in project.sentences())

    again = CountingEngine(real_engine())
    result = render_project(project, again)
    assert again.spoken == [] and result.synthesized == 0 and result.done == 10



def test_edit_and_override_render_only_what_changed(rendered: Project, tmp_path: Path) -> None:
    project = rendered
    target = next(r for r in project.sentences() if r.text == "Birds sang.")
    project.edit_sentence(target.id, "Birds sang loudly.")
    project.set_language_override(1, 1, "de")
    assert project.counts()["pending"] == 3
    engine = CountingEngine(real_engine())
    render_project(project, engine)
    assert sorted(engine.spoken) == ["Birds sang loudly.", "Stars came out.", "We slept."]
    # undoing the override finds the old audio again: nothing to synthesize
    project.set_language_override(1, 1, None)
    engine = CountingEngine(real_engine())
    render_project(project, engine, chapters={1})
    assert engine.spoken == []
    assert project.counts()["done"] == 10


def test_failed_sentence_is_recorded_and_the_job_goes_on(project: Project, tmp_path: Path) -> None:
    engine = CountingEngine(real_engine(), fail_on="Tea")
    result = render_project(project, engine)
    assert result.failed == 1 and result.done == 9
    failed = [r for r in project.sentences() if r.state == "failed"]
    assert [r.text for r in failed] == ["Tea was hot."]
    assert "EngineError" in failed[0].reason and "refusing" in failed[0].reason
    # chapter 1 is complete and exports; chapter 0 is refused with the reason
    assert len(export_chapters(project, tmp_path / "out", "wav", chapters=[1])) == 1
    with pytest.raises(ProjectError, match="chapter 1: 1 failed"):
        export_chapters(project, tmp_path / "out", "wav", chapters=[0])
    # the next run retries only the failed sentence
    engine = CountingEngine(real_engine())
    assert render_project(project, engine).failed == 0
    assert engine.spoken == ["Tea was hot."]


def test_render_only_selected_sentences(project: Project) -> None:
    picked = [r.id for r in project.sentences() if r.text in ("Birds sang.", "We slept.")]
    engine = CountingEngine(real_engine())
    result = render_project(project, engine, sentence_ids=picked)
    assert sorted(engine.spoken) == ["Birds sang.", "We slept."]
    assert (result.done, result.total) == (2, 2)
    assert project.counts()["done"] == 2


def test_should_stop_ends_between_sentences(project: Project) -> None:
    calls = []
    result = render_project(project, CountingEngine(real_engine()), should_stop=lambda: len(calls) >= 2,
                            progress=calls.append)
    assert result.stopped and 0 < result.done < result.total
    assert project.counts()["done"] == result.done


def test_export_wav_and_mp3(rendered: Project, tmp_path: Path) -> None:
    project = rendered
    settings = project.settings()
    wavs = export_chapter_files(project, tmp_path / "wav", "wav")
    assert [f.path.name for f in wavs] == ["01 - Morning.wav", "02 - Evening.wav"]
    rows = project.sentences([0])
    speech = sum(r.duration for r in rows)
    p = settings.pauses
    expected = speech + p.title + 2 * p.sentence + 2 * p.paragraph
    with wave.open(str(wavs[0].path)) as w:
        assert (w.getsampwidth(), w.getnchannels(), w.getframerate()) == (2, 1, 22050)
        assert abs(w.getnframes() / 22050 - expected) < 0.01
    assert abs(wavs[0].duration - expected) < 0.01

    mp3s = export_chapter_files(project, tmp_path / "mp3", "mp3", chapters=[1], sample_rate=44100)
    assert [f.path.name for f in mp3s] == ["02 - Evening.mp3"]
    assert mp3s[0].sample_rate == 44100
    assert abs(ffprobe_duration(mp3s[0].path) - mp3s[0].duration) < 0.1


def test_export_renders_what_is_missing_in_the_plan_s_batches(project: Project, tmp_path: Path) -> None:
    """``studio render -o`` hands export the plan's batch size: an engine re-rendering before
    export gets several sentences per call (what a CUDA or multi-stream stack is built for)."""
    single, batched = CountingEngine(real_engine()), CountingEngine(real_engine())
    first = export_chapter_files(project, tmp_path / "one", "wav", [0], engine=single)
    assert single.calls and set(single.calls) == {1}
    project.invalidate_key(project.sentences([0])[1].cache_key)  # lost from the cache: export must redo it
    project.invalidate_key(project.sentences([0])[2].cache_key)
    again = export_chapter_files(project, tmp_path / "four", "wav", [0], engine=batched, batch_size=4)
    assert batched.calls == [2]  # the two missing sentences in one call
    assert [f.path.name for f in again] == [f.path.name for f in first] and again[0].duration > 0
    assert all(r.state == "done" for r in project.sentences([0]))


def test_corrupt_cache_file_is_detected_and_rendered_again(rendered: Project, tmp_path: Path) -> None:
    project = rendered
    row = next(r for r in project.sentences() if r.text == "We sat.")
    path = project.cache.path_for(row.cache_key)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size: only the checksum can tell
    path.write_bytes(bytes(data))
    with pytest.raises(ProjectError, match="missing or corrupt"):
        export_chapters(project, tmp_path / "out", "wav", chapters=[0])  # no engine: refuse
    assert not list((tmp_path / "out").glob("*.wav"))
    assert next(r for r in project.sentences() if r.id == row.id).state == "pending"

    engine = CountingEngine(real_engine())
    render_project(project, engine)
    assert engine.spoken == ["We sat."]

    # truncated file: caught by the cheap check at render time
    row = next(r for r in project.sentences() if r.text == "It got dark.")
    project.cache.path_for(row.cache_key).write_bytes(b"RIFF")
    engine = CountingEngine(real_engine())
    render_project(project, engine)
    assert engine.spoken == ["It got dark."]

    # corrupt again, export with an engine at hand repairs on the spot
    row = next(r for r in project.sentences() if r.text == "Stars came out.")
    path = project.cache.path_for(row.cache_key)
    data = bytearray(path.read_bytes())
    data[-10] ^= 0x55
    path.write_bytes(bytes(data))
    engine = CountingEngine(real_engine())
    files = export_chapters(project, tmp_path / "out", "wav", engine=engine)
    assert engine.spoken == ["Stars came out."] and len(files) == 2


def test_export_rejects_unknown_chapters_and_names_safely(project: Project, tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="does not exist"):
        export_chapters(project, tmp_path, "wav", chapters=[5])
    assert safe_filename('A/B: "C"?', 3) == "03 - A B C"
    assert safe_filename("...", 12) == "12 - Chapter 12"
    # what Windows refuses: device names (with any extension), trailing dots and spaces
    assert [clean_filename(t, "Book") for t in ("CON", "nul.tar", "Com1", "Who? Me. ", "CONTACT")] == [
        "CON_", "nul_.tar", "Com1_", "Who Me", "CONTACT"]
    assert default_chapters(project) == [0, 1]


def test_cache_audio_is_16bit_wav_at_the_voice_rate(rendered: Project) -> None:
    project = rendered
    row = project.sentences([0])[1]
    path = project.cache.path_for(row.cache_key)
    assert path.parent.name == row.cache_key[:2] and path.suffix == ".wav"
    with wave.open(str(path)) as w:
        assert (w.getsampwidth(), w.getframerate()) == (2, 22050)
    audio = project.cache.load(project.cache_entry(row.cache_key))
    assert audio is not None and np.abs(audio).max() > 0.01


def test_heading_paragraph_is_spoken_once_as_the_title(tmp_path: Path) -> None:
    from studio.core.types import Book, Chapter

    book = Book("B", "A", "en", (Chapter("Chapter One", (para("Chapter One"), para("It began."))),))
    with Project.create(tmp_path / "p", book, new_project_settings(get_voice(None))) as project:
        assert [r.text for r in project.sentences()] == ["Chapter One", "It began."]
        render_project(project, CountingEngine(real_engine()))
        files = export_chapter_files(project, tmp_path / "out", "wav")
        heading, body = project.sentences()
        pauses = project.settings().pauses
        assert abs(files[0].duration - (heading.duration + pauses.title + body.duration + pauses.paragraph)) < 0.01


def test_changed_manuscript_is_reimported_and_unchanged_sentences_keep_their_audio(tmp_path: Path) -> None:
    from studio.project.opening import open_for_manuscript

    ms = tmp_path / "book.md"
    text = "---\ntitle: B\nlanguage: en\n---\n\n# B\n\n## One\n\nThe cat sat down. The dog ran off.\n\n## Two\n\nIt rained.\n"
    ms.write_text(text, encoding="utf-8")
    settings = new_project_settings(get_voice(None))
    opened = open_for_manuscript(ms, tmp_path / "p", settings)
    assert opened.action == "created"
    with opened.project as project:
        render_project(project, CountingEngine(real_engine()))
    opened = open_for_manuscript(ms, tmp_path / "p", settings)
    assert opened.action == "reopened"
    opened.project.close()

    ms.write_text(text.replace("The dog ran off.", "The dog walked home."), encoding="utf-8")
    opened = open_for_manuscript(ms, tmp_path / "p", settings)
    assert opened.action == "reimported"
    with opened.project as project:
        engine = CountingEngine(real_engine())
        render_project(project, engine)
        assert engine.spoken == ["The dog walked home."]

    other = tmp_path / "other.md"
    other.write_text("# X\n\nHello.\n", encoding="utf-8")
    with pytest.raises(ProjectError, match="is the project of"):
        open_for_manuscript(other, tmp_path / "p", settings)
