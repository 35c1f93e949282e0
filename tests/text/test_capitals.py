"""Words in capitals are read as words; only acronyms are spelled. The normaliser, the
language detector's evidence and the phonemizer (espeak-ng under the bundled voice) all
see the same decision."""

from __future__ import annotations

from functools import lru_cache

import pytest

from studio.core.lexicon import Lexicon, LexiconEntry
from studio.text.evidence import evidence
from studio.text.normalize import spoken_form
from studio.text.normalize.capitals import fold, is_acronym, running_capitals


@lru_cache(maxsize=1)
def _front_end():
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.config import VoiceConfig
    from studio.engine.voice.phonemize import PiperFrontEnd

    return PiperFrontEnd(VoiceConfig.from_file(get_voice(None).config_path))


def phonemes(text: str) -> str:
    return "".join(_front_end().phonemize(text, "en"))


@pytest.mark.parametrize("printed,said", [
    ("BLOODY BATTLE IN AFGHANISTAN", "Bloody battle in afghanistan"),
    ("BY ONE ISHMAEL.", "By one ishmael."),
    ("He told her to LAY it down.", "He told her to lay it down."),
    ("It was VERY cold.", "It was very cold."),
    ("LET US GO NOW.", "Let us go now."),
    ("DON'T DO IT!", "Don't do it!"),
    ("THE WHALE AND HIS CAPTORS, OR THE WHALEMAN'S ADVENTURES.", "The whale and his captors, or the whaleman's adventures."),
    ("HMM, he said.", "Hmm, he said."),
    ("CHAPTER XIV. THE MIX.", "Chapter fourteen. The mix."),
    ("I. THE FOLIO WHALE; II. the OCTAVO WHALE.", "one. The folio whale; two. the octavo whale."),
])
def test_words_in_capitals_are_read_as_words(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


@pytest.mark.parametrize("printed,said", [
    ("The FBI and the CIA met at the BBC's door.", "The F B I and the C I A met at the B B C's door."),
    ("The US Navy paid.", "The U S Navy paid."),
    ("The NHS, the IRS and MIT.", "The N H S, the I R S and M I T."),
    ("He bought a TV.", "He bought a T V."),
    ("Call NASA now.", "Call NASA now."),
    ("It was OK.", "It was okay."),
])
def test_acronyms_are_spelled_or_said_from_the_list(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


def test_the_decision_knows_the_dictionary_and_the_shape() -> None:
    assert is_acronym("CIA") and is_acronym("IBM")  # the dictionary only spells them
    assert is_acronym("HMS") and is_acronym("XQZT")  # no vowel
    assert not is_acronym("LAY") and not is_acronym("ONE") and not is_acronym("AFGHANISTAN")
    assert not is_acronym("MY") and not is_acronym("RHYTHM")  # a "y" vowel
    assert is_acronym("US") and not is_acronym("US", running_capitals=True)
    assert running_capitals("THE WHALE AND HIS CAPTORS") and not running_capitals("The FBI came.")


def test_a_lexicon_entry_is_how_the_producer_spells_a_word() -> None:
    lexicon = Lexicon.of([LexiconEntry("LAY", "alias", "L A Y", case_sensitive=True)])
    printed = "He told her to LAY it down."
    assert spoken_form(printed, "en", lexicon) == printed  # the entry's word is left to the entry
    said = "".join(_front_end().phonemize(printed, "en", lexicon))
    assert said == phonemes("He told her to L A Y it down.") != phonemes("He told her to lay it down.")


def test_the_phonemizer_sees_the_normalisers_decision() -> None:
    """espeak-ng on its own spells "IT" and "US" in capitals; through the front end they are words."""
    for printed in ("LET US GO AND DO IT NOW.", "BY ONE ISHMAEL.", "He told her to LAY it down."):
        assert phonemes(printed) == phonemes(spoken_form(printed, "en")) == phonemes(printed.lower())
    assert phonemes("The FBI came.") == phonemes("The F B I came.")
    assert fold(spoken_form("The US Navy paid.", "en")) == spoken_form("The US Navy paid.", "en")


def test_detection_reads_words_in_capitals_and_drops_acronyms() -> None:
    assert evidence("THE WHALE AND HIS CAPTORS") == "the whale and his captors"
    assert evidence("The FBI came at once, then.") == "The came at once"
