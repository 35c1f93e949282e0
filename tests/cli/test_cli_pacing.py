"""``studio render --speed/--*-pause``: stored in the project; pauses render nothing
again and lengthen the files by exactly the silence added; a new speed renders
every sentence again. Real CLI processes, the real bundled voice, real WAV files."""

from __future__ import annotations

import wave
from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.render import studio_cmd

from studio.project.store import Project

pytestmark = pytest.mark.slow


def seconds(path: Path) -> float:
    with wave.open(str(path), "rb") as w:
        return w.getnframes() / w.getframerate()


def test_pauses_and_speed_from_the_command_line(tmp_path: Path) -> None:
    book = write_manuscript(tmp_path / "books")
    out = tmp_path / "out"
    base = ("render", str(book), "-o", str(out), "--format", "wav", "--chapters", "2", "--in-process")
    first = studio_cmd(*base, "--paragraph-pause", "1", timeout=240)
    assert first.returncode == 0, first.stderr
    (wav,) = out.glob("*.wav")
    short = seconds(wav)

    again = studio_cmd(*base, "--paragraph-pause", "3.5", "--title-pause", "2.5", timeout=240)
    assert again.returncode == 0, again.stderr
    assert "0 synthesized" in again.stdout  # pauses render nothing again
    assert seconds(wav) == pytest.approx(short + 2.5 + 1.0, abs=0.01)  # one paragraph, one title
    with Project.open(out / "tiny.studio") as project:
        assert (project.settings().pauses.paragraph, project.settings().pauses.title) == (3.5, 2.5)

    faster = studio_cmd(*base, "--speed", "1.25", timeout=240)
    assert faster.returncode == 0, faster.stderr
    with Project.open(out / "tiny.studio") as project:
        assert project.settings().synthesis.length_scale == 0.8
        rows = project.sentences([1])
    assert f"{len(rows)} synthesized" in faster.stdout  # every sentence of the chapter, at the new speed
    # 2.5 s of speech comes out about 0.3 s shorter (pauses and phoneme rounding do not scale)
    assert seconds(wav) < short + 3.5 - 0.2

    wrong = studio_cmd(*base, "--speed", "3")
    assert wrong.returncode == 2 and "--speed" in wrong.stderr
