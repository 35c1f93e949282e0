"""Expected and heard words made comparable, and how alike two stretches of words sound.

Why normalise both sides the same way: the recogniser writes "1842", "parlor" and
"Mr." where the book says "eighteen forty-two", "parlour" and "Mister"; counting
those as errors is how plain word error rates send a producer to listen to clean
sentences. Case, punctuation, hyphens and numbers (written either way) are folded
here; spelling variants and names are left to :func:`sound_alike`, which compares
espeak-ng phonemes of both sides (the same espeak the voice speaks with).

:func:`expected_text` is the one place that says what the voice was asked to say.
It is the sentence's spoken form (the text normaliser's numbers, abbreviations and
symbols), with the project's lexicon respellings applied.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from studio.core.language import language_family
from studio.core.lexicon import Lexicon

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*(?:st|nd|rd|th)?|[^\W\d_]+(?:['\u2019][^\W\d_]+)*", re.UNICODE)
#: "$13,341,160" is said (and heard) as the number and then the currency's name
_CURRENCIES = {"$": "dollars", "\u00a3": "pounds", "\u20ac": "euros"}
_CURRENCY = re.compile(r"([$\u00a3\u20ac])\s?(\d[\d,]*(?:\.\d+)?)")
_ORDINAL = re.compile(r"^(\d+)(st|nd|rd|th)$")
#: common abbreviations the voice expands (so the recogniser writes either form)
_ABBREVIATIONS = {"mr": "mister", "mrs": "missus", "dr": "doctor"}
_ROMAN = re.compile(r"[ivxlc]+")


def expected_text(text: str, language: str, lexicon: Lexicon | None = None) -> str:
    """The words the voice was asked to say: the sentence's spoken form, lexicon respellings applied.

    Why the spoken form: the voice says "Mount Hecla" and "eighteen forty-two" where the
    book prints "Mt. Hecla" and "1842". Heteronym respellings ("wownd") go back to the
    printed word: the recogniser writes the word, and the reading is checked by
    :mod:`studio.proof.pronounce`, not by ear.
    """
    from studio.text.normalize import spoken_form

    said = spoken_form(text, language, lexicon)
    said = lexicon.respelled(said, language) if lexicon else said
    if language_family(language) != "en":
        return said
    printed = {w.casefold() for w in _TOKEN.findall(text)}
    for alt, word in _respellings().items():
        if alt.casefold() not in printed:
            said = re.sub(rf"(?i)\b{re.escape(alt)}\b", word, said)
    return said


@lru_cache(maxsize=1)
def _respellings() -> dict[str, str]:
    from studio.text.normalize import heteronyms

    out = {alt: word for word, (alt, _test) in heteronyms.HETERONYMS.items() if alt != word}
    out.update({alt: word for word, (alt, _nouns) in heteronyms.PROPER.items()})
    return out


def _number_words(token: str, language: str) -> list[str]:
    """A number as the spoken form says it, by the one speller (:mod:`studio.text.normalize.numbers`)."""
    from studio.text.normalize import numbers

    lang = language_family(language) or "en"
    ordinal = _ORDINAL.match(token)
    plain = token.replace(",", "")
    try:
        if ordinal:
            spoken = numbers.ordinal(int(ordinal.group(1)), lang)
        elif plain.isdigit():
            value = int(plain)
            is_year = lang == "en" and token == plain and len(plain) == 4 and 1100 <= value <= 1999  # "1,250" is no year
            spoken = numbers.year(value, lang) if is_year else numbers.cardinal(value, lang)
        else:
            spoken = numbers.decimal(plain, lang)
    except ValueError:
        digits = re.sub(r"\D", "", token)
        if not digits:
            return [token]
        spoken = numbers.cardinal(int(digits), "en")
    words = _TOKEN.findall(spoken.replace("-", " ").casefold())
    return [w for w in words if w != "and"] if lang == "en" else words  # the spoken form says "three hundred forty"


def _money(m: re.Match[str]) -> str:
    """"$1,250.50" as "1,250 dollars and 50 cents" ("$3.00": "3 dollars"), as the spoken form says it."""
    whole, _, cents = m.group(2).rstrip(",").partition(".")
    tail = f" and {cents} cents" if cents.strip("0") else ""
    return f"{whole} {_CURRENCIES[m.group(1)]}{tail} "


def normalize_words(text: str, language: str) -> list[str]:
    """Lower-case words without punctuation; numbers spelled out; hyphenated words split."""
    folded = _CURRENCY.sub(_money, unicodedata.normalize("NFKC", text))
    folded = folded.replace("-", " ").replace("\u2014", " ").replace("\u2013", " ")
    out: list[str] = []
    for token in _TOKEN.findall(folded):
        if token[0].isdigit():
            out.extend(_number_words(token, language))
            continue
        word = token.casefold().replace("\u2019", "'")
        out.append(_ABBREVIATIONS.get(word, word) if language_family(language) == "en" else word)
    return [w for i, w in enumerate(out) if not numeral_name(out, i)]


def numeral_name(words: list[str], i: int) -> bool:
    """The recogniser names the numeral it writes ("vol. ii." heard as "Volume Roman II"): not a word said."""
    return words[i] == "roman" and i + 1 < len(words) and bool(_ROMAN.fullmatch(words[i + 1]))


#: English names a voice says for a symbol left in what it was given ("Hoot!" read "hoot exclamation")
SYMBOL_NAMES = {"/": ("slash", "stroke"), ":": ("colon",), ";": ("semicolon",), "!": ("exclamation",),
                "?": ("question",), "*": ("asterisk", "star"), "#": ("hash", "hashtag"), "|": ("bar", "vertical"),
                "\\": ("backslash",), "~": ("tilde",), "^": ("caret", "circumflex"), "_": ("underscore",),
                "=": ("equals",), "<": ("less",), ">": ("greater",), "(": ("bracket", "parenthesis"),
                ")": ("bracket", "parenthesis"), "[": ("bracket",), "]": ("bracket",), "{": ("brace",),
                "}": ("brace",), "&": ("ampersand",)}


def symbol_names(said: str, language: str) -> dict[str, str]:
    """The names of the symbols left in what the voice was given: name -> symbol (English only)."""
    if language_family(language) != "en":
        return {}
    return {name: c for c in set(said) & set(SYMBOL_NAMES) for name in SYMBOL_NAMES[c]}


#: words said as exclamations, which the recogniser writes its own way ("Ha" as "Ah", "Huzza" as "hazaw")
INTERJECTIONS = frozenset(
    "ah aha ahem alack alas avast aye bah bravo eh egad fie gadzooks ha hah haha hallo halloa hark heigh hem hey "
    "hist ho hoho hollo holloa hoot huh hullo humph hurrah hurray huzza huzzah la lo lor nay o oh oho ooh "
    "pah pooh pish pshaw psst sh shh tush tut ugh whew whoa wow yea zounds".split())
_CLAUSE = re.compile(r"([^,.;:!?\"\u201c\u201d\u2018\u2019()\u2014]+)!")


def exclaimed(text: str, language: str) -> frozenset[str]:
    """Interjections of the printed text: known ones, and any exclamation of one or two words ("Hoot!")."""
    if language_family(language) != "en":
        return frozenset()
    short = [w for m in _CLAUSE.finditer(text) if len(words := normalize_words(m.group(1), language)) <= 2
             for w in words]
    return frozenset(short) | frozenset(w for w in normalize_words(text, language) if w in INTERJECTIONS)


_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "billion".split())


def currency_guessed(words: list[str], i: int, expected: set[str]) -> bool:
    """The recogniser's own dollar sign ("2000" written "$2,000"): "dollars" after a number, where the
    text names no dollar."""
    return words[i] in ("dollar", "dollars") and i > 0 and words[i - 1] in _NUMBER_WORDS \
        and not expected & {"dollar", "dollars"}


@dataclass(frozen=True)
class Region:
    """A stretch where expected and heard words differ: ``expected[e0:e1]`` vs ``heard[h0:h1]``."""

    e0: int
    e1: int
    h0: int
    h1: int


def align_words(expected: list[str], heard: list[str]) -> list[Region]:
    """Levenshtein alignment of two word lists; the differing stretches, in order.

    Why not ``difflib``: its longest-match heuristic pairs a repeated "the" across
    the sentence and reports a clean sentence as a block of edits.
    """
    n, m = len(expected), len(heard)
    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        cost[i][0] = i
    for j in range(1, m + 1):
        cost[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            same = expected[i - 1] == heard[j - 1]
            cost[i][j] = min(cost[i - 1][j - 1] + (0 if same else 1), cost[i - 1][j] + 1, cost[i][j - 1] + 1)
    ops: list[tuple[int, int, bool]] = []  # (i, j, match) walked back from the end
    i, j = n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0 and expected[i - 1] == heard[j - 1] and cost[i][j] == cost[i - 1][j - 1]:
            ops.append((i - 1, j - 1, True))
            i, j = i - 1, j - 1
        elif i > 0 and j > 0 and cost[i][j] == cost[i - 1][j - 1] + 1:
            ops.append((i - 1, j - 1, False))
            i, j = i - 1, j - 1
        elif i > 0 and cost[i][j] == cost[i - 1][j] + 1:
            ops.append((i - 1, j, False))
            i -= 1
        else:
            ops.append((i, j - 1, False))
            j -= 1
    ops.reverse()
    regions: list[Region] = []
    start: tuple[int, int] | None = None
    i = j = 0
    for oi, oj, match in ops:
        if match:
            if start is not None:
                regions.append(Region(start[0], oi, start[1], oj))
                start = None
            i, j = oi + 1, oj + 1
        elif start is None:
            start = (i, j)
    if start is not None:
        regions.append(Region(start[0], n, start[1], m))
    return regions


_STRIP_IPA = str.maketrans("", "", "ˈˌːˑ‿ ")


@lru_cache(maxsize=8192)
def phonemes(words: str, language: str) -> str:
    """espeak-ng phonemes of some words (stress and length marks dropped); "" if espeak cannot."""
    if not words.strip():
        return ""
    from studio.core.errors import StudioError
    from studio.engine.voice.phonemize import _espeak_handle, espeak_voice_for

    try:
        voice = espeak_voice_for(language, "", "")
        lock, phonemizer = _espeak_handle()
        with lock:
            out = phonemizer.phonemize(voice, words)
    except (StudioError, RuntimeError) as exc:
        log.debug("no phonemes for %r in %s: %s", words, language, exc)
        return ""
    return "".join("".join(s) for s in out).translate(_STRIP_IPA)


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def sound_alike(expected: list[str], heard: list[str], language: str) -> float:
    """0..1: how alike two stretches of words sound (1 - phoneme edit distance / length).

    Spelling variants ("parlour"/"parlor"), names spelt by ear ("Queequeg"/"Quikwick")
    and split or joined words ("rain fell"/"rainfall") come out near 1.
    """
    a, b = phonemes(" ".join(expected), language), phonemes(" ".join(heard), language)
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return 1.0 - edit_distance(a, b) / max(len(a), len(b))
