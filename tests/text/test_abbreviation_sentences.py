"""Sentences that know abbreviations: "The U.S. Navy paid" is one sentence, "fn. 3" and
"2 doz. eggs" are read as a narrator reads them, and on real books no sentence is cut
inside an abbreviation nor joined anywhere else (issue 31, item 3)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from studio.text.importer import BY_SUFFIX
from studio.text.normalize import spoken_form
from studio.text.normalize.capitals import AS_WORD, known
from studio.text.segment import split_paragraphs, split_spans

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "epub"


def sentences(text: str) -> list[str]:
    return [s.text for s in split_spans(text)]


@pytest.mark.parametrize("text,expected", [
    ("The U.S. Navy paid for the ship.", ["The U.S. Navy paid for the ship."]),
    ("He moved to the U.S. Then he wrote a book.", ["He moved to the U.S.", "Then he wrote a book."]),
    ("The U.K. Parliament sat. The U.N. met.", ["The U.K. Parliament sat.", "The U.N. met."]),
    ("She has a Ph.D. in physics. He earned his Ph.D. He left.",
     ["She has a Ph.D. in physics.", "He earned his Ph.D.", "He left."]),
    ("See p. 45, fn. 3, for the source.", ["See p. 45, fn. 3, for the source."]),
    ("Buy 2 doz. eggs. Then go.", ["Buy 2 doz. eggs.", "Then go."]),
    ("Adm. Nelson and Cmdr. Bligh met Msgr. Ryan.", ["Adm. Nelson and Cmdr. Bligh met Msgr. Ryan."]),
    ("J. R. R. Tolkien wrote it.", ["J. R. R. Tolkien wrote it."]),
    ("Apples, pears, etc. The rest was gone.", ["Apples, pears, etc.", "The rest was gone."]),
    ("Gen. Grant met Capt. Ahab at 5 p.m. on Fifth Ave. near St. Paul.",
     ["Gen. Grant met Capt. Ahab at 5 p.m. on Fifth Ave. near St. Paul."]),
    ("See Fig. 3 and vol. 2, ch. 4. It is there.", ["See Fig. 3 and vol. 2, ch. 4.", "It is there."]),
])
def test_abbreviations_do_not_end_sentences_that_go_on(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


@pytest.mark.parametrize("printed,said", [
    ("See p. 45, fn. 3, for the source.", "See page forty-five, footnote three, for the source."),
    ("Buy 2 doz. eggs.", "Buy two dozen eggs."),
    ("See Fig. 3 and vol. 2, ch. 4.", "See Figure three and volume two, chapter four."),
    ("The U.S. Navy paid for the ship.", "The U S Navy paid for the ship."),
])
def test_abbreviations_are_expanded_where_a_narrator_expands_them(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


#: a full stop, then a space and a capital: where a splitter that knew no abbreviation would cut
_NAIVE = re.compile(r"(\S+)\.([\"'”’)\]]*) +[\"'“‘(]*([A-Z0-9])")
#: words that start sentences (after "U.S." or an initial, a boundary before them is right)
STARTERS = frozenset("the a an i he she it we they you this that these those there then but and or so in on at".split())
_NOT_A_NAME = re.compile(r"^(?:\S*[a-z]{5,}|[A-Z][a-z]{4,})$")  # a plain word: never an abbreviation


def _paragraphs() -> list[str]:
    books = sorted(FIXTURES.glob("*.epub"))
    if not books:
        pytest.skip("the shared EPUB fixtures are absent")
    out = []
    for path in books:
        raw = BY_SUFFIX[".epub"].read(path, 200_000_000)
        out += [p for ch in raw.chapters for block in ch.paragraphs for p in split_paragraphs(block)]
    return out


def test_on_real_books_no_split_inside_an_abbreviation_and_no_join_elsewhere() -> None:
    """Every place a naive splitter cuts (". " before a capital) is a boundary here unless the
    word before is an abbreviation or an initial; no boundary here is inside one."""
    paragraphs = _paragraphs()
    naive = joined = total = 0
    wrong = []
    for text in paragraphs:
        spans = split_spans(text, max_chars=10_000)
        total += len(spans)
        ends, pos = set(), 0
        for s in spans[:-1]:
            pos += len(s.text)
            ends.add(pos)
            pos += len(s.trailing)
            token = s.text.rsplit(" ", 1)[-1].lstrip("\"'“‘(")
            nxt = text[pos:pos + 30].lstrip("\"'“‘(")
            word = re.match(r"[A-Za-z]*", nxt).group(0)
            title = re.fullmatch(r"(?:Mr|Mrs|Dr|St|Capt|Gen|Col|Lt|Prof|Rev)\.", token)
            numbered = re.fullmatch(r"(?:fn|doz|p|pp|vol|ch|No|no)\.", token) and nxt[:1].isdigit()
            initials = re.fullmatch(r"(?:[A-Z]\.)+", token) and word[:1].isupper() and word.lower() not in STARTERS
            if title or numbered or initials:
                wrong.append(("split inside", s.text[-40:], nxt))
        for m in _NAIVE.finditer(text):
            naive += 1
            end = m.end(2) if m.group(2) else m.start(2)
            if end not in ends and m.end(2) not in ends:
                joined += 1
                word = m.group(1).lstrip("\"'“‘(")
                plain = len(word) > 1 and word.isalpha() and word.islower() and known(word) & AS_WORD and not m.group(3).isdigit()
                if _NOT_A_NAME.match(word) or (plain and word not in ("cf", "viz", "vs", "ca", "approx")):
                    wrong.append(("joined", m.group(0)))
    print(f"\n{len(paragraphs)} paragraphs: {total} sentences; {naive} naive cuts, {joined} kept whole")
    assert total > 1500 and naive > 500
    assert not wrong, wrong[:20]
