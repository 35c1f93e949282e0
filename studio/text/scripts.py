"""Which writing system a passage uses, and the languages that script leaves open.

Why first: the script is certain where statistics are not. Greek letters are
Greek, Hangul is Korean, kana is Japanese - no detector needed, and no detector can
get a Greek sentence wrong by calling it Icelandic. Where a script is shared
(Latin, Cyrillic, Arabic, Devanagari), it still narrows the field to the languages
written in it, which is what makes the statistical detector both faster and
more accurate on short text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter

#: (first code point, last code point, script); sorted by first code point
_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "Latin"),
    (0x0370, 0x03FF, "Greek"),
    (0x0400, 0x052F, "Cyrillic"),
    (0x0530, 0x058F, "Armenian"),
    (0x0590, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"),
    (0x0750, 0x077F, "Arabic"),
    (0x0900, 0x097F, "Devanagari"),
    (0x0980, 0x09FF, "Bengali"),
    (0x0A00, 0x0A7F, "Gurmukhi"),
    (0x0A80, 0x0AFF, "Gujarati"),
    (0x0B80, 0x0BFF, "Tamil"),
    (0x0C00, 0x0C7F, "Telugu"),
    (0x0D00, 0x0D7F, "Malayalam"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x10A0, 0x10FF, "Georgian"),
    (0x1100, 0x11FF, "Hangul"),
    (0x1E00, 0x1EFF, "Latin"),
    (0x1F00, 0x1FFF, "Greek"),
    (0x3040, 0x30FF, "Kana"),
    (0x3130, 0x318F, "Hangul"),
    (0x3400, 0x4DBF, "Han"),
    (0x4E00, 0x9FFF, "Han"),
    (0xAC00, 0xD7AF, "Hangul"),
    (0xFB50, 0xFDFF, "Arabic"),
    (0xFE70, 0xFEFF, "Arabic"),
)
_STARTS = [r[0] for r in _RANGES]
#: scripts that name their language outright
SCRIPT_LANGUAGE = {
    "Greek": "el", "Hebrew": "he", "Armenian": "hy", "Georgian": "ka", "Hangul": "ko", "Kana": "ja",
    "Han": "zh", "Thai": "th", "Bengali": "bn", "Gurmukhi": "pa", "Gujarati": "gu", "Tamil": "ta",
    "Telugu": "te", "Malayalam": "ml",
}
#: scripts shared by several languages: the detector chooses among these
SCRIPT_LANGUAGES = {
    "Latin": frozenset(
        "en de fr es it pt nl pl cs sk ca da sv nb fi hu ro tr la sl lv cy is sw vi id "
        "lt et hr bs sq ga eu af eo az ms tl nn".split()
    ),
    "Cyrillic": frozenset("ru uk bg sr mk be kk mn".split()),
    "Arabic": frozenset("ar fa ur".split()),
    "Devanagari": frozenset("hi mr".split()),
}
_NOT_LATIN = re.compile(r"[^\x00-\u024f\u1e00-\u1eff\u2000-\u206f]")


def script_of(char: str) -> str:
    """The script of one letter, ``""`` for anything outside the table."""
    cp = ord(char)
    i = bisect_right(_STARTS, cp) - 1
    if i >= 0 and cp <= _RANGES[i][1]:
        return _RANGES[i][2]
    return ""


def dominant_script(text: str) -> str:
    """The script most of the letters are written in (``""`` with no letters).

    Japanese mixes kanji (Han) with kana; any kana among Han makes it Japanese.
    Pure Latin text - nearly every paragraph of a European book - skips the
    per-letter loop entirely.
    """
    if not _NOT_LATIN.search(text):
        return "Latin" if any(ch.isalpha() for ch in text) else ""
    counts = Counter(script_of(ch) for ch in text if ch.isalpha())
    counts.pop("", None)
    if not counts:
        return ""
    if counts["Kana"] and counts["Han"]:
        counts["Kana"] += counts.pop("Han")
    return max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
