"""The complete delivery package, with the real bundled voice, ffmpeg, mutagen and Pillow:
credits and retail sample (spoken, mastered, passing the checks), the synthetic-narration
disclosure, a portrait cover padded to a square, tags read back (year in ID3v2.3, album
artist, CHAP order), book-level subtitles against the M4B's audio, a title said once, and
exports that fail cleanly on a full disk and a read-only folder."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from studio.audio.cover import MIN_SIDE, fit_cover
from studio.audio.measure import read_audio
from studio.audio.subtitles import parse_cues
from studio.audio.tags import Cover
from studio.cli import main as studio_main
from studio.core.types import Book, Chapter
from studio.engine.voice.catalog import get_voice
from studio.delivery.credits import default_narrator, disclosure
from studio.delivery.publish import PublishOptions, publish
from studio.rendering.render import render_project
from studio.project.opening import new_project_settings
from studio.project.store import Project
from studio.desktop.snapshot import ParagraphNode, paragraph_label
from support.publish import TOLERANCE, ffprobe_json, first_sound_after, project, publisher, speech_segments  # noqa: F401 - fixtures
from support.render import make_book, para, real_engine

pytestmark = pytest.mark.slow


def jpeg(width: int, height: int, colour: tuple[int, int, int] = (40, 90, 160)) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


@pytest.fixture(scope="module")
def portrait(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cover") / "portrait.jpg"
    path.write_bytes(jpeg(1800, 2400))
    return path


@pytest.fixture(scope="module")
def packages(project: Project, portrait: Path, tmp_path_factory: pytest.TempPathFactory):
    """The complete package (credits, sample, the portrait cover padded), per format."""
    return publisher(project, tmp_path_factory.mktemp("out"), cover=portrait, cover_fit="pad")


def test_cover_fit_pads_and_crops_a_portrait_image() -> None:
    from PIL import Image

    tall = Cover(jpeg(1800, 2400), "image/jpeg")
    same, report = fit_cover(tall)
    assert same is tall and report.fit is None and "not square (1800 x 2400)" in report.warnings[0]
    padded, report = fit_cover(tall, "pad")
    image = Image.open(io.BytesIO(padded.data))
    assert image.size == (MIN_SIDE, MIN_SIDE) and image.mode == "RGB" and padded.mime == "image/jpeg"
    assert report.warnings == () and report.line() == "cover 1800 x 2400 -> 2400 x 2400 (padded)"
    corner = np.asarray(image.crop((0, 0, 50, 50)), dtype=float).mean(axis=(0, 1))
    assert np.allclose(corner, (40, 90, 160), atol=6)  # padded in the image's border colour
    cropped, report = fit_cover(tall, "crop")
    assert Image.open(io.BytesIO(cropped.data)).size == (1800, 1800)
    assert "below 2400 px" in report.warnings[0] and "use a larger image" in report.warnings[0]


def test_per_chapter_mp3_package(packages, project: Project) -> None:
    from mutagen.id3 import ID3

    result = packages("mp3")
    names = [f.path.name for f in result.files]
    assert names == ["00 - Opening credits.mp3", "01 - Morning.mp3", "02 - Evening.mp3", "03 - Closing credits.mp3",
                     "Test Book - Retail sample.mp3"]
    assert [f.kind for f in result.files] == ["credits", "chapter", "chapter", "credits", "sample"]
    assert [f.book_chapters for f in result.files] == [(), (1,), (2,), (), (1,)]
    assert [f.number for f in result.files] == [0, 1, 2, 3, None]  # credits outside the chapters' numbers
    assert result.acx_format and result.check_name == "ACX check"
    for f in result.files:
        assert f.acx.passed, f.acx.text()
        assert f.path.is_file() and f.path.with_suffix(".srt").is_file()
    opening = [c[2] for c in parse_cues(result.files[0].path.with_suffix(".srt").read_text())]
    assert opening[0] == "Test Book." and "Written by Ann Author." in opening
    closing = " ".join(c[2] for c in parse_cues(result.files[3].path.with_suffix(".srt").read_text()))
    assert closing.startswith("The end.") and "Recording produced in" in closing
    assert "Copyright" not in closing  # the book claims none: no copyright for its author (issue 32)
    assert disclosure(project) in closing
    sample = [c[2] for c in parse_cues(result.files[4].path.with_suffix(".srt").read_text())]
    assert sample[0] == "The sun came up." and "Morning" not in sample  # prose only, never a title or credits

    tags = ID3(str(result.files[1].path), translate=False)
    assert tags.version == (2, 3, 0)
    assert str(tags["TRCK"]) == "1/3"  # the book's 2 chapters, and the closing credits as 3
    assert str(tags["TYER"]) == "2025" and "TDRC" not in tags
    assert str(tags["TPE2"]) == "Ann Author" and str(tags["TCOM"]) == default_narrator(project)
    assert default_narrator(project).startswith("Synthetic voice (")
    assert disclosure(project) in str(tags.getall("COMM")[0])
    from PIL import Image

    assert Image.open(io.BytesIO(tags.getall("APIC")[0].data)).size == (2400, 2400)

    doc = json.loads(result.manifest.read_text())
    assert doc["check"] == "ACX check" and doc["book"]["disclosure"] == disclosure(project)
    assert doc["book"]["narrator"] == default_narrator(project)
    assert doc["book"]["cover"]["fit"] == "pad" and doc["book"]["cover"]["original"] == [1800, 2400]
    assert [e["book_chapters"] for e in doc["files"]] == [[], [1], [2], [], [1]]
    assert [e["number"] for e in doc["files"]] == [0, 1, 2, 3, None] and "opening credits are 0" in doc["numbering"]
    assert sorted(p.name for p in result.manifest.parent.iterdir()) == sorted(
        [*names, *(n.replace(".mp3", s) for n in names for s in (".srt", ".vtt")), "manifest.json"])


def test_m4b_package_has_credit_chapters_and_book_subtitles(packages) -> None:
    from mutagen.mp4 import MP4

    result = packages("m4b")
    book, sample = result.files
    assert (book.kind, sample.kind, sample.path.name) == ("book", "sample", "Test Book - Retail sample.mp3")
    assert not result.acx_format and result.check_name == "levels checked"
    assert book.acx.passed and sample.acx.passed
    chapters = ffprobe_json(book.path, "-show_chapters")["chapters"]
    assert [c["tags"]["title"] for c in chapters] == ["Opening credits", "Morning", "Evening", "Closing credits"]
    assert [p.name for p in book.subtitles] == ["Test Book.srt", "Test Book.vtt"]
    assert not list(book.path.parent.glob("0*"))  # no per-chapter subtitles beside a whole-book file
    audio, rate = read_audio(book.path)
    cues = parse_cues(book.subtitles[0].read_text(encoding="utf-8"))
    assert parse_cues(book.subtitles[1].read_text(encoding="utf-8")) == cues
    for ch in chapters:  # the book file's time at every chapter start: its first cue starts with its first word
        start = float(ch["start_time"])
        first = next(c for c in cues if c[0] >= start - TOLERANCE)
        assert abs(first[0] - first_sound_after(audio, rate, start)) < TOLERANCE, (ch, first)
    assert [c[2] for c in cues if c[2] in ("Morning", "Evening")] == ["Morning", "Evening"]
    tags = MP4(str(book.path)).tags
    assert tags["aART"] == ["Ann Author"] and "synthetic" in tags["\xa9cmt"][0] and "synthetic" in tags["desc"][0]
    # the README's figure: AAC set to 128 kbit/s, which ffmpeg's encoder overshoots on speech
    # to 130-150 kbit/s (the stream; the file's overall rate also counts the cover)
    stream = ffprobe_json(book.path, "-show_streams", "-select_streams", "a")["streams"][0]
    assert 125_000 <= int(stream["bit_rate"]) <= 150_000, stream["bit_rate"]


def test_single_file_mp3_chapter_frames_in_time_order(packages) -> None:
    from mutagen.id3 import ID3

    book, _sample = packages("mp3-single").files
    chapters = ffprobe_json(book.path, "-show_chapters")["chapters"]  # ffprobe lists CHAP frames in file order
    starts = [float(c["start_time"]) for c in chapters]
    assert starts == sorted(starts) and len(starts) == 4
    assert [c["tags"]["title"] for c in chapters] == ["Opening credits", "Morning", "Evening", "Closing credits"]
    tags = ID3(str(book.path), translate=False)
    assert str(tags["TYER"]) == "2025" and str(tags["TPE2"]) == "Ann Author"
    assert [p.name for p in book.subtitles] == ["Test Book.srt", "Test Book.vtt"]
    assert book.acx.passed and packages("mp3-single").check_name == "levels checked"


def test_opus_true_peak_is_met_after_decoding(packages) -> None:
    for f in packages("opus").files:
        assert f.levels.true_peak_db <= -3.0, (f.path.name, f.levels.true_peak_db)
        assert f.acx.passed, f.acx.text()


def test_a_repeated_chapter_title_is_spoken_once(tmp_path: Path) -> None:
    book = Book("Walls", "Ann Author", "en", (
        Chapter("2. Building", (para("Chapter 2. Building."), para("Walls went up."))),
    ), source="memory")
    with Project.create(tmp_path / "p", book, new_project_settings(get_voice(None))) as proj:
        render_project(proj, real_engine())
        result = publish(proj, tmp_path / "out", PublishOptions(fmt="wav", credits=False, sample=False))
        cues = [c[2] for c in parse_cues(result.files[0].path.with_suffix(".srt").read_text())]
        assert cues == ["Chapter 2. Building.", "Walls went up."]
        audio, rate = read_audio(result.files[0].path)
        assert len(speech_segments(audio, rate)) == 2  # the heading once, then the prose
    # a project with a title row whose first paragraph (here: edited) repeats the title with
    # "Chapter N": the heading paragraph is spoken, the title row is not
    book = Book("Walls", "Ann Author", "en", (Chapter("Building", (para("It rained."), para("Walls went up."))),),
                source="memory")
    with Project.create(tmp_path / "q", book, new_project_settings(get_voice(None))) as proj:
        title_row, first, _ = proj.sentences()
        assert title_row.is_title
        proj.edit_sentence(first.id, "Chapter 2: Building")
        render_project(proj, real_engine())
        result = publish(proj, tmp_path / "out2", PublishOptions(fmt="wav", credits=False, sample=False))
        cues = [c[2] for c in parse_cues(result.files[0].path.with_suffix(".srt").read_text())]
        assert cues == ["Chapter 2: Building", "Walls went up."]
    heading = ParagraphNode(0, 0, "Chapter 2. Building.", "en", 1.0, None, False, ())
    title = ParagraphNode(0, None, "2. Building", "en", 1.0, None, False, ())
    assert paragraph_label(heading, True) == "Spoken as the title: Chapter 2. Building."
    assert paragraph_label(title, True).startswith("Title (not spoken")
    assert paragraph_label(title, False) == "Title: 2. Building"


# ------------------------------------------------------------------ failing cleanly

FORMATS = ("m4b", "mp3", "mp3-single", "flac", "opus", "wav")


def _export(project: Project, out: Path, key: str, capsys, *extra: str) -> tuple[int, str]:  # noqa: ANN001
    capsys.readouterr()
    args = ["export", str(project.folder), "-o", str(out), "--format", key.split("-")[0], *extra]
    code = studio_main(args + (["--single-file"] if key.endswith("-single") else []))
    return code, capsys.readouterr().err


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture()
def small_fs(tmp_path: Path):
    """A 2 MB tmpfs (size-limited; we are root in CI), unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs needs root (the full-disk and read-only cases)")
    mnt = tmp_path / "small"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("key", FORMATS)
