"""URLs, e-mail addresses, phone numbers and identifiers, read the way people say them.

Why a narrator's reading: a voice given "www.example.com/about" says nothing sensible
for "/", and "555-123-4567" comes out as "five hundred fifty-five minus one hundred
twenty-three..."; read aloud they are "w w w dot example dot com slash about" and
digit groups with a pause between them.
"""

from __future__ import annotations

import re
from typing import Callable

from studio.text.normalize.numbers import digits

_WORDS = {
    "en": {"dot": "dot", "at": "at", "slash": "slash", "dash": "dash", "plus": "plus", "underscore": "underscore"},
    "de": {"dot": "Punkt", "at": "at", "slash": "Schrägstrich", "dash": "Bindestrich", "plus": "plus", "underscore": "Unterstrich"},
    "fr": {"dot": "point", "at": "arobase", "slash": "barre oblique", "dash": "tiret", "plus": "plus", "underscore": "tiret bas"},
    "es": {"dot": "punto", "at": "arroba", "slash": "barra", "dash": "guion", "plus": "más", "underscore": "guion bajo"},
    "it": {"dot": "punto", "at": "chiocciola", "slash": "barra", "dash": "trattino", "plus": "più", "underscore": "trattino basso"},
}
URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"]+[^\s<>\".,;:!?)\]]|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|edu|gov|io|co\.uk|de|fr|es|it)(?:/[^\s<>\"]*[^\s<>\".,;:!?)\]])?\b")
EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
#: +1 555 123 4567, (555) 123-4567, 555-123-4567, 020 7946 0958, 01 42 68 53 00
PHONE = re.compile(
    r"(?<![\w.,+])(?:\+\d{1,3}(?:[\s.-]\(?\d{1,4}\)?){2,5}"
    r"|\(\d{2,4}\)\s?\d{3,4}[\s.-]\d{3,4}"
    r"|\d{2,4}[.-]\d{3,4}[.-]\d{3,4}|\d{3,4}\s\d{3,4}\s\d{4}"
    r"|0\d(?:[\s.]\d{2}){4})(?![\w.,]\d)"
)
#: a local number without its area code ("555-0134"): a phone number, not a range, when the
#: second group is not above the first (no range runs backwards) or a word before says so
LOCAL_PHONE = re.compile(r"(?<![\w.,+-])(\d{3})-(\d{4})(?![\w-]|[.,]\d)")
_PHONE_CUE = re.compile(r"\b(?:call|calling|called|dial|dialled|dialed|phone|ring|tel|telephone|fax|text|number|line|"
                        r"extension|ext|reach|at)\W*$", re.I)
_SPELL = re.compile(r"^(?:www|[bcdfghjklmnpqrstvwxz]{2,})$", re.I)


def _part(word: str, language: str) -> str:
    """One host or path piece: letters spelled where they cannot be a word (``www``), digits read."""
    w = _WORDS.get(language, _WORDS["en"])
    out = []
    for piece in re.split(r"([-_])", word):
        if piece == "-":
            out.append(w["dash"])
        elif piece == "_":
            out.append(w["underscore"])
        elif piece.isdigit():
            out.append(digits(piece, language) if len(piece) > 2 else piece)
        elif _SPELL.match(piece):
            out.append(" ".join(piece))
        elif piece:
            out.append(piece)
    return " ".join(out)


def say_address(text: str, language: str) -> str:
    """``www.example.com/about`` -> "w w w dot example dot com slash about" (scheme dropped)."""
    w = _WORDS.get(language, _WORDS["en"])
    text = re.sub(r"^https?://", "", text)
    out = []
    for token in re.split(r"([./@])", text.rstrip("/")):
        if token == ".":
            out.append(w["dot"])
        elif token == "/":
            out.append(w["slash"])
        elif token == "@":
            out.append(w["at"])
        elif token:
            out.append(_part(token, language))
    return " ".join(out)


def say_phone(text: str, language: str) -> str:
    """Digit groups read digit by digit, a comma (a short pause) between groups."""
    w = _WORDS.get(language, _WORDS["en"])
    groups = re.findall(r"\+|\d+", text)
    out = []
    for g in groups:
        if g == "+":
            out.append(w["plus"])
        else:
            out.append(digits(g, language) + ",")
    return " ".join(out).rstrip(",")


def _local_phone(m: re.Match[str], language: str) -> str:
    first, second = m.group(1), m.group(2)
    if int(second) <= int(first) or second.startswith("0") or _PHONE_CUE.search(m.string[max(0, m.start() - 30): m.start()]):
        return say_phone(m.group(0), language)
    return m.group(0)


def rules(language: str) -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    return [
        (EMAIL, lambda m: say_address(m.group(0), language)),
        (URL, lambda m: say_address(m.group(0), language)),
        (PHONE, lambda m: say_phone(m.group(0), language)),
        (LOCAL_PHONE, lambda m: _local_phone(m, language)),
    ]
