"""Punctuation and symbols as the phonemizer may see them: the pause a mark means, never its name.

Why a pass of its own, last before espeak-ng: espeak-ng names a mark it does not take
for punctuation ("ran!—the" "ran exclamation the", "alpha*beta" "alpha asterisk beta",
"x:-y" "x colon y", "©" "copyright"), and which ones it names depends on the marks
beside it and on the spaces, so no list of instances can be complete. This pass
decides by character class instead, for every punctuation and symbol character
(Unicode categories P* and S*):

* a run of marks between two words becomes the one pause it means (the strongest of
  ``? ! . ; : ,``; dashes, brackets, ellipses and slashes are a comma's pause, quotes
  and other symbols none) followed by a space, so espeak-ng never sees two marks
  together nor a mark glued to the next word;
* inside a word only an apostrophe (``don't``) and a hyphen (``counting-house``) stay;
  between digits ``. , : / -`` stay (``3.5``, ``10:30``: the number's reading, said by
  the normaliser or the language's own rules);
* the symbols a narrator reads as words (``& % $ € £ ¥ ¢ + = ° § × ÷ ±``) stay only
  next to a digit or, ``&``, between words; everything else is dropped.

Letters, digits, combining marks and spaces are never touched. Used by the phonemizer on
every text it gives espeak-ng (the normaliser's spoken form, an override, a preview),
so what the voice is given (``studio inspect --spoken --json``'s ``phonemes``) is this.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: pauses by strength: a run of marks keeps its strongest
_STRENGTH = {"?": 6, "!": 5, ".": 4, ";": 3, ":": 2, ",": 1}
#: symbols said as words next to a number (espeak-ng reads them in the sentence's language)
_SAID_BY_DIGITS = frozenset("%$€£¥¢+=°§×÷±‰")
#: symbols said as words between words too
_SAID_BETWEEN_WORDS = frozenset("&")
_APOSTROPHES = frozenset("'’ʼ")
_HYPHENS = frozenset("-‐‑")
_BETWEEN_DIGITS = frozenset(".,:/-‐‑")
_ELLIPSIS = re.compile(r"\.{2,}|…")


@lru_cache(maxsize=4096)
def pause_of(mark: str) -> str:
    """The pause one punctuation or symbol character means: ``? ! . ; : ,`` or "" (none)."""
    if mark in _STRENGTH:
        return mark
    name = unicodedata.name(mark, "")
    if "INVERTED" in name or "QUOTATION" in name or "APOSTROPHE" in name:
        return ""
    for word, pause in (("QUESTION", "?"), ("EXCLAMATION", "!"), ("FULL STOP", "."), ("DANDA", "."),
                        ("SEMICOLON", ";"), ("COLON", ":"), ("COMMA", ","), ("ELLIPSIS", ","),
                        ("DASH", ","), ("PARENTHESIS", ","), ("BRACKET", ","), ("SOLIDUS", ",")):
        if word in name:
            return pause
    return ""


def is_mark(ch: str) -> bool:
    """A punctuation or symbol character (Unicode P* or S*)."""
    return unicodedata.category(ch)[0] in "PS"


def _is_word_char(ch: str) -> bool:
    return bool(ch) and (ch.isalnum() or unicodedata.category(ch)[0] == "M")


def quiet(text: str) -> str:
    """``text`` with every mark as the pause it means or kept as a word, never a mark espeak-ng names."""
    if not any(is_mark(ch) for ch in text):
        return text
    return _quiet(text)


@lru_cache(maxsize=1 << 14)
def _quiet(text: str) -> str:
    text = _ELLIPSIS.sub("…", text)
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if not is_mark(ch) and not ch.isspace():
            out.append(ch)
            i += 1
            continue
        j = i
        while j < n and (is_mark(text[j]) or text[j].isspace()):
            j += 1
        lone = i == 1 or (i > 1 and not _is_word_char(text[i - 2]))  # a letter alone before the run ("U.S.")
        out.append(_run(text[i:j], text[i - 1] if i else "", text[j] if j < n else "", bool(out), lone))
        i = j
    return "".join(out).strip()


def _run(run: str, before: str, after: str, started: bool, lone: bool) -> str:
    """One stretch of marks and spaces between ``before`` and ``after`` (single characters, "" at an end)."""
    bare = run.strip()
    spaced = bare != run
    if not bare:
        return run
    if bare == "." and lone and before.isalpha():
        return run  # initials ("U.S. army", "e.g. this"): espeak-ng reads those itself
    if len(bare) == 1 and not spaced and _is_word_char(before) and _is_word_char(after):
        if bare in _APOSTROPHES and before.isalpha() and after.isalpha():
            return "'"
        if bare in _HYPHENS:
            return "-"
        if bare in _BETWEEN_DIGITS and before.isdigit() and after.isdigit():
            return bare
    kept = [c for c in bare if c in _SAID_BETWEEN_WORDS or (c in _SAID_BY_DIGITS and (before.isdigit() or after.isdigit()))]
    if len(kept) == len(bare):
        return run  # "5%", "$3", "Smith & Wesson": said by espeak-ng as printed
    pauses = [pause_of(c) for c in bare if c not in kept]
    if "…" in bare:
        pauses.append("." if not after else ",")
    pause = max((p for p in pauses if p), key=_STRENGTH.__getitem__, default="")
    if pause == "." and after.islower():
        pause = ";"  # espeak-ng takes ". word" for an abbreviation's dot and drops the pause
    if not started:  # marks before the first word: espeak-ng would drop the pause, and may name a mark
        pause = ""
    # a symbol before the run's first pause belongs to the number before it ("81.8°;"), the rest to what follows
    first = next((k for k, c in enumerate(bare) if c not in kept and pause_of(c)), len(bare))
    left = "".join(c for c in bare[:first] if c in kept)
    right = " ".join(c for c in bare[first:] if c in kept)
    if left and before.isdigit():
        left = (" " if run[0].isspace() else "") + left
    else:
        left, right = "", " ".join(x for x in (" ".join(left), right) if x)
    if not after:  # the end of the text: the last pause, nothing after it
        return f"{left}{' ' + right if right else ''}{pause}"
    glue = "" if right and after.isdigit() and not run[-1].isspace() else " "  # "$3" stays one reading
    return f"{left}{pause} {right}{glue}" if right else f"{left}{pause} "

