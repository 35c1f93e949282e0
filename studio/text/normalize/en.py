"""English: what a narrator says for money, times, dates, ranges, decades, fractions,
units, ordinals, percentages, symbols and the numbers left over.

Why one ordered list of rules: the same digits mean different things by what is
around them ("1914-18" a range of years, "555-1234" a phone number, "12/25/2020" a
date, "3/4" a fraction), so the specific shapes are read first and plain numbers
last; every rule's output is words, so a later rule never reads it again.
"""

from __future__ import annotations

import re
from typing import Callable

from studio.text.normalize import units
from studio.text.normalize.numbers import digits, english_cardinal as cardinal, english_ordinal as ordinal
from studio.text.normalize.numbers import english_year as year, plural

Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan\.?|Feb\.?|Mar\.?|Apr\.?|Jun\.?|Jul\.?|Aug\.?|Sept?\.?|Oct\.?|Nov\.?|Dec\.?)"
_MONTH_OF = {m[:3].lower(): m for m in MONTHS}
#: currency: symbol or code -> (singular, plural, minor singular, minor plural)
CURRENCIES = {
    "$": ("dollar", "dollars", "cent", "cents"), "US$": ("US dollar", "US dollars", "cent", "cents"),
    "USD": ("US dollar", "US dollars", "cent", "cents"), "£": ("pound", "pounds", "penny", "pence"),
    "GBP": ("pound", "pounds", "penny", "pence"), "€": ("euro", "euros", "cent", "cents"),
    "EUR": ("euro", "euros", "cent", "cents"), "¥": ("yen", "yen", "", ""), "JPY": ("yen", "yen", "", ""),
    "CHF": ("Swiss franc", "Swiss francs", "centime", "centimes"), "₹": ("rupee", "rupees", "paisa", "paise"),
    "CAD": ("Canadian dollar", "Canadian dollars", "cent", "cents"), "AUD": ("Australian dollar", "Australian dollars", "cent", "cents"),
}
_CUR = r"US\$|\$|£|€|¥|₹|USD|GBP|EUR|JPY|CHF|CAD|AUD"
_SCALE = r"(?:\s?(?P<scale>million|billion|trillion|thousand|m|bn|k)\b)"
_SCALE_WORD = {"m": "million", "bn": "billion", "k": "thousand"}
_NUM = r"\d{1,3}(?:,\d{3})+|\d+"
_YEAR_CUE = re.compile(
    r"(?:\b(?:in|of|since|by|until|till|from|to|during|year|years|around|circa|c\.|ca\.|before|after|early|late|mid|"
    r"summer|winter|spring|autumn|fall|born|died|AD|A\.D\.|and|or|between|the|that|through)|"
    + _MONTH + r"|,)\s*$", re.I)
#: cues that make a four-digit number a year even before a plural noun ("in 1984 prices rose")
_STRONG_YEAR_CUE = re.compile(
    r"(?:\b(?:in|since|until|till|during|circa|c\.|ca\.|early|late|mid|summer|winter|spring|autumn|born|died)|"
    + _MONTH + r")\s*$", re.I)
_COUNTED = re.compile(r"^\s+(?!BC|AD|B\.C|A\.D|CE|BCE|(?:was|is|has|his|this|its|as|us|yes|thus|always|perhaps|unless|"
                      r"across|besides|towards|afterwards|whereas|does|goes|plus|less|was)\b)[a-z]+s\b")


def _int(token: str) -> int:
    return int(token.replace(",", ""))


def number(token: str) -> str:
    """``"1,234"``/``"3.5"``/``"-2"`` in words."""
    token = token.replace(",", "")
    neg = token.startswith("-")
    token = token.lstrip("-")
    whole, _, frac = token.partition(".")
    words = cardinal(int(whole or "0"))
    if frac:
        words += " point " + digits(frac, "en")
    return ("minus " + words) if neg else words


def _money(m: re.Match[str]) -> str:
    cur = m.group("cur") or m.group("cur2")
    amount, scale = m.group("amount"), m.group("scale")
    one, many, minor1, minor_n = CURRENCIES[cur]
    if scale:
        return f"{number(amount)} {_SCALE_WORD.get(scale, scale)} {many}"
    whole, _, cents = amount.replace(",", "").partition(".")
    n = int(whole or "0")
    c = int((cents + "0")[:2]) if cents else 0
    if cents and len(cents) > 2:
        return f"{number(amount)} {many}"
    parts = []
    if n or not c:
        parts.append(f"{cardinal(n)} {one if n == 1 else many}")
    if c and minor1:
        parts.append(f"{cardinal(c)} {minor1 if c == 1 else minor_n}")
    return " and ".join(parts)


