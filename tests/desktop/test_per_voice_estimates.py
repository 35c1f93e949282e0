"""Estimates per voice (issue 47, point 2): the render's speed is kept per preset and voice, a
voice nobody measured keeps its pace from its first renders for every later project, a new voice
starts from its own figures, and a change of the estimate says why."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support.gui import TINY, write_manuscript
from support.window import WAIT, open_and_wait, wait_jobs_done

from studio.desktop.snapshot import build_snapshot, estimate_change
from studio.project.duration import FALLBACK, Timing, _rates, keep_voice_rate, voice_rate
from studio.project.opening import open_project
from studio.project.render_speed import remember_speed, seconds_per_sentence
from studio.ui.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("private_dirs")  # the kept paces go to this test's own cache folder


def test_render_speed_is_kept_per_preset_and_voice(tmp_path: Path) -> None:
    project = open_project(write_manuscript(tmp_path / "books", TINY), folder=tmp_path / "p.studio").project
    try:
        remember_speed(project.db, "fp32-cpu", "en_US-joe-medium", 2.0, 4)
        remember_speed(project.db, "fp32-cpu", "kokoro:jm_kumo", 9.0, 3)
        remember_speed(project.db, "fp32-cpu", "kokoro:jm_kumo", 3.0, 1)
        assert seconds_per_sentence(project.db, "fp32-cpu", "en_US-joe-medium") == pytest.approx(0.5)
        assert seconds_per_sentence(project.db, "fp32-cpu", "kokoro:jm_kumo") == pytest.approx(3.0)
        assert seconds_per_sentence(project.db, "int8-cpu", "kokoro:jm_kumo") is None
        assert seconds_per_sentence(project.db, "fp32-cpu", "kokoro:af_heart") is None  # never the other voice's
    finally:
        project.close()


class Row:
    """A rendered sentence as the estimates read it."""

    def __init__(self, text: str, duration: float) -> None:
        self.id, self.paragraph, self.text, self.state, self.duration = 0, 0, text, "done", duration


def test_a_voice_nobody_measured_keeps_its_pace_from_its_first_renders() -> None:
    voice = "kokoro:xx_nobody"
    assert voice_rate(voice).basis.startswith("a typical voice's pace")
    typical = voice_rate(voice)
    sentences = [f"The tide came in over the flats number {n} and the boats lifted off the mud." for n in range(12)]
    slow = [Row(t, 1.2 * typical.sentence(t)) for t in sentences]  # this voice speaks a fifth slower
    kept = keep_voice_rate(voice, 1.0, slow)
    assert kept is not None
    again = voice_rate(voice)  # any later project: this voice's own pace from the start
    assert again.basis == f"{voice}'s pace, measured on 12 sentences rendered before"
    assert again.sentence(sentences[0]) == pytest.approx(1.2 * typical.sentence(sentences[0]), rel=0.01)
    assert keep_voice_rate(voice, 1.0, slow[:6]) is None  # fewer sentences than kept: the kept pace stands
    measured = next(v for v in _rates() if v != FALLBACK)
    assert keep_voice_rate(measured, 1.0, slow) is None  # a voice measured by the benchmark keeps that


def test_a_new_pace_says_why_the_chapters_got_longer(tmp_path: Path) -> None:
    project = open_project(write_manuscript(tmp_path / "books", TINY), folder=tmp_path / "p.studio").project
    try:
        before = build_snapshot(project)
    finally:
        project.close()
    rate = before.timing.rate
    slower = replace(rate, per_sentence=rate.per_sentence * 1.19, per_char=rate.per_char * 1.19,
                     basis="calibrated on 14 rendered sentences")
    after = replace(before, timing=Timing(slower, before.timing.length_scale, before.timing.pauses),
                    chapters=tuple(replace(c, estimated_s=c.estimated_s * 1.19) for c in before.chapters))
    why = estimate_change(before, after)
    assert why.startswith("Chapter lengths are now estimated at calibrated on 14 rendered sentences (was ")
    assert why.endswith("the book 19% longer")
    assert estimate_change(before, replace(before, chapters=before.chapters)) == ""  # the same pace: nothing said


def test_another_voice_starts_from_its_own_speed_not_the_last_ones(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", TINY))
    session = window.session
    session.render_chapters([1])
    wait_jobs_done(qtbot, window)
    assert session.stats.seconds_per_sentence() is not None  # this voice's speed, measured
    settings = session.settings
    session.update_settings(settings.with_changes(voice_id="xx_XX-other-medium"))  # not installed: never rendered
    qtbot.waitUntil(lambda: session.settings.voice_id == "xx_XX-other-medium", timeout=WAIT)
    assert session.stats.seconds_per_sentence() is None  # nothing measured with it: no other voice's figure
    session.update_settings(settings)  # back: its own figure, kept with the project
    qtbot.waitUntil(lambda: session.settings.voice_id == settings.voice_id, timeout=WAIT)
    assert session.stats.seconds_per_sentence() is not None
