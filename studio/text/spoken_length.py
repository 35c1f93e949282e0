"""How much a voice says for a piece of text: numbers and symbols spelled out.

Why: speaking time follows what is pronounced, not what is printed. "1,542,180"
is nine characters on the page and about sixty when read aloud, so a rate per
printed character ran a third short on a statistics-heavy chapter (measured on
the Georgia EPUB fixture with the bundled voice). Spelling numbers the way an
English reader says them is enough for duration estimates; it is no front end
(the voice's own phonemizer decides what is actually said).
"""

from __future__ import annotations

import re
from functools import lru_cache

from studio.text.normalize.numbers import digits, english_cardinal, english_year

_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_SYMBOLS = {"%": " percent ", "&": " and ", "+": " plus ", "=": " equals ", "$": " dollars ", "\u00a3": " pounds "}


def number_words(token: str) -> str:
    """``"1,542,180"`` -> ``"one million five hundred forty two thousand one hundred eighty"``;
    a four-digit year reads in pairs (``"1880"`` -> ``"eighteen eighty"``), decimals digit by
    digit. The words come from the one English speller (:mod:`studio.text.normalize.numbers`)."""
    whole, _, frac = token.replace(",", "").partition(".")
    n = int(whole)
    if "," not in token and len(whole) == 4 and 1100 <= n <= 1999 and n % 100 and not frac:
        words = english_year(n)
    elif len(whole) > 15:  # an id or a phone number: read digit by digit
        words = digits(whole, "en")
    else:
        words = english_cardinal(n)
    if frac:
        words += " point " + digits(frac, "en")
    return words.replace("-", " ")


def spoken_text(text: str) -> str:
    """``text`` with numbers and common symbols written out as words."""
    text = _NUMBER.sub(lambda m: f" {number_words(m.group())} ", text)
    for symbol, words in _SYMBOLS.items():
        text = text.replace(symbol, words)
    return text


@lru_cache(maxsize=1 << 16)  # estimates are redone on every render delta and settings change
def spoken_chars(text: str) -> int:
    """Letters and digits a reader pronounces (numbers spelled out; punctuation, spaces
    and a row of asterisks say nothing)."""
    return sum(1 for ch in spoken_text(text) if ch.isalnum())
