"""A real book: Moby-Dick (1851, public domain; tests/data/books/README.md) prints headlines,
title lines, extracts' sources and names in capitals and quotes Latin. Imported as a
book declaring English: no word in capitals is spelled out (none of them is an acronym),
no English passage is given another language, the Latin quotation is found, and the
curly-apostrophe contractions are not names to check (issue 31)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from studio.core.lexicon import Lexicon
from studio.text.importer import load_manuscript
from studio.text.lexicon_report import lexicon_report
from studio.text.normalize import spoken_form

BOOK = Path(__file__).resolve().parents[1] / "data" / "books" / "moby-dick-excerpt.md"
#: two or more letters spelled one by one: how the normaliser writes an acronym
SPELLED = re.compile(r"\b[A-Z](?: [A-Z]\b)+")


@pytest.fixture(scope="module")
def book():
    return load_manuscript(BOOK)


def test_no_english_passage_is_given_another_language(book) -> None:
    assert book.language == "en"
    foreign = [(p.language, p.text[:40]) for c in book.chapters for p in c.paragraphs if p.language != "en"]
    assert foreign == [("la", '"De balena vero sufficit, si rex habeat ')]
    assert sum(len(c.paragraphs) for c in book.chapters) > 30


def test_no_word_in_capitals_is_spelled_out(book) -> None:
    capitals = 0
    for chapter in book.chapters:
        for paragraph in chapter.paragraphs:
            for sentence in paragraph.sentences:
                said = spoken_form(sentence.text, sentence.language)
                capitals += len(re.findall(r"\b[A-Z]{2,}\b", sentence.text))
                assert not SPELLED.search(said), (sentence.text, said)
    assert capitals > 40
    headline = next(s.text for c in book.chapters for p in c.paragraphs for s in p.sentences if "AFFGHANISTAN" in s.text)
    assert spoken_form(headline, "en") == '"Bloody battle in affghanistan."'


def test_contractions_with_curly_apostrophes_are_not_names_to_check(book) -> None:
    suggested = {u.word for u in lexicon_report(book, Lexicon()).suggestions}
    assert "Stubb" in suggested
    assert not [w for w in suggested if re.search(r"['’]", w)], suggested
