"""Normalization, paragraphs and sentences.

Why this module is careful: a sentence is the unit of synthesis *and* of the audio
cache, so the split must be deterministic, must never lose a visible character
(``"".join(s.text + s.trailing) == paragraph.text``) and must never take
super-linear time - a 10 MB line with no punctuation has to come back in seconds.
So there are no backtracking regexes here: candidate boundaries are found with a
plain character-class scan and every decision looks at a bounded window around it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, NamedTuple

from studio.core.types import Sentence

DEFAULT_MAX_SENTENCE_CHARS = 500

# Invisible characters that carry nothing a voice could say: C0/C1 controls (except
# the whitespace ones, which become spaces), lone surrogates, soft hyphen, BOM /
# zero-width no-break space and the bidi embedding/isolate controls. ZWJ/ZWNJ stay:
# they change how emoji and Persian/Indic text are written.
_REMOVE_RE = re.compile(
    "[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u00ad\u061c\u200e\u200f"
    "\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)
# Whitespace runs other than a lone ASCII space (which needs no rewriting: keeps a
# 10 MB line of ordinary prose from turning into millions of substitutions).
_WS_RE = re.compile(r"[^\S ]\s*| \s+")
_BLANK_LINE_RE = re.compile(r"\n[^\S\n]*\n")

# Sentence-final punctuation (Latin, CJK full-width, Arabic/Urdu, Devanagari).
_TERMINAL_RE = re.compile("[.!?\u2026\u203c\u2047-\u2049\u3002\uff01\uff1f\uff61\u061f\u06d4\u0964\u0965]+")
_CJK_TERMINALS = frozenset("\u3002\uff01\uff1f\uff61")
_TERMINALS = frozenset(".!?\u2026\u203c\u2047\u2048\u2049\u061f\u06d4\u0964\u0965") | _CJK_TERMINALS
# Characters that close a quotation or bracket and so belong to the sentence before.
_CLOSERS = frozenset("\"'\u201d\u2019\u00bb\u203a)]}\u300d\u300f\u3009\u300b\uff09")
# French closing guillemets may be separated from the punctuation by a space.
_SPACED_CLOSERS = frozenset("\u00bb\u203a")
# Characters that open a quotation or bracket at the start of the next sentence.
_OPENERS = frozenset("\"'\u201c\u2018\u00ab\u2039([{\u00bf\u00a1\u300c\u300e\u2014\u2013")
_CLOSERS_STR = "".join(sorted(_CLOSERS))
_OPENERS_STR = "".join(sorted(_OPENERS))
# Clause punctuation where an over-long sentence may be cut.
_CLAUSE_MARKS = (";", ":", ",", "\u2014", "\u2013")
_DASHES = frozenset("\u2014\u2013")

# After these, a period never ends the sentence (titles and ranks precede names; the
# others are followed by an example, a comparison or a number). Per language, all applied:
# sentences are cut before their language is known, and a title in one language is not a
# sentence end in another.
_NO_BREAK_BY_LANGUAGE = {
    "en": """mr mrs ms mx dr prof st sr capt col gen lt sgt rev hon gov sen rep mt messrs adm maj cpl pvt
             cmdr brig msgr fr br supt insp det atty pres e.g i.e vs cf viz approx ca sq""",
    "fr": "mme mlle mgr",  # not "Me"/"MM.": "me." and "mm." end English sentences
    "de": "hr hrn frl z.b d.h u.a bzw vgl evtl ggf",
    "es": "sra srta dra dña ud uds vd",
    "it": "sig dott avv ing",
}
_NO_BREAK_ABBREVIATIONS = frozenset(w for words in _NO_BREAK_BY_LANGUAGE.values() for w in words.split())
# ... and these only when a number follows ("No. 5", "vol. 3", "fn. 3", "Jan. 5, 1509", "c. 1400";
# but "I said no. Then"): the normaliser reads them with their number.
_NUMBER_ABBREVIATIONS = frozenset(
    "no nos fig figs vol vols p pp ch chap art sec c fn fns n nn para paras doz pt pts bk l ll nr "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
# Letters with dots ("U.S.", "U.K.", "Ph.D.") continue the sentence unless the next word is
# one that starts sentences: "The U.S. Navy paid" is one sentence, "in the U.S. The next" two.
_DOTTED = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$|^Ph\.D$")
_SENTENCE_STARTERS = frozenset(
    """the a an i he she it we they you this that these those there then but and or so yet in on at by for
    from to with as if when while after before his her its our their my your some many most all no not one
    each every such what which who why how where however meanwhile still later now once thus today
    yesterday tomorrow here nor both either neither""".split()
)
_LOOKBACK = 24  # longest token inspected when deciding about an abbreviation


class Span(NamedTuple):
    """A sentence before it gets its language: where it sits and how it was cut."""

    text: str
    trailing: str
    was_split: bool


def normalize_text(text: str) -> str:
    """Document normalization: controls removed, whitespace runs -> one space, NFC.

    Controls are removed *before* whitespace is collapsed and NFC applied, so a
    stray ``\\x00`` between a letter and its combining accent cannot stop them from
    composing. Every visible character survives, in order.
    """
    text = _REMOVE_RE.sub("", text)
    text = _WS_RE.sub(" ", text)
    return unicodedata.normalize("NFC", text).strip(" ")


def split_paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs, each normalized; empty ones are skipped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2029", "\n\n").replace("\f", "\n\n")
    out = []
    for chunk in _BLANK_LINE_RE.split(text):
        para = normalize_text(chunk)
        if para:
            out.append(para)
    return out


def is_speakable(text: str) -> bool:
    """True when the text holds at least one letter or digit a voice can say ("* * *" and "—" do not).

    The one copy of the rule: the importer, the render loop and the streaming
    splitter all ask it, so a row the render leaves silent is one the import and the
    player agree has nothing to say.
    """
    return any(ch.isalnum() for ch in text)


def split_sentences(
    text: str, *, max_chars: int = DEFAULT_MAX_SENTENCE_CHARS, language: str = ""
) -> tuple[Sentence, ...]:
    """Split a *normalized* paragraph into sentences of at most ``max_chars``.

    ``language`` is copied into every Sentence (the language pass sets it later).
    """
    return tuple(
        Sentence(text=s.text, language=language, was_split=s.was_split, trailing=s.trailing)
        for s in split_spans(text, max_chars=max_chars)
    )


def split_spans(text: str, *, max_chars: int = DEFAULT_MAX_SENTENCE_CHARS) -> list[Span]:
    """The sentence spans of a normalized paragraph (see :func:`split_sentences`).

    Guarantees: concatenating ``text + trailing`` gives ``text`` back; every piece
    is non-empty, has no surrounding whitespace and is at most ``max_chars`` long.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    if not text:
        return []
    if text[0].isspace() or text[-1].isspace():
        raise ValueError("split_spans expects normalized text (see normalize_text)")
    spans: list[Span] = []
    start = 0
    for end, next_start in _sentence_boundaries(text):
        _emit(text, start, end, text[end:next_start], max_chars, spans)
        start = next_start
    if start < len(text):
        _emit(text, start, len(text), "", max_chars, spans)
    return spans


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """Contiguous ``(start, stop)`` pairs covering ``text``, one per sentence.

    The same boundaries as :func:`split_spans` (without the length cap), as offsets
    into ``text`` with the whitespace after a sentence included: streaming and
    calibration cut where the book's sentences are cut, so a preview never starts
    or pauses anywhere a render would not.
    """
    bounds: list[tuple[int, int]] = []
    start = 0
    for _end, next_start in _sentence_boundaries(text):
        bounds.append((start, next_start))
        start = next_start
    if start < len(text):
        bounds.append((start, len(text)))
    return bounds


