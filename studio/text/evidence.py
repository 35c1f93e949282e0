"""What in a passage says which language it is in: not numbers, acronyms, Roman numerals,
units, abbreviations or names.

Why: a one-line English text like "The BBC hired Dafydd Rhys in 1998." was given Welsh
at 99.99 %: the statistical detector judges every letter, and here the letters that
are not English are a name. Numbers, acronyms ("FBI", "GB"), Roman numerals ("XIV"),
units ("km"), abbreviations ("Dr.", "p.m.") and capitalised words inside a sentence
(names, mostly) are the same in every language or belong to the name's language, not
the text's, so they are taken out of what the detector reads, and out of the count of
letters that decides how much a passage's own verdict may overrule its context.

Words in capitals are judged as the normaliser judges them (:mod:`studio.text.normalize.capitals`):
an acronym is no evidence, a word in capitals is the word, case-folded.

German capitalises every noun; its passages still have their articles, verbs and
function words in lower case, which is what the detector needs.
"""

from __future__ import annotations

import re
from functools import lru_cache

from studio.text.normalize import capitals

_TOKEN = re.compile(r"\S+")
_EDGE = "\"'()[]{}«»“”‘’„‚‹›¿¡*_"
_ABBREVIATION = re.compile(r"^(?:[A-Za-z]{1,4}\.)+$|^[A-Z][a-z]{0,3}\.$")
_UNITS = frozenset("km cm mm m kg g mg mi ft yd lb lbs oz mph kph ml l gb mb tb kb ghz mhz hz kw w v s h min".split())
_SENTENCE_END = ".!?:;\u2026"


@lru_cache(maxsize=16384)
def evidence(text: str) -> str:
    """``text`` without the words that carry no evidence of its language (see the module docstring).

    The first word of a sentence stays (it is capitalised for being first, not for being
    a name), unless it is itself a number, an acronym or the like.
    """
    kept: list[str] = []
    start = True
    caps = capitals.running_capitals(text)
    for m in _TOKEN.finditer(text):
        raw = m.group(0)
        word = raw.strip(_EDGE)
        core = word.rstrip(_SENTENCE_END + ",")
        first, start = start, bool(word) and word[-1] in _SENTENCE_END and not _ABBREVIATION.match(word)
        if not core or not any(ch.isalpha() for ch in core):
            continue
        if any(ch.isdigit() for ch in core) or _ABBREVIATION.match(word) or core.lower() in _UNITS:
            continue
        letters = [ch for ch in core if ch.isalpha()]
        if len(letters) >= 2 and all(ch.isupper() for ch in letters):
            if not capitals.is_word(core, caps):
                continue  # acronym or Roman numeral ("FBI", "XIV", "GB")
            core = core.lower()  # a word in capitals: the normaliser reads it as the word
        if not first and core[:1].isupper():
            continue  # a name inside a sentence
        kept.append(core)
    return " ".join(kept)


def evidence_letters(text: str) -> int:
    """How many letters of ``text`` are evidence of its language."""
    return sum(1 for ch in evidence(text) if ch.isalpha())