def _time(m: re.Match[str]) -> str:
    h, mins, suffix = int(m.group(1)), m.group(2), (m.group(3) or "")
    words = cardinal(h)
    if mins and mins != "00":
        words += " " + (f"oh {cardinal(int(mins))}" if mins.startswith("0") else cardinal(int(mins)))
    elif not suffix:
        words += " o'clock"
    if suffix:
        words += " " + ("AM" if suffix.lower().startswith("a") else "PM")
        tail = m.group(0)[-1]
        if tail == "." and m.end() == len(m.string):
            words += "."
    return words


def _date_mdy(m: re.Match[str]) -> str:
    month = _MONTH_OF[m.group(1)[:3].lower()]
    words = f"{month} {ordinal(int(m.group(2)))}"
    if m.group(3):
        words += f", {year(int(m.group(3)))}"
    return words


def _date_dmy(m: re.Match[str]) -> str:
    month = _MONTH_OF[m.group(2)[:3].lower()]
    the = "" if re.search(r"\bthe\s*$", m.string[: m.start()], re.I) else "the "
    words = f"{the}{ordinal(int(m.group(1)))} of {month}"
    if m.group(3):
        words += f", {year(int(m.group(3)))}"
    return words


def _numeric_date(m: re.Match[str]) -> str:
    a, b, y = int(m.group(1)), int(m.group(2)), m.group(3)
    month, day = (a, b) if a <= 12 else (b, a)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m.group(0)
    yy = int(y) if len(y) == 4 else 2000 + int(y) if int(y) < 50 else 1900 + int(y)
    return f"{MONTHS[month - 1]} {ordinal(day)}, {year(yy)}"


def _iso_date(m: re.Match[str]) -> str:
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not (1 <= mo <= 12 and 1 <= d <= 31):
        return m.group(0)
    return f"{MONTHS[mo - 1]} {ordinal(d)}, {year(y)}"


def _month_year(m: re.Match[str]) -> str:
    return f"{_MONTH_OF[m.group(1)[:3].lower()]} {year(int(m.group(2)))}"


def _year_range(m: re.Match[str]) -> str:
    start, end = m.group(1), m.group(2)
    a = int(start)
    b = int(end) if len(end) == 4 else int(start[: 4 - len(end)] + end)
    if b <= a:
        return m.group(0)
    return f"{year(a)} to {year(b)}"


def _range(m: re.Match[str]) -> str:
    return f"{m.group(1) or ''}{number(m.group(2))} to {number(m.group(3))}"


def _decade(m: re.Match[str]) -> str:
    if m.group(1):  # '60s
        return plural(cardinal(int(m.group(1))))
    n = int(m.group(2))
    return plural(year(n))


_FRACTION_NAMES = {2: ("half", "halves"), 4: ("quarter", "quarters")}


def fraction_words(num: int, den: int) -> str:
    one, many = _FRACTION_NAMES.get(den, (ordinal(den), ordinal(den) + "s"))
    return f"{cardinal(num)} {one if num == 1 else many}"