def _sentence_boundaries(text: str) -> Iterable[tuple[int, int]]:
    """Yield ``(end_of_sentence, start_of_next)`` pairs, left to right.

    Each candidate is a run of terminal punctuation; the decision only looks a few
    characters back (the abbreviation) and forward (the next word), so the scan is
    linear in the length of the text. A would-be sentence with nothing to say
    (a lone ". . ." or "!") is not cut off; it joins the sentence that follows.
    """
    n = len(text)
    pos = 0
    speakable = False  # does the current sentence hold a letter or digit yet?
    checked = 0  # ... as far as this index
    while pos < n:
        m = _TERMINAL_RE.search(text, pos)
        if m is None:
            return
        run_start, end = m.start(), m.end()
        end = _absorb_closers(text, end)
        pos = end
        if end >= n:
            return  # the final sentence; the caller closes it
        if not speakable:
            speakable = any(ch.isalnum() for ch in text[checked:end])
        checked = end
        if not text[end].isspace():
            if speakable and any(ch in _CJK_TERMINALS for ch in text[run_start:end]):
                yield end, end  # CJK full stops need no space after them
                speakable = False
            continue
        ws_end = end
        while ws_end < n and text[ws_end].isspace():
            ws_end += 1
        if ws_end >= n:
            return
        if speakable and _is_boundary(text, run_start, end, ws_end):
            yield end, ws_end
            speakable = False
            checked = ws_end
        pos = ws_end


