"""The ``studio`` command line, run for real as ``python -m studio`` subprocesses."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from studio.cli.common import parse_chapters
from studio.core.errors import StudioError
from support.render import REPO, ffprobe_duration, studio_cmd
from support.cli import db_rows, done_snapshot, wait_for_done, write_manuscript

SAMPLE = REPO / "resources" / "sample.md"


def assert_one_line_error(proc: subprocess.CompletedProcess, needle: str = "") -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("studio: error: "), proc.stderr
    assert needle in lines[0]


def start_render(ms: Path, out: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "studio", "render", str(ms), "-o", str(out), "--format", "wav"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=open(log, "w"),  # noqa: SIM115
    )


# ------------------------------------------------------------------ commands


def test_voices_lists_the_bundled_voice() -> None:
    proc = studio_cmd("voices")
    assert proc.returncode == 0, proc.stderr
    header, *rows = proc.stdout.splitlines()
    assert header.split()[:4] == ["ID", "LANGUAGE", "SPEAKERS", "PRESETS"]
    joe = next(r for r in rows if r.startswith("en_US-joe-medium"))
    assert "fp32-cpu" in joe and "en_US" in joe and "22050 Hz" in joe


def test_inspect_sample_reports_chapters_languages_and_flags() -> None:
    proc = studio_cmd("inspect", str(SAMPLE), "--long-chapter-minutes", "1.5")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "The Lighthouse Keeper's Daughter" in out
    assert "Chapter One: The Lamp" in out and "Chapter Three: The Storm" in out
    assert "languages: en, fr" in out
    assert "LONG" in out and "runs about" in out  # chapter 3 (~1:52 at the voice's rate) is over 1.5 minutes
    assert out.count("LONG") == 1 and "measured rate, with pauses" in out  # not a flat 155 words per minute
    assert "split" in out and "no 'fr' voice" in out


@pytest.mark.slow
def test_render_sample_chapter_to_mp3_then_resume_is_free(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ("render", str(SAMPLE), "-o", str(out), "--format", "mp3", "--chapters", "1", "--sample-rate", "44100")
    proc = studio_cmd(*args, timeout=240)
    assert proc.returncode == 0, proc.stderr
    files = sorted(out.glob("*.mp3"))
    assert [f.name for f in files] == ["01 - Chapter One The Lamp.mp3"]
    assert "real time" in proc.stdout and "real-time factor" in proc.stdout
    duration = ffprobe_duration(files[0])
    assert 40 < duration < 150
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=sample_rate:format_tags=album,track",
                            "-of", "default=nw=1", str(files[0])], capture_output=True, text=True).stdout
    assert "sample_rate=44100" in probe and "TAG:album=The Lighthouse Keeper's Daughter" in probe
    assert "TAG:track=1/3" in probe
    project = out / "sample.studio"
    assert (project / "project.sqlite").is_file()

    again = studio_cmd(*args)
    assert again.returncode == 0, again.stderr
    assert "reopened project" in again.stderr and "0 synthesized" in again.stdout
    # the project folder itself is a valid input too
    wav = studio_cmd("render", str(project), "-o", str(tmp_path / "wav"), "--format", "wav", "--chapters", "1")
    assert wav.returncode == 0, wav.stderr
    assert [f.name for f in (tmp_path / "wav").glob("*.wav")] == ["01 - Chapter One The Lamp.wav"]


def test_user_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    assert_one_line_error(studio_cmd("render", str(tmp_path / "missing.md"), "-o", str(tmp_path)), "no such file")
    assert_one_line_error(studio_cmd("inspect", str(tmp_path / "missing.md")), "no such file")
    assert_one_line_error(studio_cmd("inspect", str(tmp_path)), "folder")
    assert_one_line_error(studio_cmd("render", str(tmp_path), "-o", str(tmp_path / "o")), "not a studio project")
    odd = tmp_path / "book.xyz"
    odd.write_text("hello", encoding="utf-8")
    assert_one_line_error(studio_cmd("inspect", str(odd)), "book.xyz")
    ms = write_manuscript(tmp_path / "ms.md", sentences=3, chapters=1)
    assert_one_line_error(studio_cmd("render", str(ms), "-o", str(tmp_path / "o"), "--chapters", "7"), "chapter 7")
    assert_one_line_error(studio_cmd("render", str(ms), "-o", str(tmp_path / "o"), "--voice", "nobody"), "nobody")
    # a project folder made for another manuscript is not hijacked
    other = write_manuscript(tmp_path / "other.md", sentences=4, chapters=1)
    (tmp_path / "o").mkdir(exist_ok=True)
    from studio.project.opening import new_project_settings, open_for_manuscript
    from studio.engine.voice.catalog import get_voice

    open_for_manuscript(other, tmp_path / "shared.studio", new_project_settings(get_voice(None))).project.close()
    assert_one_line_error(
        studio_cmd("render", str(ms), "-o", str(tmp_path / "o"), "--project", str(tmp_path / "shared.studio")),
        "is the project of",
    )
    newer = tmp_path / "shared.studio" / "project.sqlite"
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    assert_one_line_error(studio_cmd("render", str(newer.parent), "-o", str(tmp_path / "o")), "newer version")


def test_parse_chapters() -> None:
    assert parse_chapters("1,3-5", 6) == [0, 2, 3, 4]
    assert parse_chapters(" 2 , 2 ", 3) == [1]
    for bad in ("0", "7", "a", "3-1", ","):
        with pytest.raises(StudioError):
            parse_chapters(bad, 6)


# ------------------------------------------------------------------ interruption


@pytest.mark.slow
def test_sigkill_mid_render_then_resume_synthesizes_nothing_twice(tmp_path: Path) -> None:
    ms = write_manuscript(tmp_path / "kill.md", sentences=22)
    out = tmp_path / "out"
    project = out / "kill.studio"
    db = project / "project.sqlite"
    proc = start_render(ms, out, tmp_path / "run1.log")
    try:
        wait_for_done(db, proc, at_least=4)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    assert db_rows(db, "PRAGMA integrity_check") == [("ok",)]
    assert db_rows(db, "PRAGMA foreign_key_check") == []
    before = done_snapshot(project)
    total = db_rows(db, "SELECT count(*) FROM sentences")[0][0]
    assert 4 <= len(before) < total, "the kill should land mid-render"
    assert all(count == 1 for _key, count, _ino, _mtime in before.values())

    resume = studio_cmd("render", str(ms), "-o", str(out), "--format", "wav", timeout=240)
    assert resume.returncode == 0, resume.stderr
    assert "reopened project" in resume.stderr
    after = done_snapshot(project)
    assert len(after) == total
    for sid, (key, count, ino, mtime) in before.items():
        assert after[sid] == (key, count, ino, mtime), "a finished sentence was rendered again"
    assert all(count == 1 for _key, count, _ino, _mtime in after.values()), "some sentence was synthesized twice"
    assert f"{total - len(before)} synthesized" in resume.stdout
    assert sorted(f.name for f in out.glob("*.wav")) == ["01 - Part 1.wav", "02 - Part 2.wav"]
    assert not list(project.glob("cache/*/.*.tmp")), "temp files of the killed write were not cleaned up"


@pytest.mark.slow
def test_ctrl_c_exits_130_and_resumes(tmp_path: Path) -> None:
    ms = write_manuscript(tmp_path / "intr.md", sentences=14)
    out = tmp_path / "out"
    db = out / "intr.studio" / "project.sqlite"
    log = tmp_path / "run1.log"
    proc = start_render(ms, out, log)
    try:
        wait_for_done(db, proc, at_least=2)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = log.read_text()
    assert proc.returncode == 130, stderr
    assert "interrupted; finished sentences are kept, run the same command to resume" in stderr
    assert "Traceback" not in stderr
    done = db_rows(db, "SELECT count(*) FROM sentences WHERE state = 'done'")[0][0]
    assert done >= 2

    resume = studio_cmd("render", str(ms), "-o", str(out), "--format", "wav", timeout=240)
    assert resume.returncode == 0, resume.stderr
    assert db_rows(db, "SELECT max(synth_count), min(synth_count) FROM sentences") == [(1, 1)]
    assert len(list(out.glob("*.wav"))) == 2


@pytest.mark.skipif(not (Path(sys.executable).parent / "studio").exists(), reason="console script not installed")
def test_console_script_entry_point() -> None:
    proc = subprocess.run([str(Path(sys.executable).parent / "studio"), "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("studio ")
    assert os.access(Path(sys.executable).parent / "studio", os.X_OK)


def test_help_imports_nothing_heavy() -> None:
    """``studio --help`` and ``studio render --help`` stay quick: no numpy, no model runtime, no Qt
    (the start-up budget of a help screen is 0.3 s; ``bench/startup.py`` times it)."""
    heavy = ("numpy", "onnxruntime", "torch", "PySide6", "lingua")
    for args in (["--help"], ["render", "--help"], ["gui", "--help"]):
        probe = (
            "import sys\nfrom studio.__main__ import main\n"
            f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
            f"print([m for m in {heavy!r} if m in sys.modules], file=sys.stderr)"
        )
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stderr.strip().splitlines()[-1] == "[]", (args, done.stderr)


def test_the_launcher_hands_gui_to_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``studio gui`` comes from the desktop layer through the launcher (studio/__main__.py);
    the command line alone does not know it (it never names the UI)."""
    from studio.cli import build_parser

    done = studio_cmd("--help")
    assert done.returncode == 0 and "gui" in done.stdout and "start the desktop studio" in done.stdout
    with pytest.raises(SystemExit):
        build_parser().parse_args(["gui"])
    assert "invalid choice: 'gui'" in capsys.readouterr().err


@pytest.mark.slow
def test_the_sample_render_prints_only_the_studios_own_lines(tmp_path: Path) -> None:
    """A new user's first render, on a machine that builds everything for the first time:
    no library warning between the studio's lines; ``-v`` shows the build in the log."""
    env = {**os.environ, "STUDIO_CACHE_DIR": str(tmp_path / "cache"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    proc = studio_cmd("render", str(SAMPLE), "-o", str(tmp_path / "out"), "--format", "wav", "--chapters", "1",
                      env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.replace("\r", "\n").splitlines() if ln.strip()]
    assert lines and all(ln.startswith(("studio:", "rendering")) for ln in lines), lines
    assert not any("onnxruntime" in ln or "Warning" in ln for ln in lines), lines

    verbose = studio_cmd("-v", "render", str(SAMPLE), "-o", str(tmp_path / "again"), "--format", "wav",
                         "--chapters", "1", env={**env, "STUDIO_CACHE_DIR": str(tmp_path / "cache2")}, timeout=300)
    assert verbose.returncode == 0, verbose.stderr
    assert "optimized decoder for this CPU" in verbose.stderr
