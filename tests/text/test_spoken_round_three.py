"""Round three of "every word said right": capitals and ordinals, heteronyms in compounds,
citations, ranges and slashes -- through the normaliser and, where the sound is the point, the
real front end."""

from __future__ import annotations

import pytest

from studio.text.normalize import spoken_form


@pytest.mark.parametrize("printed,said", [
    ("where I AM going", "where I am going"),
    ("AM I not right?", "Am I not right?"),
    ("the 1ST of May", "the first of May"),
    ("the 2ND ARMY", "the second army"),
    ("THE 3RD DAY", "The third day"),
    ("his 21st birthday", "his twenty-first birthday"),
    ("on 21ST MARCH 1850", "on twenty-first march eighteen fifty"),
    ("DA", "Da"),
    ("NO!", "No!"),
    ("BILLINGSGATE, n.", "Billingsgate, n."),  # a dictionary's headword: long, with its vowels
    ("MEERSCHAUM, n.", "Meerschaum, n."),
])
def test_words_in_capitals_are_words_and_ordinals_in_any_case(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


@pytest.mark.parametrize("printed,said", [
    ("we saw the US UK deal", "we saw the U S U K deal"),  # acronyms beside acronyms stay spelled
    ("Call the FBI NOW", "Call the F B I now"),
    ("BBC.", "B B C."),
    ("the HTTPS link", "the H T T P S link"),
    ("the NSPCC said", "the N S P C C said"),
])
def test_acronyms_stay_spelled(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


@pytest.mark.parametrize("printed,said", [
    ("He went into the counting-house the next day.", "He went into the counting-house the next day."),
    ("the house-to-house search", "the house-to-house search"),
    ("a record-breaking run", "a record-breaking run"),
    ("the present-day use of it", "the present-day use of it"),
    ("a lead-lined box", "a led-lined box"),
    ("a well-read man", "a well-red man"),
    ("We use it.", "We yooz it."),  # outside a compound the sentence still decides
])
def test_a_heteronym_in_a_compound_is_read_by_the_compound(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


@pytest.mark.parametrize("printed,said", [
    ("Kant (1996:III,29) says so.", "Kant (nineteen ninety-six, volume three, page twenty-nine) says so."),
    ("(Smith 2001: 45)", "(Smith two thousand one, page forty-five)"),
    ("Jones 2001:45–47, 50", "Jones two thousand one, pages forty-five to forty-seven and fifty"),
    ("In 1996: 29 people died.", "In nineteen ninety-six: twenty-nine people died."),
    ("indexing, 16–17, 23, 33–34", "indexing, sixteen to seventeen, twenty-three, thirty-three to thirty-four"),
    ("yes and/or no", "yes and or no"),
    ("the paragraph/run-in style", "the paragraph or run-in style"),
    ("a his/her choice", "a his or her choice"),
    ("in 1914/15 the war", "in nineteen fourteen to nineteen fifteen the war"),
    ("at 10:30 we", "at ten thirty we"),
])
def test_citations_ranges_and_slashes_as_a_narrator_reads_them(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


def test_no_slash_or_colon_is_heard() -> None:
    from studio.rendering.phonemes import voice_phonemes

    say = voice_phonemes(None)
    for printed in ("Kant (1996:III,29) says so.", "the paragraph/run-in style", "yes and/or no", "see the file a/b/c"):
        phonemes = say(spoken_form(printed, "en"), "en", None)
        assert "slˈæʃ" not in phonemes and "kˈoʊlən" not in phonemes, (printed, phonemes)


@pytest.mark.parametrize("printed,said", [
    ("He made his bow and left.", "He made his bau and left."),
    ("with a graceful bow from the other", "with a graceful bau from the other"),
    ("He drew the bow and let the arrow fly.", "He drew the bow and let the arrow fly."),
    ("at the close of the song", "at the cloze of the song"),
    ("a close bonnet", "a close bonnet"),
])
def test_bow_and_close_by_their_sense(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


def test_the_audit_lists_a_heteronym_the_rules_and_the_tagger_read_apart() -> None:
    pytest.importorskip("gruut")
    from studio.text.heteronym_check import uncertain_heteronyms

    assert uncertain_heteronyms("Indexers use headings to find the pages.") == ["use (said as the noun, tagged verb)"]
    assert uncertain_heteronyms("We use headings to find the pages.") == []  # both read the verb
