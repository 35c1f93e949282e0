"""Language inside a book: the declared language and the neighbours are a strong prior; a
passage leaves it only on strong evidence (another script, several function words of the
other language), never a heading for what follows it, never capitals for being capitals;
quotations in another language are still found (issue 31, items 2 and 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.text.importer import load_manuscript
from studio.text.language import assign_languages

#: Moby-Dick (Herman Melville, 1851; public domain): the passages the issue saw misread
BLUBBER = (
    "Assuming the blubber to be the skin of the whale; then, when this skin, as in the case of a very large "
    "Sperm Whale, will yield the bulk of one hundred barrels of oil; and, when it is considered that, in "
    "quantity, or rather weight, that oil, in its expressed state, is only three fourths, and not the entire "
    "substance of the coat; some idea may hence be had of the enormousness of that animated mass, a mere part "
    "of whose mere integument yields such a lake of liquid as that."
)
CAPTORS = ("THE WHALE AND HIS CAPTORS, OR THE WHALEMAN'S ADVENTURES AND THE WHALE'S BIOGRAPHY, GATHERED ON "
           "THE HOMEWARD CRUISE OF THE COMMODORE PREBLE.")
LATIN = "De balena vero sufficit, si rex habeat caput, et regina caudam."


def _codes(chapters: list[list[str]], declared: str = "en") -> list[list[str]]:
    _, languages = assign_languages(chapters, declared)
    return [[code for code, _ in ch] for ch in languages]


def test_plain_english_stays_english_whatever_the_trigrams_say() -> None:
    assert _codes([[BLUBBER]]) == [["en"]]
    assert _codes([[LATIN, BLUBBER, CAPTORS]]) == [["la", "en", "en"]]  # back from a quotation at once


def test_a_heading_is_not_given_the_language_of_the_quotation_under_it() -> None:
    assert _codes([["Chapter 90. Heads or Tails.", LATIN, BLUBBER]]) == [["en", "la", "en"]]


def test_capitals_are_judged_as_words_not_as_capitals() -> None:
    chapter = [CAPTORS, "I. THE FOLIO WHALE; II. the OCTAVO WHALE; III. the DUODECIMO WHALE.", "ETYMOLOGY.",
               "BY ONE ISHMAEL."]
    assert _codes([chapter]) == [["en"] * 4]


def test_repeated_words_and_numbers_stay_in_the_books_language() -> None:
    chapter = ["word word word word word word word word", "LAY LAY LAY LAY LAY LAY", "1914 1915 1916", BLUBBER]
    assert _codes([chapter]) == [["en"] * 4]
    assert _codes([["1914", LATIN]]) == [["en", "la"]]  # a number is not read in the language after it


def test_foreign_quotations_are_still_found() -> None:
    chapter = [BLUBBER, "Je ne sais pas ce que tu veux dire.", BLUBBER, "Ich weiß nicht, was du meinst.", BLUBBER,
               "Η γάτα κοιμάται.", BLUBBER, "No sé lo que quieres decir con eso.", BLUBBER]
    assert _codes([chapter]) == [["en", "fr", "en", "de", "en", "el", "en", "es", "en"]]


FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "epub"


def _fixture(name: str):
    path = FIXTURES / name
    if not path.is_file():
        pytest.skip("the shared EPUB fixtures are absent")
    book = load_manuscript(path)
    return book, {p.text: p.language for c in book.chapters for p in c.paragraphs}


@pytest.mark.slow
def test_english_epubs_stay_english_headings_in_capitals_included() -> None:
    for name in ("childrens-literature.epub", "georgia-pls-ssml.epub"):
        book, languages = _fixture(name)
        assert book.language == "en"
        assert {text[:40]: code for text, code in languages.items() if code != "en"} == {}, name


@pytest.mark.slow
def test_the_waste_land_keeps_its_english_lines_and_finds_its_quotations() -> None:
    book, languages = _fixture("wasteland.epub")
    assert book.language == "en"
    for line in ("The Waste Land", "T.S. Eliot", "Red and gold", "Beating oars", "White towers", "Under my feet. After the event"):
        assert languages[line] == "en", line  # given Latin or Welsh before (short English lines)
    found = {code for text, code in languages.items() if code != "en"}
    assert {"la", "de", "fr", "it"} <= found
    assert languages["Bin gar keine Russin, stamm' aus Litauen, echt deutsch."] == "de"
    assert languages["Et O ces voix d'enfants, chantant dans la coupole!"] == "fr"
    english = [t for t, c in languages.items() if c == "en"]
    assert len(english) > 480
