"""Duration estimates against real exports; speed and pauses as project settings.

Real project files and SQLite, real prose (the sample manuscript's first chapter),
the real bundled voice and the real render loop and export. Lengths, not timings.
"""

from __future__ import annotations

import wave
from dataclasses import replace
from pathlib import Path

import pytest
from support.takes import Lent
from support.voice import bundled_engine

from studio.audio.assemble import Pauses
from studio.core.speed import length_scale_of, speed_of
from studio.engine.base import SynthesisSettings
from studio.engine.voice.catalog import get_voice
from studio.delivery.export import export_chapter_files
from studio.rendering.render import render_project
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.duration import (
    MIN_CALIBRATION_S,
    SpeakingRate,
    Timing,
    chapter_estimates,
    chapter_seconds,
    project_timing,
    voice_rate,
)

pytestmark = pytest.mark.slow

PAUSES = Pauses(sentence=0.5, paragraph=1.1, title=2.0, chapter_end=0.7)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory, resources: Path):
    """The sample book's first chapter, estimated before and exported after one render."""
    root = tmp_path_factory.mktemp("duration")
    with pytest.MonkeyPatch.context() as mp:
        for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            mp.setenv(var, str(root / var.lower()))
        mp.delenv("STUDIO_CACHE_DIR", raising=False)
        project = open_for_manuscript(resources / "sample.md", root / "sample.studio",
                                      new_project_settings(get_voice(None))).project
        chapter = next(c.index for c in project.chapters() if c.title.startswith("Chapter One"))
        project.update_settings(project.settings().with_changes(pauses=PAUSES))
        before = chapter_estimates(project)[chapter]
        render_project(project, Lent(bundled_engine()), chapters={chapter})
        (exported,) = export_chapter_files(project, root / "out", "wav", [chapter])
        yield project, chapter, before, exported
        project.close()


def wav_seconds(path: Path) -> float:
    with wave.open(str(path), "rb") as w:
        return w.getnframes() / w.getframerate()


def test_estimate_before_rendering_is_within_ten_percent_of_the_exported_chapter(rendered) -> None:
    _project, _chapter, before, exported = rendered
    length = wav_seconds(exported.path)
    assert length > 60  # real prose, about a minute and a half
    assert abs(before - length) / length < 0.10, (before, length)


def test_a_rendered_chapter_is_estimated_at_its_exported_length_pauses_included(rendered) -> None:
    project, chapter, _before, exported = rendered
    after = chapter_estimates(project)[chapter]
    assert after == pytest.approx(wav_seconds(exported.path), abs=0.01)
    rows = project.sentences([chapter])
    speech = sum(r.duration or 0.0 for r in rows)
    assert after - speech > PAUSES.title + PAUSES.chapter_end + 3 * PAUSES.paragraph  # the gaps count


def test_rendered_sentences_calibrate_the_rate_for_the_rest_of_the_book(rendered) -> None:
    project, _chapter, _before, _exported = rendered
    rows = project.sentences()
    done = [r for r in rows if r.state == "done"]
    assert sum(r.duration for r in done) > MIN_CALIBRATION_S
    timing = project_timing(project.settings().voice_id, 1.0, PAUSES, rows)
    assert timing.rate.basis.startswith("calibrated on")
    assert sum(timing.rate.sentence(r.text) for r in done) == pytest.approx(sum(r.duration for r in done))
    # a sentence not rendered yet is predicted; the voice's own figures say the same within 10 %
    measured = voice_rate(project.settings().voice_id)
    assert timing.rate.per_char == pytest.approx(measured.per_char, rel=0.10)


