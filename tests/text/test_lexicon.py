"""The pronunciation lexicon model, PLS files and EPUB 3 pronunciations (no voice needed)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from studio.core.lexicon import Lexicon, LexiconEntry
from studio.text.lexicon_report import report_for_sentences
from studio.text.formats.pls import LexiconFormatError, read_pls, read_pls_file, write_pls_file

NGUYEN = LexiconEntry("Nguyen", "alias", "Win")


def test_whole_words_only_and_case_rule() -> None:
    lex = Lexicon.of([NGUYEN, LexiconEntry("Mobile", "phoneme", "ˈmoʊbil", case_sensitive=True)])
    text = "NGUYEN and Nguyenville met in Mobile; a mobile phone."
    found = [(text[m.start:m.end], m.entry.grapheme) for m in lex.find(text, "en")]
    assert found == [("NGUYEN", "Nguyen"), ("Mobile", "Mobile")]


def test_language_and_phrases_and_longest_match() -> None:
    lex = Lexicon.of([
        LexiconEntry("New York", "alias", "Nouvelle-York", language="fr"),
        LexiconEntry("New", "alias", "Gnu"),
        LexiconEntry("N.", "phoneme", "nɔɹθ"),
    ])
    assert [m.entry.value for m in lex.find("New\n York, N. of it", "fr-FR")] == ["Nouvelle-York", "nɔɹθ"]
    assert [m.entry.value for m in lex.find("New York", "en")] == ["Gnu"]  # the phrase is French only
    assert lex.find("AN. x", "en") == []  # a grapheme starting with a letter needs a word start


def test_language_specific_entry_beats_general_one() -> None:
    lex = Lexicon.of([LexiconEntry("Paris", "alias", "Parris"), LexiconEntry("Paris", "alias", "Paree", language="fr")])
    assert lex.find("Paris", "fr")[0].entry.value == "Paree"
    assert lex.find("Paris", "en")[0].entry.value == "Parris"


def test_digest_covers_only_entries_that_occur_and_changes_with_them() -> None:
    lex = Lexicon.of([NGUYEN, LexiconEntry("Altamaha", "phoneme", "ˈɔltəməˌhɔ")])
    assert lex.applicable("Nothing to see.", "en").digest() == ""
    d1 = lex.applicable("Mr Nguyen came.", "en").digest()
    assert d1 == Lexicon.of([NGUYEN]).digest()
    edited = Lexicon.of([LexiconEntry("Nguyen", "alias", "Nwin"), *lex.entries[:1]])
    assert edited.applicable("Mr Nguyen came.", "en").digest() != d1


def test_runs_substitute_respellings_and_isolate_phonemes() -> None:
    lex = Lexicon.of([NGUYEN, LexiconEntry("Altamaha", "phoneme", "ˈɔltəməˌhɔ")])
    assert lex.runs("Nguyen rowed the Altamaha, twice.", "en") == [
        ("Win rowed the ", False), ("ˈɔltəməˌhɔ", True), (", twice.", False),
    ]
    assert lex.respelled("Nguyen rowed the Altamaha.", "en") == "Win rowed the Altamaha."


def test_user_lexicon_is_inherited_and_overridden() -> None:
    user = Lexicon.of([NGUYEN, LexiconEntry("Altamaha", "alias", "Alta")])
    project = Lexicon.of([LexiconEntry("nguyen", "alias", "Nwen")])
    merged = project.inherit(user)
    assert {e.grapheme: e.value for e in merged.entries} == {"Altamaha": "Alta", "nguyen": "Nwen"}


def test_lexicon_survives_pickling_for_model_processes() -> None:
    lex = Lexicon.of([NGUYEN])
    lex.find("Nguyen", "en")  # compiled cache filled
    back = pickle.loads(pickle.dumps(lex))
    assert back == lex and back.find("Nguyen", "en")[0].entry == NGUYEN


def test_bad_entries_are_refused() -> None:
    with pytest.raises(ValueError):
        LexiconEntry("  ", "alias", "x")
    with pytest.raises(ValueError):
        LexiconEntry("word", "sound", "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LexiconEntry("word", "alias", "x", language="klingon")


# ------------------------------------------------------------------ PLS


def test_pls_round_trip_keeps_every_field(tmp_path: Path) -> None:
    entries = [
        NGUYEN,
        LexiconEntry("Mobile", "phoneme", "ˈmoʊbil", case_sensitive=True, language="en"),
        LexiconEntry("Reims", "phoneme", "ʁɛ̃s", language="fr"),
        LexiconEntry("New York", "alias", "Noo York", language="en"),
    ]
    path = tmp_path / "out.pls"
    write_pls_file(path, entries)
    back = read_pls_file(path)
    assert Lexicon.of(back.entries) == Lexicon.of(entries) and not back.skipped
    write_pls_file(tmp_path / "again.pls", back.entries)
    assert (tmp_path / "again.pls").read_bytes() == path.read_bytes()


def test_pls_written_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "hand.pls"
    path.write_text(
        """<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon"
         alphabet="ipa" xml:lang="en-GB">
  <lexeme><grapheme>tomato</grapheme><grapheme>Tomato</grapheme>
    <phoneme>təˈmɑːtəʊ</phoneme><phoneme prefer="true">təˈmeɪtoʊ</phoneme></lexeme>
  <lexeme><grapheme>W3C</grapheme><alias>World Wide Web Consortium</alias></lexeme>
  <lexeme><grapheme>sampa</grapheme><phoneme alphabet="x-sampa">s{mp@</phoneme></lexeme>
</lexicon>""",
        encoding="utf-8",
    )
    result = read_pls_file(path)
    got = {(e.grapheme, e.kind, e.value, e.language) for e in result.entries}
    assert got == {
        ("tomato", "phoneme", "təˈmeɪtoʊ", "en"), ("Tomato", "phoneme", "təˈmeɪtoʊ", "en"),
        ("W3C", "alias", "World Wide Web Consortium", "en"),
    }
    assert sum(result.skipped.values()) == 1  # the X-SAMPA lexeme, never guessed


def test_not_a_pls_file_is_refused() -> None:
    with pytest.raises(LexiconFormatError):
        read_pls(b"<html><body/></html>", "x.pls")
    with pytest.raises(LexiconFormatError):
        read_pls(b"<lexicon", "broken.pls")


# ------------------------------------------------------------------ EPUB 3


def test_epub_pls_and_ssml_become_entries_and_text_is_kept(shared_epubs: Path) -> None:
    from studio.text.importer import read_manuscript

    epub = shared_epubs / "georgia-pls-ssml.epub"
    read = read_manuscript(epub)  # one pass: the text and the pronunciations
    lex = read.lexicon
    by = {e.grapheme: e for e in lex.entries}
    # from the PLS the package declares (lexicon/en.pls)
    assert by["Altamaha"].kind == "phoneme" and by["Altamaha"].value == "ˈɔltəməˌhɔ" and by["Altamaha"].language == "en"
    # from ssml:ph attributes in the content: case-exact, first pronunciation kept
    assert by["N."].value == "nɔrθ" and by["N."].case_sensitive
    assert by["30°"].value == "ˈθɜrti dɪˈgriz"
    assert '"' not in by  # a ditto mark spoken "Democratic" in one cell is not a word to respell
    # the manuscript keeps every character the markup wrapped
    book = read.book
    text = " ".join(s.text for c in book.chapters for p in c.paragraphs for s in p.sentences)
    assert "between 30° 31′ 39″ and 35° N., and between 81°" in text
    report = report_for_sentences(((s.text, s.language) for c in book.chapters for p in c.paragraphs
                                   for s in p.sentences), lex)
    used = {u.word: u.count for u in report.with_entries}
    assert used["Savannah"] >= 10 and used["N."] >= 5


def test_ssml_phoneme_and_sub_elements() -> None:
    from lxml import etree

    from studio.text.formats.epub_lexicon import ssml_entries

    root = etree.fromstring(
        '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="fr"><body><p>'
        '<phoneme alphabet="ipa" ph="ʁɛ̃s">Reims</phoneme> et <sub alias="Organisation">ONU</sub>'
        ' et <phoneme alphabet="x-sampa" ph="x">Lyon</phoneme></p></body></html>'
    )
    got = {(e.grapheme, e.kind, e.value, e.language) for e in ssml_entries(root)}
    assert got == {("Reims", "phoneme", "ʁɛ̃s", "fr"), ("ONU", "alias", "Organisation", "fr")}


def test_suggestions_are_names_not_common_words() -> None:
    sentences = [
        ("Yesterday Nguyen met Altamaha at the river.", "en"),
        ("The river was cold, said Nguyen.", "en"),
        ("Then the NATO people came on Monday.", "en"),
    ]
    report = report_for_sentences(sentences, Lexicon.of([LexiconEntry("Altamaha", "alias", "Alta")]))
    words = {u.word: (u.count, u.first_sentence) for u in report.suggestions}
    assert words == {"Nguyen": (2, sentences[0][0]), "NATO": (1, sentences[2][0])}
    assert [(u.word, u.count) for u in report.with_entries] == [("Altamaha", 1)]