_VULGAR = {"½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8), "⅞": (7, 8)}


def _fraction(m: re.Match[str]) -> str:
    whole = m.group(1)
    if m.group(2):
        num, den = int(m.group(2)), int(m.group(3))
    else:
        num, den = _VULGAR[m.group(4)]
    if den == 0 or num >= den * 4:
        return m.group(0)
    words = fraction_words(num, den)
    if whole:
        return f"{cardinal(int(whole))} and {'a ' + words.split(' ', 1)[1] if num == 1 else words}"
    return words


#: words after which a measure is part of the noun phrase: "the 5 kg frame"
_DETERMINERS = frozenset("a an the this that each every one his her its their our my your another any no".split())
#: words after a measure that are no noun it describes: "a 5 km walk" but "5 km away", "the 5 km of road"
_NOT_NOUNS = frozenset(
    "of per and or to in on at is was were are be been by with for from that which who away long high wide deep "
    "tall thick ago later earlier off up down out back behind ahead apart each more less too than as so but "
    "into onto over under across north south east west".split()
)


def _unit(m: re.Match[str]) -> str:
    """A measure; before a noun it describes, the adjective a narrator says ("the five-kilogram frame")."""
    amount, symbol = m.group(1), m.group(3)
    value = float(amount.replace(",", ""))
    if m.group(2) == "-" or _describes_a_noun(m):
        return f"{number(amount)}-{units.unit_words(symbol, 1, 'en')}"
    return f"{number(amount)} {units.unit_words(symbol, value, 'en')}"


def _describes_a_noun(m: re.Match[str]) -> bool:
    before = re.search(r"([A-Za-z]+)\s+$", m.string[: m.start()])
    after = re.match(r"\s+([a-z]+)\b(?!['’])", m.string[m.end():])
    return bool(before and after and before.group(1).lower() in _DETERMINERS and after.group(1) not in _NOT_NOUNS)


def _height(m: re.Match[str]) -> str:
    feet, inches = int(m.group(1)), m.group(2)
    words = f"{cardinal(feet)} {'foot' if feet == 1 else 'feet'}"
    if inches:
        words += f" {cardinal(int(inches))}"
    return words


def _plain_number(m: re.Match[str]) -> str:
    token = m.group(0)
    if m.start() and m.string[m.start() - 1].isalpha():  # "K2", "B52": a name with a number
        return " " + _plain_number_words(token, m)
    return _plain_number_words(token, m)


def _plain_number_words(token: str, m: re.Match[str]) -> str:
    if "," not in token and "." not in token and len(token) == 4 and 1000 <= int(token) <= 2099:
        before = m.string[: m.start()]
        after = m.string[m.end():]
        counted = _COUNTED.match(after)  # "1984 copies": a count before its noun
        if _STRONG_YEAR_CUE.search(before) or (not counted and (_YEAR_CUE.search(before) or int(token) >= 1100)):
            return year(int(token))
    if "," not in token and len(token.lstrip("-")) > 15:
        return digits(token, "en")
    return number(token)


#: an author-date citation's locator: "1996:III,29" (year, volume, page), "1996: 29-31", "2001:45, 47"
CITATION = re.compile(r"\b(1[5-9]\d{2}|20\d{2})[a-z]?\s?:\s?(?:([IVXLC]+|[ivxlc]+)\s?[,.]\s?)?"
                      r"(\d{1,4}(?:\s?[-–]\s?\d{1,4})?(?:\s?,\s?\d{1,4}(?:\s?[-–]\s?\d{1,4})?)*)\b(?![:.]\d)")
_NOT_NAMES = frozenset("in on by at from since until till of the and or but during after before about around "
                       "circa c year years summer winter spring autumn fall".split())
_PAGES = re.compile(r"(\d+)(?:\s?[-–]\s?(\d+))?")


def _citation(m: re.Match[str]) -> str:
    """A narrator reads a citation's locator as what it is: "nineteen ninety-six, volume three, page twenty-nine"."""
    from studio.text.normalize import roman

    before = m.string[:m.start()].rstrip()
    name = re.search(r"\b([A-Z][\w'’-]+)(?: et al\.)?,?$", before)
    cited = before.endswith(("(", "[", ";", ",")) or (name and name.group(1).lower() not in _NOT_NAMES)
    if not m.group(2) and re.search(r":\s", m.group(0)) and not cited:
        return m.group(0)  # "in 1996: 29 people": a year and a count, not a citation
    out = year(int(m.group(1)))
    if m.group(2):
        out += f", volume {cardinal(roman.value(m.group(2).upper()))}"
    spans = [(a, b) for a, b in _PAGES.findall(m.group(3))]
    pages = [number(a) + (f" to {number(b)}" if b else "") for a, b in spans]
    many = len(spans) > 1 or bool(spans[0][1])
    listed = pages[0] if len(pages) == 1 else ", ".join(pages[:-1]) + " and " + pages[-1]
    return f"{out}, {'pages' if many else 'page'} {listed}"


def _ordinal(m: re.Match[str]) -> str:
    return ordinal(_int(m.group(1)))


def rules() -> list[Rule]:
    """English number rules in the order they are tried (see the module docstring)."""
    return [
        (CITATION, _citation),
        (re.compile(r"\b([01]?\d|2[0-3])(?::([0-5]\d))?\s?([ap]\.\s?m\.|[AP]\.\s?M\.|[ap]m\b|[AP]M\b)"), _time),
        (re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)()(?!:?\d)"), _time),
        (re.compile(rf"(?<![\w$£€¥₹])(?:(?P<cur>{_CUR})\s?(?P<amount>(?:{_NUM})(?:\.\d+)?){_SCALE}?"
                    rf"|(?P<amount2>(?:{_NUM})(?:\.\d+)?)\s?(?P<cur2>{_CUR})(?![\w]))"), _money_either),
        (re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(p|¢)(?![\w']|\.\s?m\b)"), _pence),
        (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), _iso_date),
        (re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?![\d/])"), _numeric_date),
        (re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})(?i:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?"), _date_mdy),
        (re.compile(rf"\b(\d{{1,2}})(?i:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})(?:,?\s+(\d{{4}})\b)?"), _date_dmy),
        (re.compile(rf"\b({_MONTH})\s+(\d{{4}})\b"), _month_year),
        (re.compile(r"(?<![\w/])'?(?:'(\d0)s|(\d{2,3}0)s)\b"), _decade),
        (re.compile(r"\b(1\d{3}|20\d{2})\s?(?:[-–]\s?|/)(\d{4}|\d{2})\b(?![-–/]\d)"), _year_range),
        (re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?)\s?%\s?[-–]\s?(\d+(?:\.\d+)?)\s?%"), lambda m: f"{number(m.group(1))} to {number(m.group(2))} percent"),
        (re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?)\s?[-–]\s?(\d+(?:\.\d+)?)\s?%"), lambda m: f"{number(m.group(1))} to {number(m.group(2))} percent"),
        (re.compile(r"(?<![\w.,])(-?\d+(?:,\d{3})*(?:\.\d+)?)\s?%"), lambda m: f"{number(m.group(1))} percent"),
        (re.compile(r"\b(pp?\.\s?)?(\d+(?:,\d{3})*)\s?[-–]\s?(\d+(?:,\d{3})*)\b(?![-–]\d)"), _range),
        (re.compile(r"\b24/7\b"), lambda m: "twenty-four seven"),
        (re.compile(r"(?<![\w/.])(?:(\d+)\s+)?(?:(\d{1,2})/(\d{1,2})|([½⅓⅔¼¾⅕⅛⅜⅝⅞]))(?![\w/])"), _fraction),
        (re.compile(r"(?<![\w.])(\d+)\s?[′']\s?(?:(\d{1,2})\s?[″\"])?(?=[\s,.;:!?)]|$)(?<![′'])|(?<![\w.])(\d+)[′']"), _height_either),
        (units.pattern("en"), _unit),
        (re.compile(r"\b(\d{1,3}(?:,\d{3})*|\d+)(?i:st|nd|rd|th)\b"), _ordinal),
        (re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])|(?<=[a-zA-Z])\d+\b"), _plain_number),
    ]


def _money_either(m: re.Match[str]) -> str:
    if m.group("amount2") is not None:
        d = m.groupdict()
        cur = d["cur2"]
        one, many, minor1, minor_n = CURRENCIES[cur]
        amount = d["amount2"]
        whole, _, cents = amount.replace(",", "").partition(".")
        n = int(whole or "0")
        words = f"{cardinal(n)} {one if n == 1 else many}"
        if cents:
            words += f" and {cardinal(int((cents + '0')[:2]))} {minor_n}"
        return words
    return _money(m)


def _pence(m: re.Match[str]) -> str:
    value = m.group(1)
    minor = "pence" if m.group(2) == "p" else "cents"
    if value == "1":
        minor = "penny" if minor == "pence" else "cent"
    return f"{number(value)} {minor}"


def _height_either(m: re.Match[str]) -> str:
    if m.group(3):
        n = int(m.group(3))
        return f"{cardinal(n)} {'foot' if n == 1 else 'feet'}"
    return _height(m)


#: a slash between two words ("and/or", "his/her", "paragraph/run-in"); not a path ("/usr/bin"), a
#: web address (read earlier) or a unit ("km/h")
SLASHED = re.compile(r"(?<![\w/.:])([^\W\d_][\w'’-]*)/([^\W\d_][\w'’-]*)(?![\w/]|\.\w)")


def slashed(m: re.Match[str]) -> str:
    """"and/or" "and or", "his/her" "his or her": a narrator reads the slash as "or", never "slash"."""
    a, b = m.group(1), m.group(2)
    if f"{a}/{b}" in units.EN:
        return m.group(0)
    return f"{a} or" if a.lower() in ("and", "either") and b.lower() == "or" else f"{a} or {b}"


#: the letter A ("C of A", "Plan A is", "a and b"), not the article: espeak-ng says a lone "A" as the
#: article whatever its case, so the letter is written as it sounds; an article is followed by its noun
LETTER_A = re.compile(r"(?<![\w'’.-])[Aa](?=\s*(?:[,;:!?)\]]|\.(?!\w)|$)|\s+(?:is|are|was|were|has|have|and|or|of|in|"
                      r"equals|squared|cubed|transpose|inverse|then|itself)\b|\s+to(?![\w-])"
                      r"|\s+(?:plus|minus|times)\s+\w\b)")


def letter_a(m: re.Match[str]) -> str:
    return "Eh" if starts_sentence_at(m.string, m.start()) else "eh"


def starts_sentence_at(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \"'“‘([")
    return not before or before[-1] in ".!?"


#: symbols said as words wherever they stand (after the number rules took theirs)
SYMBOLS = {"&": "and", "+": "plus", "=": "equals", "@": "at", "§": "section", "§§": "sections", "#": "number",
           "°": "degrees", "×": "times", "÷": "divided by", "±": "plus or minus", "~": "about", "№": "number",
           "‰": "per mille", "<": "less than", ">": "more than"}
