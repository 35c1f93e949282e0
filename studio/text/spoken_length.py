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

_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_GROUPS = ("", "thousand", "million", "billion", "trillion")
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_SYMBOLS = {"%": " percent ", "&": " and ", "+": " plus ", "=": " equals ", "$": " dollars ", "\u00a3": " pounds "}


def _below_thousand(n: int) -> list[str]:
    words: list[str] = []
    if n >= 100:
        words += [_ONES[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(_TENS[n // 10])
        if n % 10:
            words.append(_ONES[n % 10])
    elif n or not words:
        words.append(_ONES[n])
    return words


def number_words(token: str) -> str:
    """``"1,542,180"`` -> ``"one million five hundred forty two thousand one hundred eighty"``;
    a four-digit year reads in pairs (``"1880"`` -> ``"eighteen eighty"``), decimals digit by digit."""
    whole, _, frac = token.replace(",", "").partition(".")
    n = int(whole)
    if "," not in token and len(whole) == 4 and 1100 <= n <= 1999 and n % 100 and not frac:
        words = _below_thousand(n // 100) + _below_thousand(n % 100)
    elif len(whole) > 15:  # an id or a phone number: read digit by digit
        words = [_ONES[int(d)] for d in whole]
    else:
        words, group = [], 0
        while True:
            n, part = divmod(n, 1000)
            if part:
                words = _below_thousand(part) + ([_GROUPS[group]] if group else []) + words
            group += 1
            if not n:
                break
        words = words or ["zero"]
    if frac:
        words += ["point", *(_ONES[int(d)] for d in frac)]
    return " ".join(words)


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
