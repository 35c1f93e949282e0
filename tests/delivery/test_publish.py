"""Publish-ready export of a project rendered with the real bundled voice: M4B
chapters and cover read back by ffprobe, MP3/FLAC/Opus tags read back by mutagen,
the manifest, subtitles against the silences of the exported audio, the CLI."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from studio.audio.acx import AcxRules
from studio.audio.measure import read_audio, window_rms
from studio.audio.subtitles import parse_cues
from studio.core.errors import ProjectError
from studio.engine.voice.catalog import get_voice
from studio.delivery.credits import default_narrator
from studio.delivery.publish import PublishOptions, book_meta, publish
from studio.rendering.render import render_project
from studio.project.opening import new_project_settings
from studio.project.store import Project
from support.audio import agree_with_ffmpeg
from support.render import make_book, real_engine, studio_cmd
from support.publish import TOLERANCE, ffprobe_json, first_sound_after, project, publisher, speech_segments  # noqa: F401 - project: a fixture, named as an argument

pytestmark = pytest.mark.slow
PLAIN = {"credits": False, "sample": False}  # the book's chapters only (the package: test_publish_package.py)


@pytest.fixture(scope="module")
def cover(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cover") / "cover.jpg"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "color=c=0x336699:s=120x120", "-frames:v", "1",
                    str(path)], check=True)
    return path


@pytest.fixture(scope="module")
def published(project: Project, cover: Path, tmp_path_factory: pytest.TempPathFactory):
    """The book's chapters only, per format."""
    return publisher(project, tmp_path_factory.mktemp("out"), cover=cover, **PLAIN)


def test_m4b_has_every_chapter_the_cover_and_the_tags(published, project: Project, cover: Path) -> None:
    result = published("m4b")
    (book,) = result.files
    assert book.path.name == "Test Book.m4b"
    info = ffprobe_json(book.path, "-show_chapters", "-show_streams", "-show_format")
    chapters = info["chapters"]
    assert [c["tags"]["title"] for c in chapters] == ["Morning", "Evening"]
    assert all(c["time_base"] == "1/1000" for c in chapters)
    audio, rate = read_audio(book.path)
    for ch, mark in zip(chapters, book.chapters):
        start = float(ch["start_time"])
        assert abs(start - mark.start) < TOLERANCE
        # each chapter opens with its room tone, then the spoken title
        assert abs(first_sound_after(audio, rate, start) - (start + 0.75)) < TOLERANCE
    assert float(chapters[1]["end_time"]) == pytest.approx(float(info["format"]["duration"]), abs=TOLERANCE)
    pics = [s for s in info["streams"] if s.get("disposition", {}).get("attached_pic") == 1]
    assert len(pics) == 1 and pics[0]["codec_name"] == "mjpeg"
    audio_stream = next(s for s in info["streams"] if s["codec_type"] == "audio")
    assert (audio_stream["codec_name"], audio_stream["sample_rate"], audio_stream["channels"]) == ("aac", "44100", 1)
    tags = info["format"]["tags"]
    assert (tags["title"], tags["artist"], tags["composer"], tags["genre"], tags["date"]) == (
        "Test Book", "Ann Author", default_narrator(project), "Audiobook", "2025")
    assert tags["major_brand"].strip() == "M4B"
    from mutagen.mp4 import MP4

    assert bytes(MP4(str(book.path)).tags["covr"][0]) == cover.read_bytes()
    assert book.acx.passed, book.acx.text()
    agree_with_ffmpeg(book.path)


def test_mp3_per_chapter_tags_and_manifest(published, cover: Path) -> None:
    from mutagen.mp3 import MP3, BitrateMode

    result = published("mp3")
    assert [f.path.name for f in result.files] == ["01 - Morning.mp3", "02 - Evening.mp3"]
    for n, f in enumerate(result.files, 1):
        mp3 = MP3(str(f.path))
        assert (mp3.info.sample_rate, mp3.info.channels, round(mp3.info.bitrate / 1000)) == (44100, 1, 192)
        assert mp3.info.bitrate_mode == BitrateMode.CBR
        tags = mp3.tags
        assert str(tags["TIT2"]) == f.title and str(tags["TRCK"]) == f"{n}/2"
        assert (str(tags["TALB"]), str(tags["TPE1"]), str(tags["TCON"])) == ("Test Book", "Ann Author", "Audiobook")
        assert tags.getall("APIC")[0].data == cover.read_bytes() and tags.getall("APIC")[0].type == 3
        assert not tags.getall("CHAP")  # one chapter per file needs no chapter frames
        assert f.acx.passed, f.acx.text()
    agree_with_ffmpeg(result.files[0].path)

    doc = json.loads(result.manifest.read_text(encoding="utf-8"))
    assert doc["passed"] is True and doc["format"] == "mp3" and doc["book"]["title"] == "Test Book"
    for entry, f in zip(doc["files"], result.files):
        assert entry["file"] == f.path.name
        assert entry["sha256"] == hashlib.sha256(f.path.read_bytes()).hexdigest()
        fmt = ffprobe_json(f.path, "-show_format")["format"]  # its duration counts from the encoder delay on
        assert abs(entry["duration"] - (float(fmt["duration"]) - float(fmt["start_time"]))) < TOLERANCE
        assert entry["chapters"] == [{"title": f.title, "start": 0.0, "end": entry["duration"]}]
        assert entry["subtitles"] == [f.path.with_suffix(".srt").name, f.path.with_suffix(".vtt").name]
        assert entry["acx"]["passed"] and {c["name"] for c in entry["acx"]["checks"]} >= {"RMS", "peak", "noise floor"}
        for key in ("rms_db", "true_peak_db", "noise_floor_db", "lufs"):
            assert entry["levels"][key] == pytest.approx(getattr(f.levels, key), abs=0.001)


