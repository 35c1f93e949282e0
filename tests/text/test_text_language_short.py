"""Short texts keep the voice's language unless the evidence is strong: numbers, acronyms,
Roman numerals, units, abbreviations and names are no evidence (issue: one-line English
manuscripts went to Romanian, Welsh, Catalan or Dutch and were read as gibberish)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.text.evidence import evidence
from studio.text.importer import load_manuscript
from studio.text.language import assign_languages

SHORT_ENGLISH = Path(__file__).parents[1] / "data" / "language" / "short_english.txt"


def _sentences() -> list[str]:
    return [line.strip() for line in SHORT_ENGLISH.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_set_is_one_hundred_short_english_sentences_with_numbers_acronyms_and_names() -> None:
    lines = _sentences()
    assert len(lines) >= 100
    assert sum(any(ch.isdigit() for ch in s) for s in lines) >= 60
    assert all(len(s) < 80 for s in lines)


def test_every_one_sentence_english_manuscript_is_english(tmp_path: Path) -> None:
    wrong = []
    for i, text in enumerate(_sentences()):
        path = tmp_path / f"one-{i}.txt"
        path.write_text(text + "\n", encoding="utf-8")
        book = load_manuscript(path)
        said = {s.language for c in book.chapters for p in c.paragraphs for s in p.sentences}
        if book.language != "en" or said != {"en"}:
            wrong.append((text, book.language, said))
    assert not wrong, "\n".join(map(str, wrong))


def test_passages_of_an_english_book_stay_english() -> None:
    """The misfires the issue saw inside an EPUB declaring English."""
    chapters = [["Chapter 100. Leg and Arm.", "ETYMOLOGY.",
                 "They are mostly young, of stalwart frames; fellows who have felled forests, and now seek to "
                 "drop the axe and snatch the whale-lance.", "Call me Ishmael."]]
    book, languages = assign_languages(chapters, "en")
    assert book == "en" and [code for code, _ in languages[0]] == ["en"] * 4


@pytest.mark.parametrize("text,expected", [
    ("Je ne sais pas ce que tu veux dire, mais je suis vraiment très fatigué ce soir.", "fr"),
    ("Ich weiß nicht, was du meinst, aber ich bin heute Abend wirklich sehr müde.", "de"),
    ("Η γάτα κοιμάται.", "el"),
])
def test_strong_evidence_still_switches_a_short_text(text: str, expected: str) -> None:
    book, languages = assign_languages([[text]])
    assert book == expected and languages[0][0][0] == expected


def test_evidence_drops_numbers_acronyms_numerals_units_abbreviations_and_names() -> None:
    assert evidence("The BBC hired Dafydd Rhys in 1998.") == "The hired in"
    assert evidence("Henry VIII drove 5 km with Dr. Popescu at 4 p.m.") == "Henry drove with at"
    assert evidence("Er sagte: Die Katze schläft.") == "Er sagte Die schläft"