def test_a_full_disk_fails_cleanly(key: str, project: Project, portrait: Path, small_fs: Path, capsys) -> None:  # noqa: ANN001
    # A cover bigger than the space left after the audio: the MP3/FLAC/Opus/M4B tags are
    # what overflows, WAV (no tags) fills the disk with audio.
    from PIL import Image

    noise = np.random.default_rng(1).integers(0, 255, (420, 420, 3), dtype=np.uint8)
    cover = small_fs.parent / "noise.png"
    Image.fromarray(noise).save(cover)  # ~530 KB: noise does not compress
    filler = small_fs / "filler.bin"
    filler.write_bytes(b"\0" * (1_400_000 if key != "wav" else 1_700_000))
    before = _tree(small_fs)
    code, err = _export(project, small_fs / "book", key, capsys, "--cover", str(cover), "--no-credits", "--no-sample")
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.startswith("studio: error:")]
    assert len(lines) == 1 and "disk full" in lines[0], err
    assert "Traceback" not in err
    assert _tree(small_fs) == before  # nothing new: no folder, no subtitles, no temp files


@pytest.mark.parametrize("key", FORMATS)
def test_a_read_only_folder_fails_cleanly(key: str, project: Project, small_fs: Path, capsys) -> None:  # noqa: ANN001
    (small_fs / "books").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    code, err = _export(project, small_fs / "books" / "out", key, capsys, "--no-credits", "--no-sample")
    assert code == 2, err
    (line,) = err.strip().splitlines()[-1:]
    assert line.startswith("studio: error: cannot write the export in ") and "Read-only file system" in line, err
    assert _tree(small_fs) == ["books"]