def test_single_file_mp3_has_id3_chapter_frames(published) -> None:
    from mutagen.id3 import ID3

    (book,) = published("mp3-single").files
    tags = ID3(str(book.path))
    (toc,) = tags.getall("CTOC")
    chaps = {c.element_id: c for c in tags.getall("CHAP")}
    assert list(toc.child_element_ids) == sorted(chaps) and len(chaps) == 2
    ordered = [chaps[i] for i in toc.child_element_ids]
    assert [str(c.sub_frames["TIT2"]) for c in ordered] == ["Morning", "Evening"]
    audio, rate = read_audio(book.path)
    assert ordered[0].start_time == 0 and ordered[0].end_time == ordered[1].start_time
    start = ordered[1].start_time / 1000
    assert abs(first_sound_after(audio, rate, start) - (start + 0.75)) < TOLERANCE
    assert abs(ordered[1].end_time / 1000 - len(audio) / rate) < TOLERANCE
    assert book.acx.passed


def test_subtitle_cues_match_the_silences_in_the_exported_audio(published) -> None:
    for f in published("mp3").files:
        audio, rate = read_audio(f.path)
        segments = speech_segments(audio, rate)
        for ext in (".srt", ".vtt"):
            cues = parse_cues(f.path.with_suffix(ext).read_text(encoding="utf-8"))
            assert len(cues) == len(segments), (cues, segments)
            for (start, end, _text), (a, b) in zip(cues, segments):
                assert abs(start - a) < TOLERANCE and abs(end - b) < TOLERANCE, (start, end, a, b)
        texts = [c[2] for c in parse_cues(f.path.with_suffix(".srt").read_text(encoding="utf-8"))]
        assert texts[0] == f.title  # the spoken chapter title is the first cue
    morning = parse_cues(published("mp3").files[0].path.with_suffix(".srt").read_text(encoding="utf-8"))
    assert [c[2] for c in morning] == ["Morning", "The sun came up.", "Birds sang.", "Tea was hot.", "We sat."]


def test_flac_and_opus_carry_vorbis_comments_and_cover(project: Project, cover: Path, tmp_path: Path) -> None:
    from mutagen import File

    for fmt, rate in (("flac", 44100), ("opus", 48000)):
        result = publish(project, tmp_path / fmt, PublishOptions(**PLAIN, fmt=fmt, chapters=[1], cover=cover, subtitles=False))
        (f,) = result.files
        audio = File(str(f.path))
        stream = ffprobe_json(f.path, "-show_streams")["streams"][0]
        assert (int(stream["sample_rate"]), stream["channels"], audio.info.channels) == (rate, 1, 1)
        assert (audio["title"], audio["album"], audio["artist"], audio["tracknumber"]) == (
            ["Evening"], ["Test Book"], ["Ann Author"], ["2"])  # the book's chapter 2, as the tree numbers it
        pictures = audio.pictures if fmt == "flac" else audio["metadata_block_picture"]
        assert len(pictures) == 1
        assert not list(f.path.parent.glob("*.srt"))
        assert next(c for c in f.acx.checks if c.name == "encoding").ok is None  # ACX takes MP3 only


def test_a_chapter_over_the_length_limit_is_split_at_a_paragraph(project: Project, tmp_path: Path) -> None:
    opts = PublishOptions(**PLAIN, fmt="wav", chapters=[0], rules=AcxRules(max_minutes=0.12))
    result = publish(project, tmp_path, opts)
    assert [f.path.name for f in result.files] == ["01 - Morning (part 1).wav", "01 - Morning (part 2).wav"]
    (split,) = [w for w in result.warnings if "split into" in w]
    assert "split into 2 files at paragraph breaks" in split and "no cover art" in " ".join(result.warnings)
    assert json.loads(result.manifest.read_text())["warnings"] == list(result.warnings)
    first, second = (parse_cues(f.path.with_suffix(".srt").read_text()) for f in result.files)
    assert [c[2] for c in first] == ["Morning", "The sun came up.", "Birds sang."]
    assert [c[2] for c in second] == ["Tea was hot.", "We sat."]


