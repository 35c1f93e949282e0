"""The pre-flight report: durations, long chapters, split sentences, missing voices."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.text.language import apply_language_override
from studio.text.inspect import inspect_book
from studio.text.importer import load_manuscript


@pytest.fixture(scope="module")
def sample(resources: Path):  # noqa: ANN201
    return load_manuscript(resources / "sample.md")


def test_word_counts_and_durations(sample) -> None:  # noqa: ANN001
    report = inspect_book(sample, words_per_minute=100)
    assert [c.word_count for c in report.chapters] == [c.word_count for c in sample.chapters]
    assert report.word_count == sample.word_count
    first = report.chapters[0]
    assert first.duration_seconds == pytest.approx(first.word_count / 100 * 60)
    assert report.duration_seconds == pytest.approx(sample.word_count / 100 * 60)
    assert report.chapters[1].languages == ("en", "fr")
    assert report.languages == ("en", "fr")
    assert not report.long_chapters and not any(c.too_long for c in report.chapters)


def test_long_chapter_flag(sample) -> None:  # noqa: ANN001
    report = inspect_book(sample, words_per_minute=155, long_chapter_minutes=2)
    assert [c.index for c in report.long_chapters] == [c.index for c in report.chapters if c.word_count > 310]
    assert report.long_chapters
    assert any("minutes" in line for line in report.warnings())


def test_split_sentences_reported(sample) -> None:  # noqa: ANN001
    report = inspect_book(sample)
    storm = report.chapters[2]
    assert storm.split_sentence_count == 1
    split = storm.split_sentences[0]
    assert split.pieces >= 2 and split.preview.startswith("The storm came")
    para = sample.chapters[2].paragraphs[split.paragraph_index]
    assert para.sentences[split.sentence_index].was_split
    assert report.split_sentence_count == 1
    assert any("split" in line for line in report.warnings())


def test_split_sentence_count_with_a_small_cap(tmp_path: Path) -> None:
    text = ("First long sentence, " * 20).strip() + ". Short one. " + ("Second long one, " * 20).strip() + "."
    path = tmp_path / "two.txt"
    path.write_text(text, encoding="utf-8")
    report = inspect_book(load_manuscript(path, max_sentence_chars=100))
    assert report.split_sentence_count == 2
    assert [s.pieces >= 4 for s in report.chapters[0].split_sentences] == [True, True]


def test_passages_without_a_voice(sample) -> None:  # noqa: ANN001
    assert inspect_book(sample).unvoiced == ()  # no voice list: nothing to check
    report = inspect_book(sample, voice_languages={"en_US"})
    assert report.missing_voice_languages == ("fr",)
    (passage,) = report.unvoiced
    assert passage.chapter_index == 1 and passage.language == "fr"
    assert passage.preview.startswith("Ma grand-m\u00e8re") and len(passage.preview) <= 80
    assert inspect_book(sample, voice_languages={"en_GB", "fr_FR"}).unvoiced == ()
    everything = inspect_book(sample, voice_languages=set())
    assert len(everything.unvoiced) == sum(len(c.paragraphs) for c in sample.chapters)


def test_override_changes_what_needs_a_voice(sample) -> None:  # noqa: ANN001
    (passage,) = inspect_book(sample, voice_languages={"en"}).unvoiced
    fixed = apply_language_override(sample, passage.chapter_index, passage.paragraph_index, "en")
    assert inspect_book(fixed, voice_languages={"en"}).unvoiced == ()


def test_report_is_frozen(sample) -> None:  # noqa: ANN001
    report = inspect_book(sample)
    with pytest.raises(AttributeError):
        report.title = "x"  # type: ignore[misc]
    with pytest.raises(ValueError):
        inspect_book(sample, words_per_minute=0)
