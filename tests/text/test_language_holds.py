"""A book's language holds: a passage leaves it only when the other language explains it better
(function words never outvote the detector's odds), and a very short one only for another script."""

from __future__ import annotations

from studio.text import language
from studio.text.language import _decide


def test_function_words_alone_do_not_take_a_passage_the_detector_reads_as_the_context() -> None:
    sample = "Und so die Sache"  # three German function words, none English
    assert _decide({"en": 0.9, "de": 0.1}, 14, "en", sample, "en") == "en"
    assert _decide({"de": 0.9, "en": 0.1}, 14, "en", sample, "en") == "de"  # and both agreeing still move it


def test_a_very_short_passage_leaves_only_for_another_script() -> None:
    assert _decide({"sk": 0.9999, "en": 0.0001}, language.SCRIPT_ONLY_LETTERS - 1, "en", "Ahoj ty tam", "en") == "en"
    assert _decide({"ru": 1.0}, 5, "en", "Да нет да", "en") == "ru"


def test_english_exclamations_in_an_english_book_stay_english() -> None:
    base = "It was a fine morning and the horses were ready for the road to the north."
    lines = ["Oh, bravo, bravo, Signor!", "Ha! ha! ha! Capital!", "Die, villain, die! So be it, then.",
             "Ja, ja, so ist es, said the old man to his son in the yard.", "Mein Gott, the man is dead and the horse is gone!"]
    book, labels = language.assign_languages([[base, *lines, base]])
    assert book == "en" and [code for code, _ in labels[0]] == ["en"] * (len(lines) + 2)