def test_incomplete_chapters_are_refused_and_nothing_is_synthesized(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p", make_book(), new_project_settings(get_voice(None))) as fresh:
        with pytest.raises(ProjectError, match="cannot export incomplete chapters; chapter 1: 5 not rendered"):
            publish(fresh, tmp_path / "out", PublishOptions(**PLAIN, fmt="m4b"))
        assert fresh.counts()["done"] == 0
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_epub_cover_is_used_by_default(shared_epubs: Path, tmp_path: Path) -> None:
    from studio.project.opening import open_for_manuscript
    from studio.text.formats.epub import read_cover

    epub = shared_epubs / "wasteland.epub"
    data, mime = read_cover(epub)
    assert mime == "image/jpeg" and data.startswith(b"\xff\xd8\xff")
    opened = open_for_manuscript(epub, tmp_path / "w.studio", new_project_settings(get_voice(None)))
    with opened.project as proj:
        meta = book_meta(proj, PublishOptions())
        assert meta.cover is not None and meta.cover.data == data
        assert meta.title == proj.book().title and meta.narrator == default_narrator(proj)


def test_cli_export_prints_the_acx_report(project: Project, tmp_path: Path) -> None:
    run = studio_cmd("export", str(project.folder), "-o", str(tmp_path / "out"), "--format", "mp3", "--acx",
                     "--chapters", "2", "--no-subtitles", "--no-credits", "--no-sample")
    assert run.returncode == 0, run.stderr
    assert "02 - Evening.mp3" in run.stdout and "ACX pass" in run.stdout
    assert "ACX check\n02 - Evening.mp3: PASS\n" in run.stdout and "encoding     mp3 192 kbit/s CBR" in run.stdout
    assert "1 file(s)" in run.stdout and "ACX check: 1 pass, 0 fail" in run.stdout
    assert "[book chapter 2]" in run.stdout and "ACX accepts synthetic (AI) narration only where" in run.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["02 - Evening.mp3", "manifest.json"]
    bad = studio_cmd("export", str(tmp_path), "-o", str(tmp_path / "x"))
    assert bad.returncode == 2 and "is not a studio project" in bad.stderr
    wrong = studio_cmd("export", str(project.folder), "-o", str(tmp_path / "x"), "--single-file")
    assert wrong.returncode == 2 and "--single-file is for --format mp3" in wrong.stderr


def test_publish_follows_chapter_control(project: Project, tmp_path: Path) -> None:
    """A renamed chapter is published under its new name; a file's number is the book's
    chapter number (the tree's), also when an earlier chapter is left out."""
    control = project.chapter_control
    control.set_included(0, False)
    control.rename(1, "Nightfall")
    try:
        result = publish(project, tmp_path / "wav", PublishOptions(**PLAIN, fmt="wav", subtitles=False))
        (f,) = result.files
        assert f.path.name.startswith("02 - Nightfall") and f.number == 2
        assert f.title == "Nightfall"
    finally:
        control.set_included(0, None)
        control.rename(1, None)


def test_m4b_chapter_marks_follow_a_merge_and_its_split(project: Project, tmp_path: Path) -> None:
    """Merged chapters are one M4B chapter under the first one's name; split back, two again."""
    control = project.chapter_control
    whole = publish(project, tmp_path / "before", PublishOptions(**PLAIN, fmt="m4b", subtitles=False)).files[0]
    control.merge_with_next(0)
    try:
        (book,) = publish(project, tmp_path / "merged", PublishOptions(**PLAIN, fmt="m4b", subtitles=False)).files
        marks = ffprobe_json(book.path, "-show_chapters")["chapters"]
        assert [c["tags"]["title"] for c in marks] == ["Morning"]
        assert [m.title for m in book.chapters] == ["Morning"]
        # one chapter: Evening's room tone at head and tail is gone, its title pause is a paragraph pause
        assert book.duration < whole.duration
    finally:
        control.split(0, 2)
    (again,) = publish(project, tmp_path / "split", PublishOptions(**PLAIN, fmt="m4b", subtitles=False)).files
    assert [c["tags"]["title"] for c in ffprobe_json(again.path, "-show_chapters")["chapters"]] == ["Morning", "Evening"]
    assert again.duration == pytest.approx(whole.duration, abs=0.001)
