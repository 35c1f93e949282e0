"""Never lose work: a kill during export, a kill in the middle of a database write,
and a full disk during render or export -- with real processes, real files, a real
(small) file system where the machine allows mounting one.

Already covered elsewhere, not repeated here: SIGKILL and Ctrl-C during a render
(``test_cli.py``), newer/older project schemas (``test_project_store.py``, and the
CLI message in ``test_cli.py``), bit-flipped and truncated cache files
(``test_render.py``, and end to end in ``test_isolated_render.py``).
"""

from __future__ import annotations

import errno
import os
import random
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import DiskFull, ProjectError
from studio.core.types import Book, Chapter
from studio.engine.voice.catalog import get_voice
from studio.delivery.export import export_chapter_files
from studio.rendering.render import render_project
from studio.rendering.prep import prepare_voices
from studio.project.opening import new_project_settings
from studio.project.store import Project
from support.cli import db_rows, done_snapshot, write_manuscript
from support.render import REPO, CountingEngine, make_book, para, real_engine, studio_cmd

RATE = 22050


# ------------------------------------------------------------------ helpers


def cached_project(folder: Path, *, chapters: int = 3, sentences: int = 4, seconds: float = 2.0) -> Path:
    """A project whose every sentence is already rendered (tones, not speech: export
    needs audio, not a voice), so export runs as long as we like without synthesis."""
    book = Book(
        title="Long Book", author="Ann Author", language="en",
        chapters=tuple(
            Chapter(f"Part {c + 1}", (para(*[f"Sentence {i} of part {c + 1} is here." for i in range(sentences)]),))
            for c in range(chapters)
        ),
    )
    settings = new_project_settings(get_voice(None))
    with Project.create(folder, book, settings) as project:
        prepare_voices(project, {settings.voice_id})
        t = np.arange(int(seconds * RATE)) / RATE
        for k, row in enumerate(project.sentences()):
            audio = (0.3 * np.sin(2 * np.pi * (180 + 11 * k) * t)).astype(np.float32)
            project.mark_done(row.id, project.cache.store(row.expected_key, audio, RATE), synthesized=True)
    return folder


def expected_seconds(project_dir: Path, chapter: int) -> float:
    """What an exported chapter must last: its audio plus the pauses between."""
    with Project.open(project_dir) as project:
        rows = project.sentences([chapter])
        p = project.settings().pauses
    body = [r for r in rows if not r.is_title]
    return sum(r.duration for r in rows) + p.title + (len(body) - 1) * p.sentence + p.paragraph + p.chapter_end


def assert_complete(path: Path, seconds: float) -> None:
    """A finished chapter file: decodes from start to end without an error, full length."""
    decode = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-f", "null", "-"],
                            capture_output=True, text=True)
    assert decode.returncode == 0 and not decode.stderr.strip(), f"{path.name}: {decode.stderr}"
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
                           capture_output=True, text=True, check=True)
    assert abs(float(probe.stdout) - seconds) < 0.1, f"{path.name}: {probe.stdout.strip()} s, expected {seconds:.2f} s"
    if path.suffix == ".wav":
        import wave

        with wave.open(str(path)) as w:
            assert path.stat().st_size == 44 + 2 * w.getnframes(), "the WAV header does not match its data"


def temp_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith("."))


def chapter_files(folder: Path, fmt: str) -> list[str]:
    """Names of finished chapter files (pathlib's glob also matches hidden temp files)."""
    return sorted(p.name for p in folder.glob(f"*.{fmt}") if not p.name.startswith("."))


def one_line_error(stderr: str, needle: str) -> str:
    """The CLI's error: exactly one ``studio: error:`` line, the last, no traceback."""
    assert "Traceback" not in stderr, stderr
    errors = [ln for ln in stderr.splitlines() if ln.startswith("studio: error:")]
    assert len(errors) == 1 and stderr.strip().splitlines()[-1] == errors[0], stderr
    assert needle in errors[0], errors[0]
    return errors[0]


