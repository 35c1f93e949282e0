"""Numbers as words, per language: cardinals, ordinals, years, decimals, digit strings.

Why our own English and num2words for the rest: English is the language nearly every
book here is in, so its forms are tuned to what a narrator says (US style, no "and":
"one hundred twenty-three"; years in pairs: "nineteen oh seven"), and it costs a few
microseconds. German, French, Spanish and Italian come from num2words, measured on the
labelled set (bench/normalize_eval.py): right on every number there, about 0.1 ms per
call, 30 ms to import, loaded on the first sentence in those languages that needs it.
"""

from __future__ import annotations

from functools import lru_cache

_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
         "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_GROUPS = ("", "thousand", "million", "billion", "trillion", "quadrillion")
_ORDINAL_WORDS = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                  "nine": "ninth", "twelve": "twelfth"}
#: what a digit is called when numbers are read digit by digit
DIGITS = {
    "en": ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
    "de": ("null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"),
    "fr": ("zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf"),
    "es": ("cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve"),
    "it": ("zero", "uno", "due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove"),
}
#: the decimal separator's spoken name
POINT = {"en": "point", "de": "Komma", "fr": "virgule", "es": "coma", "it": "virgola"}


def _below_thousand(n: int) -> str:
    words: list[str] = []
    if n >= 100:
        words += [_ONES[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(_TENS[n // 10] + (f"-{_ONES[n % 10]}" if n % 10 else ""))
    elif n or not words:
        words.append(_ONES[n])
    return " ".join(words)


def english_cardinal(n: int) -> str:
    """``1542180`` -> ``"one million five hundred forty-two thousand one hundred eighty"``."""
    if n < 0:
        return "minus " + english_cardinal(-n)
    if n >= 1000 ** len(_GROUPS):
        return digits(str(n), "en")
    words: list[str] = []
    group = 0
    while n:
        n, part = divmod(n, 1000)
        if part:
            words.insert(0, _below_thousand(part) + (f" {_GROUPS[group]}" if group else ""))
        group += 1
    return " ".join(words) or "zero"


def english_ordinal(n: int) -> str:
    """``21`` -> ``"twenty-first"``."""
    words = english_cardinal(n)
    head, sep, last = words.rpartition(" " if "-" not in words.rsplit(" ", 1)[-1] else "-")
    if last in _ORDINAL_WORDS:
        last = _ORDINAL_WORDS[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return head + sep + last


def english_year(n: int) -> str:
    """How a year is said: ``1907`` "nineteen oh seven", ``1900`` "nineteen hundred",
    ``2003`` "two thousand three", ``2024`` "twenty twenty-four"."""
    if n < 1000 or n >= 10000:
        return english_cardinal(n)
    high, low = divmod(n, 100)
    if 2000 <= n <= 2009:
        return english_cardinal(n)
    if low == 0:
        return english_cardinal(n) if high % 10 == 0 else f"{english_cardinal(high)} hundred"
    if low < 10:
        return f"{english_cardinal(high)} oh {_ONES[low]}"
    return f"{english_cardinal(high)} {english_cardinal(low)}"


def plural(words: str) -> str:
    """``"nineteen twenty"`` -> ``"nineteen twenties"`` (decades, "the 1800s")."""
    if words.endswith("y"):
        return words[:-1] + "ies"
    if words.endswith("x"):
        return words + "es"
    return words + "s"


@lru_cache(maxsize=4096)
def cardinal(n: int, language: str) -> str:
    """``n`` in words in ``language`` (an ISO 639-1 family)."""
    if language == "en":
        return english_cardinal(n)
    return _num2words(n, language, "cardinal")


@lru_cache(maxsize=4096)
def ordinal(n: int, language: str) -> str:
    """``n``-th in words: ``3`` -> "third", "dritte", "troisième", "tercero", "terzo"."""
    if language == "en":
        return english_ordinal(n)
    if language == "fr" and n == 1:
        return "premier"
    return _num2words(n, language, "ordinal")


@lru_cache(maxsize=4096)
def year(n: int, language: str) -> str:
    """A year as said: English in pairs, German in hundreds below 2000, others as cardinals."""
    if language == "en":
        return english_year(n)
    if language == "de" and 1100 <= n < 2000:
        return _num2words(n, "de", "year")
    return cardinal(n, language)


def decimal(token: str, language: str, separator: str = ".") -> str:
    """A number with a fraction: ``"3.14"`` -> "three point one four"; the fraction digit by digit."""
    whole, _, frac = token.partition(separator)
    head = cardinal(int(whole or "0"), language)
    if not frac:
        return head
    return f"{head} {POINT.get(language, POINT['en'])} {digits(frac, language)}"


def digits(token: str, language: str) -> str:
    """Digit by digit (phone numbers, identifiers, the fraction of a decimal)."""
    names = DIGITS.get(language, DIGITS["en"])
    return " ".join(names[int(d)] for d in token if d.isdigit())


def _num2words(n: int, language: str, to: str) -> str:
    from num2words import num2words  # 30 ms: loaded on the first number in these languages

    try:
        return str(num2words(n, lang=language, to=to))
    except (NotImplementedError, OverflowError):
        try:
            return str(num2words(n, lang=language))
        except (NotImplementedError, OverflowError):
            return digits(str(n), language)
