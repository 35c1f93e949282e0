"""Language detection per paragraph, inheritance for short passages, overrides."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from studio.core.language import language_family as normalize_language_code
from studio.text.language import apply_language_override, detect_language
from studio.text.importer import load_manuscript
from studio.text.detector import clear_cache
from studio.text.language import assign_languages

ENGLISH = (
    "The harbour was quiet that morning and the boats rocked gently against the wall. "
    "Nobody in the village could remember a calmer sea at this time of the year."
)
FRENCH = (
    "Le port \u00e9tait calme ce matin-l\u00e0 et les bateaux se balan\u00e7aient doucement contre le mur. "
    "Personne au village ne se souvenait d'une mer aussi tranquille \u00e0 cette \u00e9poque de l'ann\u00e9e."
)
GERMAN = (
    "Der Hafen war an diesem Morgen ruhig und die Boote schaukelten sanft an der Mauer. "
    "Niemand im Dorf konnte sich an ein so ruhiges Meer zu dieser Jahreszeit erinnern."
)


@pytest.mark.parametrize(
    "raw, code",
    [("en-US", "en"), ("en_GB", "en"), ("zh-cn", "zh"), ("zh-TW", "zh"), ("FR", "fr"), ("fra", "fr"),
     ("iw", "he"), ("English", "en"), ("", ""), (None, ""), ("x-klingon", ""), ("123", "")],
)
def test_normalize_language_code(raw: str | None, code: str) -> None:
    assert normalize_language_code(raw) == code


def test_detect_language_basic_and_deterministic() -> None:
    assert detect_language(ENGLISH)[0] == "en"
    assert detect_language(FRENCH)[0] == "fr"
    assert detect_language(GERMAN)[0] == "de"
    assert detect_language("12345 !!!") == ("", 0.0)
    code, prob = detect_language(FRENCH)
    assert 0.8 <= prob <= 1.0
    clear_cache()
    assert detect_language(FRENCH) == (code, prob)


def test_detection_is_thread_safe_and_stable() -> None:
    texts = [ENGLISH, FRENCH, GERMAN] * 8
    expected = [detect_language(t) for t in texts]
    clear_cache()
    results: dict[int, tuple[str, float]] = {}

    def work(i: int) -> None:
        results[i] = detect_language(texts[i] + " " * (i % 3))  # distinct cache keys

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[i][0] for i in range(len(texts))] == [e[0] for e in expected]


def test_short_passages_inherit_from_neighbours() -> None:
    chapters = [
        ["Chapitre deux", FRENCH, "Oui.", FRENCH, ENGLISH, "Yes, he said."],
        ["1914", ENGLISH],
        ["!!!"],
    ]
    book, langs = assign_languages(chapters)
    assert book == "fr"  # more French letters than English ones
    codes = [[code for code, _ in ch] for ch in langs]
    assert codes[0] == ["fr", "fr", "fr", "fr", "en", "en"]
    assert codes[1] == ["fr", "en"]  # a number-only passage: the book's language, not what follows it
    assert codes[2] == ["fr"]  # nothing to go on: the book's language
    assert langs[1][0][1] == 0.0 and langs[0][1][1] >= 0.8  # "1914": taken from the book, not detected


def test_declared_language_wins_for_the_book() -> None:
    book, langs = assign_languages([["Hello."], [FRENCH]], declared="en-US")
    assert book == "en"
    assert [ch[0][0] for ch in langs] == ["en", "fr"]


def test_sample_french_paragraph(resources: Path) -> None:
    book = load_manuscript(resources / "sample.md")
    assert book.language == "en"
    french = [(ci, pi) for ci, c in enumerate(book.chapters) for pi, p in enumerate(c.paragraphs) if p.language == "fr"]
    assert len(french) == 1
    ci, pi = french[0]
    para = book.chapters[ci].paragraphs[pi]
    assert para.text.startswith("Ma grand-m\u00e8re") and para.confidence >= 0.8
    assert all(s.language == "fr" for s in para.sentences)
    others = [p for c in book.chapters for p in c.paragraphs if p is not para]
    assert all(p.language == "en" and all(s.language == "en" for s in p.sentences) for p in others)
    # chapter headings are short, but detected too (and stay English)
    assert book.chapters[0].paragraphs[0].confidence > 0.0


def test_language_override(resources: Path) -> None:
    book = load_manuscript(resources / "sample.md")
    changed = apply_language_override(book, 0, 1, "de_DE")
    para = changed.chapters[0].paragraphs[1]
    assert para.language_override == "de" and para.effective_language == "de"
    assert para.language == "en"  # detection is kept
    assert all(s.language == "de" for s in para.sentences)
    assert book.chapters[0].paragraphs[1].effective_language == "en"  # the original is untouched
    assert changed.chapters[1] is book.chapters[1]
    cleared = apply_language_override(changed, 0, 1, None)
    assert cleared.chapters[0].paragraphs[1] == book.chapters[0].paragraphs[1]
    with pytest.raises(IndexError):
        apply_language_override(book, 9, 0, "fr")
    with pytest.raises(IndexError):
        apply_language_override(book, 0, 999, "fr")
    with pytest.raises(ValueError):
        apply_language_override(book, 0, 0, "not a language")


def test_same_file_same_languages(resources: Path) -> None:
    clear_cache()
    first = load_manuscript(resources / "sample.md")
    clear_cache()
    second = load_manuscript(resources / "sample.md")
    assert first == second


def test_one_long_foreign_paragraph_does_not_take_over_the_book() -> None:
    """Short English lines around one long French paragraph stay English."""
    english_long = "She walked along the harbour wall and counted the boats that had come home before the storm."
    french = (
        "Le vent soufflait fort sur la jet\u00e9e. Les p\u00eacheurs rentraient leurs filets "
        "et parlaient \u00e0 voix basse de la temp\u00eate qui approchait."
    )
    chapter = ["The night was cold.", english_long, french, "He said nothing.", "The lamps were lit one by one."]
    book, langs = assign_languages([chapter])
    assert book == "en"
    assert [code for code, _ in langs[0]] == ["en", "en", "fr", "en", "en"]