def fsync_fails_after(monkeypatch: pytest.MonkeyPatch, successes: int) -> list[int]:
    """From the (successes+1)-th file fsync on, ``os.fsync`` reports a full disk --
    the point where an atomic write commits its bytes. Directories are spared."""
    real = os.fsync
    calls: list[int] = []

    def fsync(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            calls.append(fd)
            if len(calls) > successes:
                raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


@pytest.fixture
def small_disk(tmp_path: Path):
    """``mount(name, size)``: a size-limited tmpfs under tmp_path (unmounted afterwards)."""
    mounted: list[Path] = []

    def mount(name: str, size: str) -> Path:
        where = tmp_path / name
        where.mkdir()
        if os.name != "posix" or os.geteuid() != 0 or not shutil.which("mount"):
            pytest.skip("mounting a small tmpfs needs root")
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def grow(where: Path, size: str) -> None:
    """"Free some space": the same file system, bigger."""
    subprocess.run(["mount", "-o", f"remount,size={size}", str(where)], check=True)


# ------------------------------------------------------------------ kill during export


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["wav", "mp3"])
def test_sigkill_of_the_whole_app_during_export_leaves_no_partial_chapter(tmp_path: Path, fmt: str) -> None:
    project = cached_project(tmp_path / "book.studio", chapters=3, sentences=5, seconds=12.0)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "studio", "render", str(project), "-o", str(out), "--format", fmt,
           "--sample-rate", "48000"]  # resampling makes each chapter take a second or so
    with open(tmp_path / "run1.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not [p for p in temp_files(out) if p.name.startswith(".02 - Part 2.") and p.stat().st_size > 0] \
                if out.is_dir() else True:
            assert proc.poll() is None, "the export finished before it could be killed"
            assert time.monotonic() < deadline, "chapter 2 never started"
            time.sleep(0.005)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the app and its ffmpeg, mid-chapter-2
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    # chapter 1 is finished and whole; chapter 2 exists only under its hidden temp name
    assert chapter_files(out, fmt) == [f"01 - Part 1.{fmt}"]
    assert_complete(out / f"01 - Part 1.{fmt}", expected_seconds(project, 0))
    assert [p.name.startswith(".02 - Part 2.") for p in temp_files(out)] == [True]
    assert db_rows(project / "project.sqlite", "PRAGMA integrity_check") == [("ok",)]

    rerun = studio_cmd(*cmd[3:], timeout=180)
    assert rerun.returncode == 0, rerun.stderr
    names = [f"0{c + 1} - Part {c + 1}.{fmt}" for c in range(3)]
    assert chapter_files(out, fmt) == names
    for c, name in enumerate(names):
        assert_complete(out / name, expected_seconds(project, c))
    assert temp_files(out) == [], "the killed export's temp file was not cleaned up"


# ------------------------------------------------------------------ kill mid-transaction

WRITER = r"""
import sys
from pathlib import Path
sys.path.insert(0, "tests")
from studio.core.types import Book, Chapter
from studio.project.store import Project
from support.render import para

def book(i):
    chapters = tuple(
        Chapter(f"Round {i} chapter {c}", tuple(para(f"Round {i} line {c}-{k}.", f"More {k}.") for k in range(150)))
        for c in range(8))
    return Book(title=f"Round {i}", author="A", language="en", chapters=chapters)

with Project.open(sys.argv[1]) as project:
    i = int(sys.argv[2])
    while True:
        i += 1
        project.replace_book(book(i))  # one transaction: delete everything, insert ~3,600 rows
        print(i, flush=True)
"""


@pytest.mark.slow
def test_sigkill_in_the_middle_of_database_writes_keeps_every_commit(tmp_path: Path) -> None:
    folder = tmp_path / "p.studio"
    Project.create(folder, make_book(), new_project_settings(get_voice(None))).close()
    db = folder / "project.sqlite"
    rng = random.Random(11)
    last = 0
    for kill in range(4):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(folder), str(last)], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        try:
            for _ in range(2):  # let it commit twice, then kill it at a random moment
                line = proc.stdout.readline()
                assert line, proc.stderr.read() if proc.stderr else ""
            time.sleep(rng.uniform(0.0, 0.15))
        finally:
            proc.send_signal(signal.SIGKILL)
            reported, _ = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        committed = int((line + reported).split()[-1])  # the last round it saw committed
        assert Path(f"{db}-wal").exists(), "the kill should leave a WAL to recover from"

        with Project.open(folder) as project:
            conn = project.db.read()
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
            book = project.book()
            # the last committed round is there in full (or the one after it, committed
            # between its COMMIT and its print), never a mix and never half of one
            current = int(book.title.split()[1])
            assert current in (committed, committed + 1), (committed, book.title)
            assert len(book.chapters) == 8 and all(len(c.paragraphs) == 150 for c in book.chapters)
            texts = {s.text.split()[1] for c in book.chapters for p in c.paragraphs for s in p.sentences
                     if s.text.startswith("Round")}
            assert texts == {str(current)}
            assert {c.title.split()[1] for c in book.chapters} == {str(current)}
            assert len(project.sentences()) == 8 * (1 + 150 * 2)
        last = current


# ------------------------------------------------------------------ disk full