def test_a_corrupt_cache_leaves_no_folder(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    with Project.create(tmp_path / "p", make_book(), new_project_settings(get_voice(None))) as proj:
        render_project(proj, real_engine())
        row = proj.sentences([1])[1]
        path = proj.cache.path_for(row.cache_key)
        path.write_bytes(path.read_bytes()[:100])
    with Project.open(tmp_path / "p") as proj:
        code, err = _export(proj, tmp_path / "new" / "out", "mp3", capsys, "--no-credits", "--no-sample")
    assert code == 2 and "chapter 2 has missing or corrupt audio in the cache" in err
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("fmt", ("wav", "mp3", "flac", "opus"))
def test_the_plain_chapter_export_fails_cleanly_on_a_full_disk(fmt: str, project: Project, small_fs: Path,
                                                               tmp_path: Path) -> None:
    """`studio render -o`'s export: only complete chapter files stay, and the message names them."""
    from studio.core.errors import StudioError
    from studio.delivery.export import export_chapter_files

    (first,) = export_chapter_files(project, tmp_path / "probe", fmt, [0])
    room = int(first.path.stat().st_size * 1.4)  # the first chapter fits, the second does not
    free = os.statvfs(small_fs).f_bavail * os.statvfs(small_fs).f_frsize
    (small_fs / "filler.bin").write_bytes(b"\0" * (free - room))
    with pytest.raises(StudioError) as caught:
        export_chapter_files(project, small_fs / "plain" / "out", fmt)
    message = str(caught.value)
    assert message.startswith("disk full:") and "Traceback" not in message, message
    assert message.endswith(f"[1 chapter file(s) written before it are complete: 01 - Morning.{fmt}]"), message
    assert _tree(small_fs / "plain") == ["out", f"out/01 - Morning.{fmt}"]


def test_the_plain_chapter_export_into_a_read_only_folder(project: Project, small_fs: Path) -> None:
    from studio.core.errors import StudioError
    from studio.delivery.export import export_chapter_files

    (small_fs / "books").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    with pytest.raises((StudioError, OSError)):
        export_chapter_files(project, small_fs / "books" / "out", "mp3")
    assert _tree(small_fs) == ["books"]


def test_staging_clears_a_killed_exports_folder_and_keeps_a_running_ones(tmp_path: Path) -> None:
    from studio.delivery.staging import Staging

    dead, live = tmp_path / ".studio-export-dead", tmp_path / ".studio-export-live"
    for folder, pid in ((dead, 2 ** 22 + 12345), (live, os.getpid())):
        folder.mkdir()
        (folder / ".owner").write_text(str(pid))
        (folder / "01 - One.mp3").write_bytes(b"half")
    with Staging(tmp_path) as stage:
        stage.path("a.txt").write_text("a")
        assert not dead.exists() and live.exists()
        stage.commit(["a.txt"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [".studio-export-live", "a.txt"]
    with pytest.raises(RuntimeError), Staging(tmp_path / "new" / "out") as stage:
        stage.path("b.txt").write_text("b")
        raise RuntimeError("boom")
    assert not (tmp_path / "new").exists()