def _absorb_closers(text: str, end: int) -> int:
    """Extend a terminal run over closing quotes/brackets and further terminals.

    ``"Stop!" he said`` keeps its closing quote; French ``Viens ! »`` keeps the
    guillemet even across the space typeset before it.
    """
    n = len(text)
    while end < n:
        ch = text[end]
        if ch in _CLOSERS or ch in _TERMINALS:
            end += 1
        elif ch == " " and end + 1 < n and text[end + 1] in _SPACED_CLOSERS:
            end += 2
        else:
            break
    return end


def _is_boundary(text: str, run_start: int, end: int, next_start: int) -> bool:
    """Decide whether the terminal run ending at ``end`` closes a sentence."""
    nxt = text[next_start]
    if nxt in _OPENERS:
        # Look through an opening quote (and a French space after it) to the word.
        i = next_start + 1
        while i < len(text) and i < next_start + 3 and (text[i].isspace() or text[i] in _OPENERS):
            i += 1
        nxt = text[i] if i < len(text) else nxt
    if nxt.islower() or nxt in ",;:" or nxt in _TERMINALS:
        return False  # '"Stop!" he said', 'e.g. the', 'Wait... and then', '. . .'
    run = text[run_start:end]
    if run.rstrip(_CLOSERS_STR) != ".":
        return True  # ! ? ... and friends end the sentence before a capital
    token = _token_before(text, run_start)
    low = token.lower()
    if low in _NO_BREAK_ABBREVIATIONS or (low in _NUMBER_ABBREVIATIONS and nxt.isdigit()):
        return False
    if _DOTTED.match(token) and _word_at(text, next_start).lower() not in _SENTENCE_STARTERS:
        return False  # "The U.S. Navy", "a Ph.D. thesis"
    if len(token) == 1 and token.isalpha() and token.isupper() and nxt.isupper():
        return False  # initials: 'J. R. R. Tolkien'
    return True


def _word_at(text: str, idx: int) -> str:
    """The word starting at ``idx`` (after opening quotes), at most ``_LOOKBACK`` characters."""
    while idx < len(text) and text[idx] in _OPENERS:
        idx += 1
    end = idx
    while end < len(text) and end < idx + _LOOKBACK and text[end].isalpha():
        end += 1
    return text[idx:end]


def _token_before(text: str, idx: int) -> str:
    """The word just before ``idx`` (without opening quotes/brackets)."""
    lo = max(0, idx - _LOOKBACK)
    j = idx
    while j > lo and not text[j - 1].isspace():
        j -= 1
    token = text[j:idx]
    for mark in "\u2014\u2013\"\u201d(":  # '"—REV. HENRY': the word after a dash or a closed quotation
        token = token.rpartition(mark)[2]
    return token.lstrip(_OPENERS_STR)


def _emit(text: str, start: int, end: int, trailing: str, cap: int, out: list[Span]) -> None:
    """Append the sentence ``text[start:end]``, cutting it into pieces if over ``cap``."""
    if end - start <= cap:
        out.append(Span(text[start:end], trailing, False))
        return
    pos = start
    while end - pos > cap:
        cut, skip = _find_cut(text, pos, end, cap)
        out.append(Span(text[pos:cut], text[cut:skip], True))
        pos = skip
    out.append(Span(text[pos:end], trailing, True))


def _find_cut(text: str, pos: int, end: int, cap: int) -> tuple[int, int]:
    """Where to cut the piece starting at ``pos``: ``(piece_end, next_piece_start)``.

    Preference: the last clause mark (``; : , — –``) that leaves a piece of at least
    a third of the cap, then the last space, then a hard cut at the cap (moved back
    so a combining mark is not separated from its base letter).
    """
    limit = pos + cap  # the piece may end at most here (exclusive)
    min_end = pos + max(1, cap // 3)
    best = -1
    for mark in _CLAUSE_MARKS:
        hi = limit
        while True:
            k = text.rfind(mark, pos, hi)
            if k < 0 or k + 1 < min_end or k + 1 <= best:
                break
            after = text[k + 1] if k + 1 < end else ""
            if after == " " or (mark in _DASHES and after):
                best = k + 1
                break
            hi = k
    if best > pos:
        skip = best + 1 if best < end and text[best] == " " else best
        return best, skip
    w = text.rfind(" ", pos + 1, limit + 1)
    if w > pos:
        return w, w + 1
    cut = limit
    while cut > pos + 1 and _is_attached(text[cut]):
        cut -= 1
    if cut == pos + 1 and _is_attached(text[cut]):
        cut = limit
    return cut, cut


def _is_attached(ch: str) -> bool:
    """Characters that must not start a piece: combining marks, joiners, selectors."""
    return (
        unicodedata.combining(ch) != 0
        or unicodedata.category(ch) == "Mn"
        or ch in "\u200c\u200d"
        or "\ufe00" <= ch <= "\ufe0f"
        or "\U0001f3fb" <= ch <= "\U0001f3ff"
    )