def test_disk_full_during_render_stops_cleanly_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Injected at the OS boundary (fsync of the cache file), so it runs anywhere."""
    with Project.create(tmp_path / "p", make_book(), new_project_settings(get_voice(None))) as project:
        fsync_fails_after(monkeypatch, 3)
        engine = CountingEngine(real_engine())
        with pytest.raises(DiskFull, match=r"^disk full: no space left on device while writing .*cache.*; free some space"):
            render_project(project, engine)
        rows = project.sentences()
        assert [r.state for r in rows].count("done") == 3
        assert {r.state for r in rows} == {"done", "pending"}, "nothing may be left 'rendering' or marked failed"
        stopped = [r for r in rows if r.reason == "stopped: disk full"]
        assert len(stopped) == 1 and stopped[0].text == engine.spoken[-1]
        done_snapshot(project.folder)  # the finished sentences are intact
        assert not list(project.cache.root.glob("*/.*.tmp")), "the failed write left its temp file"

        monkeypatch.undo()  # space freed
        engine = CountingEngine(real_engine())
        assert render_project(project, engine).failed == 0
        assert project.counts()["done"] == 10
        assert all(r.synth_count <= 1 for r in project.sentences()), "a finished sentence was synthesized again"


def test_disk_full_during_export_keeps_finished_chapters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = cached_project(tmp_path / "p", chapters=3)
    out = tmp_path / "out"
    with Project.open(folder) as project:
        fsync_fails_after(monkeypatch, 1)
        with pytest.raises(DiskFull, match="02 - Part 2.wav"):
            export_chapter_files(project, out, "wav")
        assert [p.name for p in out.iterdir()] == ["01 - Part 1.wav"]  # no partial file, no temp file
        assert_complete(out / "01 - Part 1.wav", expected_seconds(folder, 0))
        assert project.counts()["done"] == 15
        monkeypatch.undo()
        assert len(export_chapter_files(project, out, "wav")) == 3


def test_disk_full_from_the_database_is_disk_full_too(tmp_path: Path) -> None:
    from studio.project.db import write_error

    full = sqlite3.OperationalError("database or disk is full")
    assert isinstance(write_error(full, tmp_path / "project.sqlite"), DiskFull)
    assert isinstance(write_error(sqlite3.OperationalError("no such table: x"), tmp_path), ProjectError)


@pytest.mark.slow
def test_cli_disk_full_during_render_then_rerun_after_freeing_space(tmp_path: Path, small_disk) -> None:
    disk = small_disk("disk", "640k")  # the project (~170 kB at schema 11) and a few sentences, not all
    ms = write_manuscript(tmp_path / "full.md", sentences=12, chapters=2)
    out = tmp_path / "out"
    project = disk / "full.studio"
    args = ("render", str(ms), "-o", str(out), "--format", "wav", "--project", str(project))

    full = studio_cmd(*args, timeout=300)
    assert full.returncode == 2, full.stderr
    one_line_error(full.stderr, "studio: error: disk full: ")
    db = project / "project.sqlite"
    assert db_rows(db, "PRAGMA integrity_check") == [("ok",)]
    states = dict(db_rows(db, "SELECT state, count(*) FROM sentences GROUP BY state"))
    assert states.get("done", 0) >= 2 and "failed" not in states, states
    before = done_snapshot(project)
    assert not out.exists() or chapter_files(out, "wav") == [], "nothing is exported from a stopped render"

    grow(disk, "64m")
    rerun = studio_cmd(*args, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    after = done_snapshot(project)
    assert len(after) == 14
    for sid, (key, count, ino, mtime) in before.items():
        assert after[sid] == (key, count, ino, mtime), "a finished sentence was rendered again"
    assert chapter_files(out, "wav") == ["01 - Part 1.wav", "02 - Part 2.wav"]


@pytest.mark.slow
@pytest.mark.parametrize("fmt, size", [("wav", "800k"), ("mp3", "300k")])
def test_cli_disk_full_during_export_then_rerun_after_freeing_space(
    tmp_path: Path, small_disk, fmt: str, size: str
) -> None:
    folder = cached_project(tmp_path / "book.studio", chapters=3)
    disk = small_disk("disk", size)  # room for chapter 1, not for chapter 2
    args = ("render", str(folder), "-o", str(disk), "--format", fmt)

    full = studio_cmd(*args, timeout=120)
    assert full.returncode == 2, full.stderr
    line = one_line_error(full.stderr, "studio: error: disk full: ")
    assert f"02 - Part 2.{fmt}" in line and "run the same command again" in line
    assert [p.name for p in disk.iterdir()] == [f"01 - Part 1.{fmt}"]  # no partial file, no temp file
    assert_complete(disk / f"01 - Part 1.{fmt}", expected_seconds(folder, 0))

    grow(disk, "16m")
    rerun = studio_cmd(*args, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    for c in range(3):
        assert_complete(disk / f"0{c + 1} - Part {c + 1}.{fmt}", expected_seconds(folder, c))
    assert temp_files(disk) == []