def test_pause_layout_follows_the_assembly() -> None:
    """Title pause, sentence pauses inside a paragraph, the paragraph pause after its last
    sentence, nothing for a silent row, the chapter-end pause; the heading paragraph is the title."""

    class Row:
        def __init__(self, paragraph: int | None, text: str, duration: float | None = None) -> None:
            self.paragraph, self.text, self.duration = paragraph, text, duration
            self.state = "done" if duration is not None else "pending"
            self.id = id(self)

    rate = SpeakingRate(per_sentence=0.5, per_char=0.1)
    timing = Timing(rate, 1.0, Pauses(sentence=0.3, paragraph=1.0, title=2.0, chapter_end=0.25))
    rows = [Row(None, "Title", 1.5), Row(0, "abcde", 2.0), Row(0, "abcdefghij"), Row(1, "* * *"), Row(2, "ab")]
    title = 1.5 + 2.0
    para0 = 2.0 + 0.3 + (0.5 + 1.0) + 1.0
    para2 = (0.5 + 0.2) + 1.0
    assert chapter_seconds(rows, False, timing) == pytest.approx(title + para0 + para2 + 0.25)
    heading = [Row(0, "One"), Row(0, "Two"), Row(1, "abcde", 2.0)]
    spoken = (0.5 + 0.3) + 0.3 + (0.5 + 0.3) + 2.0 + 2.0 + 1.0 + 0.25
    assert chapter_seconds(heading, True, timing) == pytest.approx(spoken)
    slower = replace(timing, length_scale=1.2)
    assert chapter_seconds([Row(0, "abcde")], False, slower) == pytest.approx((0.5 + 0.5) * 1.2 + 1.0 + 0.25)
    assert chapter_seconds([], True, timing) == 0.0
    own = {rows[1].id: 2.5, rows[2].id: 0.0}  # pauses the producer set after single sentences
    assert chapter_seconds(rows, False, timing, own) == pytest.approx(title + para0 + para2 + 0.25 + 2.2 - 1.0)


def test_new_pauses_render_nothing_and_a_new_speed_renders_everything(rendered) -> None:
    project, chapter, _before, _exported = rendered
    start = project.settings()
    keys = {r.id: r.cache_key for r in project.sentences([chapter])}
    estimate = chapter_estimates(project)[chapter]

    try:
        project.update_settings(start.with_changes(pauses=replace(PAUSES, paragraph=2.5)))
        rows = project.sentences([chapter])
        assert all(r.state == "done" and r.cache_key == keys[r.id] for r in rows)
        assert chapter_estimates(project)[chapter] > estimate + 1.0  # more than one paragraph: longer

        faster = replace(start.synthesis, length_scale=length_scale_of(1.2))
        project.update_settings(start.with_changes(synthesis=faster))
        assert all(r.state == "pending" for r in project.sentences([chapter]))
        assert chapter_estimates(project)[chapter] < estimate * 0.95  # 1.2x: the speech a sixth shorter
    finally:
        project.update_settings(start)
    assert all(r.state == "done" for r in project.sentences([chapter]))  # back at 1.0x: the old audio again


def test_default_speed_keeps_the_cache_keys_of_older_projects() -> None:
    assert length_scale_of(1.0) == 1.0 and speed_of(1.0) == 1.0
    default = SynthesisSettings()
    assert replace(default, length_scale=length_scale_of(1.0)).cache_token() == default.cache_token()
    assert speed_of(length_scale_of(1.1)) == pytest.approx(1.1, abs=1e-4)
    with pytest.raises(ValueError):
        length_scale_of(2.0)


def test_a_voice_nobody_measured_gets_the_fallback_rate() -> None:
    assert voice_rate("xx_XX-nobody-low").basis.startswith("a typical voice")
    assert voice_rate("en_US-joe-medium").basis == "measured on en_US-joe-medium"


def test_numbers_count_as_the_words_a_reader_says() -> None:
    from studio.text.spoken_length import number_words, spoken_chars

    assert number_words("1,542,180") == "one million five hundred forty two thousand one hundred eighty"
    assert number_words("1880") == "eighteen eighty" and number_words("2004") == "two thousand four"
    assert number_words("19.1") == "nineteen point one" and number_words("0") == "zero"
    assert spoken_chars("In 1880, 20% rose.") == len("Ineighteeneightytwentypercentrose")
    assert spoken_chars("* * *") == 0
