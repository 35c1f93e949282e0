"""Text normalisation: what is printed -> what a narrator says, per language.

Why a stage of its own between segmentation and the phonemizer: the voice's front
end (espeak-ng) reads digits, symbols and abbreviations by its own crude rules ("Book
II" "Book Roman two", "1/2" "one slash two", "€300 million" "euros three hundred
million", "No." "note"). Spelling them out first, in the sentence's language, makes the
audio right and makes what will be said visible (``studio inspect --spoken``, the
sentence inspector) and overridable per sentence.

Public entry point: :func:`spoken_form` (the proof-listening check calls it to get the
words it should hear). Pure, deterministic and cached; each group of rules is compiled
on the first sentence that needs it (a cheap guard per group lets the rest through).
Lexicon entries win: the words an entry matches are left exactly as printed, so the
phoneme front end still finds and applies the entry.

English is complete (numbers, years, decades, ranges, dates, ordinals, money, percent,
times, fractions, Roman numerals, abbreviations, units, acronyms, symbols, phone numbers,
URLs and e-mail addresses, heteronyms); German, French, Spanish and Italian cover
numbers, dates, ordinals, money, percent, times, units and the common abbreviations;
other languages get their numbers through num2words where it knows the language.
Accuracy and speed per category: ``python bench/normalize_eval.py``.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

from studio.core.language import language_family

if TYPE_CHECKING:
    from studio.core.lexicon import Lexicon

Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]
#: rules that run only when their guard finds something in the text (built on first use)
Group = tuple[re.Pattern[str], Callable[[], list[Rule]]]

#: languages with their own rule tables
FULL_LANGUAGES = frozenset({"en", "de", "fr", "es", "it"})
#: languages num2words reads numbers in (the rest of a text in them passes unchanged)
NUMBER_LANGUAGES = frozenset("pt nl pl cs sk ca da sv nb no fi hu ro tr lv lt sl ru uk bg sr he ar fa id vi kn te ko ja".split())
#: the private-use code points standing in for lexicon-matched words while rules run
_HOLD = 0xE000

_LOCK = threading.RLock()
_RULES: dict[str, list[Group]] = {}


def spoken_form(text: str, language: str, lexicon: "Lexicon | None" = None) -> str:
    """``text`` as a narrator reads it in ``language`` (an ISO 639-1 tag; regions ignored).

    ``lexicon``: entries that apply here keep their words as printed (an entry for
    "Dr." or "1984" wins over the rules). Returns ``text`` itself when nothing needs
    saying differently, so callers can compare with ``is``/``==`` cheaply.
    """
    family = language_family(language) or "en"
    if lexicon:
        matches = lexicon.find(text, family)
        if matches:
            return _with_held(text, family, [(m.start, m.end) for m in matches])
    return _spoken(text, family)


def _with_held(text: str, family: str, spans: list[tuple[int, int]]) -> str:
    """Normalise with ``spans`` replaced by placeholders, then put them back as printed."""
    held: list[str] = []
    parts: list[str] = []
    pos = 0
    for start, end in spans:
        parts.append(text[pos:start])
        parts.append(chr(_HOLD + len(held)))
        held.append(text[start:end])
        pos = end
    parts.append(text[pos:])
    out = _spoken("".join(parts), family)
    for i, original in enumerate(held):
        out = out.replace(chr(_HOLD + i), original)
    return out if out != text else text


@lru_cache(maxsize=1 << 15)
def _spoken(text: str, family: str) -> str:
    if family not in FULL_LANGUAGES and family not in NUMBER_LANGUAGES:
        return text
    out = text
    for guard, rules in _rules(family):
        if guard.search(out):
            for pattern, replace in rules():
                out = pattern.sub(replace, out)
    out = _tidy(out)
    return text if out == text else out


_SPACES = re.compile(r"[ \t]{2,}")
_SPACE_BEFORE = re.compile(r" +([,.;:!?)])")


def _tidy(text: str) -> str:
    return _SPACE_BEFORE.sub(r"\1", _SPACES.sub(" ", text)).strip() if text.strip() else text


def _rules(family: str) -> list[Group]:
    rules = _RULES.get(family)
    if rules is None:
        with _LOCK:
            rules = _RULES.get(family)
            if rules is None:
                rules = _RULES[family] = _build(family)
    return rules


def _build(family: str) -> list[Group]:
    """The language's rule groups, in order (loaded on first need).

    Each group has a guard: its rules run only on a text the guard finds something in
    (no digit, no number rules), which keeps ordinary prose cheap; and they are compiled
    only when a guard first fires (compiling every pattern up front took 0.2 s, most of
    the start-up, for rules a short text never needs).
    """
    from studio.text.normalize import abbreviations, capitals, roman, web
    from studio.text.normalize.numbers import cardinal, ordinal

    digits = r"[0-9½⅓⅔¼¾⅕⅛⅜⅝⅞]"
    numerals = r"[IVXLCDM]{2,}|\b[IVXLCDM]\b|\b[ivx]+\b"
    if family == "en":
        from studio.text.normalize import en, heteronyms

        words = "|".join(re.escape(k) for k in abbreviations.TABLES["en"]) + r"|\b[Nn]os?\.|\bSt\.|\bDr\.|\bp\.|\bpp\.|\bca?\."
        groups: list[tuple[str, Callable[[], list[Rule]]]] = [
            (rf"@|{_WEB}|\d", lambda: web.rules("en")),
            (words, lambda: abbreviations.rules("en")),
            (numerals, lambda: roman.rules("en", cardinal, ordinal)),
            (rf"{digits}", en.rules),
            (r"[A-Z]{2}", lambda: [(capitals.CAPITALS, capitals.say)]),
            (r"\b[Aa]\b", lambda: [(en.LETTER_A, en.letter_a)]),
            (r"[^\W\d_]/[^\W\d_]", lambda: [(en.SLASHED, en.slashed)]),
            (_symbols(en.SYMBOLS), lambda: [_symbol_rule(en.SYMBOLS)]),
            (f"(?i:{heteronyms.WORDS.pattern})", lambda: [(heteronyms.WORDS, heteronyms.respell)]),
        ]
    elif family in ("de", "fr", "es", "it"):
        from studio.text.normalize import europe

        words = "|".join(re.escape(k).replace(r"\ ", r"\s?") for k in abbreviations.TABLES[family])
        groups = [
            (rf"@|{_WEB}|\d", lambda: web.rules(family)),
            (words, lambda: abbreviations.rules(family)),
            (numerals, lambda: roman.rules(family, cardinal, ordinal)),
            (rf"{digits}|[$€£¥%°]", lambda: europe.rules(family)),
            (_symbols(_OTHER_SYMBOLS[family]), lambda: [_symbol_rule(_OTHER_SYMBOLS[family])]),
        ]
    else:
        def number(m: re.Match[str]) -> str:
            token = m.group(0)
            return cardinal(int(token), family)

        groups = [(r"\d", lambda: [(re.compile(r"(?<![\w.,])\d+(?![\w.,]\d)"), number)])]
    return [(re.compile(guard), _once(rules)) for guard, rules in groups]


def _once(build: Callable[[], list[Rule]]) -> Callable[[], list[Rule]]:
    """``build`` run on first call (under the lock: two threads must not race to compile)."""
    done: list[list[Rule]] = []

    def rules() -> list[Rule]:
        if not done:
            with _LOCK:
                if not done:
                    done.append(build())
        return done[0]

    return rules


def _symbols(table: dict[str, str]) -> str:
    return "[" + "".join(re.escape(k) for k in table if len(k) == 1) + "]"


_WEB = r"www\.|://|\.(?:com|org|net|edu|gov|io|uk|de|fr|es|it)\b"
_OTHER_SYMBOLS = {
    "de": {"&": "und", "+": "plus", "=": "gleich", "§": "Paragraf", "°": "Grad"},
    "fr": {"&": "et", "+": "plus", "=": "égale", "§": "paragraphe", "°": "degrés"},
    "es": {"&": "y", "+": "más", "=": "igual a", "§": "párrafo", "°": "grados"},
    "it": {"&": "e", "+": "più", "=": "uguale a", "§": "paragrafo", "°": "gradi"},
}


def _symbol_rule(table: dict[str, str]) -> Rule:
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(r"\s*(" + "|".join(re.escape(k) for k in keys) + r")\s*")

    def say(m: re.Match[str]) -> str:
        symbol = m.group(1)
        if symbol in "<>" and not (m.group(0).startswith(" ") and m.group(0).endswith(" ")):
            return m.group(0)  # markup or arrows, not a comparison
        return f" {table[symbol]} "

    return pattern, say


def clear_cache() -> None:
    """Forget cached spoken forms (benchmarks measure cold and warm)."""
    _spoken.cache_clear()
