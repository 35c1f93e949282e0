"""Dialogue found: each paragraph split into quoted speech and narration.

Why a scanner of its own and not a regex: the same character is a quote mark in
one place and an apostrophe in another ("'Halloa,' says I" against "the sailors'
boots" and "'bout"), a quote may open in one paragraph and close three paragraphs
later, and a French or Spanish book marks speech with a dash at the start of the
paragraph instead of quote marks. Each decision looks at the characters around a
mark (and, for a quote left open, at how the next paragraph begins), so a
paragraph is scanned once, left to right, in linear time.

Pure: text in, character spans out. Nested quotes (a quote inside a quote) stay
part of the outer speaker's line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: marks that open a double-level quote; the value is the mark that closes it
_DOUBLE_OPEN = {"\u201c": "\u201d", "\u201e": "\u201c", "\u00ab": "\u00bb", '"': '"'}
_SINGLE_OPEN = {"\u2018": "\u2019", "\u2039": "\u203a", "'": "'"}
_DASHES = "\u2014\u2015\u2013"
#: a character before a mark that makes it an opening mark
_OPEN_BEFORE = set(" \t\n([{/" + _DASHES + "-") | set(_DOUBLE_OPEN) | set(_SINGLE_OPEN)
#: punctuation that, just before a single mark, makes it a closing quote (not an apostrophe)
_CLOSING_PUNCT = set(",.!?;:\u2026" + _DASHES + "-")
#: words that begin with an apostrophe (elisions): a mark before them opens no quote
#: unless a clear closing mark follows in the same paragraph
_ELISIONS = frozenset(
    "bout em tis twas twere twill til till cause cos n nough round un im er ere ave ow appen".split()
)
#: verbs of an inverted incise in dash dialogue ("— Oui, dit-il, ..."): French, Spanish, Russian
INCISE_VERBS = tuple(
    "dit répondit demanda s'écria s’écria reprit fit cria ajouta répliqua murmura continua observa interrompit "
    "déclara riposta poursuivit objecta dijo respondió preguntó exclamó contestó gritó replicó añadió "
    "murmuró repuso continuó сказал ответил спросил крикнул".split()
)
_INCISE_RE = re.compile(
    r"[,?!\u2026]\s+(?:lui\s+|leur\s+|le\s+)?(?:" + "|".join(INCISE_VERBS) + r")(?:-t)?(?:-il|-elle|-ils|-on|-je)?\b"
    r"[^,;!?]*?(?<!\bMr)(?<!\bMrs)(?<!\bDr)(?<!\bSt)(?<!\bM)[,.;!?]"
)


#: a speaker's name in capitals before a speech, the way a play prints it ("FRENCH SAILOR. Hist, boys!")
_STAGE = re.compile(r"^\s*(?P<label>[A-Z][A-Z'\u2019\-]+(?: [A-Z][A-Z'\u2019\-]+){0,3})"
                    r"(?:\s*\([^)]*\))?\s*[.:](?:\s+|$)")
_NOT_A_SPEAKER = re.compile(r"^(?:CHAPTER|BOOK|PART|VOLUME|SECTION|ACT|SCENE|THE END|FINIS|NOTE|[IVXLC]+)\b")
_MARKS = set(_DOUBLE_OPEN) | {"\u201d", "\u00bb"}  # double quote marks: a paragraph with them is not a play's


def stage_label(text: str) -> tuple[str, int] | None:
    """``(speaker, where the speech starts)`` when a paragraph opens with a speaker's name in
    capitals ("STUBB. Aye, aye!"; a paragraph that is only the name: the speech is the next
    paragraph), else None. Chapter and part headings are not speakers."""
    m = _STAGE.match(text)
    if not m or len(m.group("label").replace(" ", "")) < 3 or _NOT_A_SPEAKER.match(m.group("label")):
        return None
    rest = text[m.end():]
    if rest.strip() and (not re.search(r"[a-z]", rest) or any(c in _MARKS for c in text)):
        return None
    return " ".join(w.capitalize() for w in m.group("label").split()), m.end()


@dataclass(frozen=True)
class Span:
    """Characters ``start:end`` of a paragraph: quoted speech or narration.

    ``continued``: a quote that goes on from the previous paragraph (same speaker).
    """

    start: int
    end: int
    quoted: bool
    continued: bool = False


def split_dialogue(paragraphs: Sequence[str]) -> list[list[Span]]:
    """Every paragraph's spans, in order, covering its text without gaps or overlaps."""
    out: list[list[Span]] = []
    carried = ""  # the opening mark of a quote left open by the previous paragraph
    staged = False  # the previous paragraph was a speaker's name alone, as a play prints it
    for i, text in enumerate(paragraphs):
        following = paragraphs[i + 1] if i + 1 < len(paragraphs) else ""
        label = stage_label(text)
        if label and label[1] < len(text.rstrip()):  # "STUBB. Aye, aye!": the name, then the speech
            spans, carried = [Span(0, label[1], False), Span(label[1], len(text), True)], ""
        elif staged and text.strip() and not text.lstrip().startswith("(") and not label and \
                not any(c in _MARKS for c in text):
            spans, carried = [Span(0, len(text), True)], ""
        else:
            spans, carried = paragraph_spans(text, carried=carried, following=following)
        staged = bool(label) and label[1] >= len(text.rstrip())
        out.append(spans)
    return out


def quoted_text(text: str, spans: Sequence[Span]) -> list[str]:
    """The quoted pieces of ``text`` (what each line says), marks trimmed."""
    return [trim_marks(text[s.start:s.end]) for s in spans if s.quoted]


def trim_marks(piece: str) -> str:
    return piece.strip().strip("\"'\u201c\u201d\u2018\u2019\u00ab\u00bb\u2039\u203a\u201e" + _DASHES).strip()


def paragraph_spans(text: str, *, carried: str = "", following: str = "") -> tuple[list[Span], str]:
    """One paragraph's spans and the opening mark of a quote it leaves open ("" if none).

    ``carried`` is the mark of a quote the previous paragraph left open: it goes on
    here only if this paragraph begins with an opening mark again (the convention
    for a speech over several paragraphs). ``following`` is the next paragraph's
    text, looked at for the same reason.
    """
    stripped = text.lstrip()
    if stripped[:1] in _DASHES:
        return _dash_spans(text), ""
    pieces = _quote_ranges(text, carried, following)
    spans: list[Span] = []
    pos = 0
    for start, end, continued in pieces:
        if start > pos:
            spans.append(Span(pos, start, False))
        spans.append(Span(start, end, True, continued))
        pos = end
    if pos < len(text):
        spans.append(Span(pos, len(text), False))
    left_open = ""
    if pieces and pieces[-1][1] == len(text) and _unclosed_at_end(text, pieces[-1][0]):
        left_open = text[pieces[-1][0]:pieces[-1][0] + 1] if text[pieces[-1][0]] in _DOUBLE_OPEN or \
            text[pieces[-1][0]] in _SINGLE_OPEN else ""
    return _merge_blank(text, spans), left_open


def _unclosed_at_end(text: str, start: int) -> bool:
    tail = text.rstrip()
    return bool(tail) and tail[-1] not in ("\u201d", "\u2019", "\u00bb", "\u203a", '"', "'")


def _merge_blank(text: str, spans: list[Span]) -> list[Span]:
    """Narration of white space only (between two quotes) joins the quote before it."""
    out: list[Span] = []
    for s in spans:
        if not s.quoted and not text[s.start:s.end].strip() and out:
            out[-1] = Span(out[-1].start, s.end, out[-1].quoted, out[-1].continued)
        else:
            out.append(s)
    return out


def _is_opening(text: str, i: int) -> bool:
    before = text[i - 1] if i > 0 else " "
    after = text[i + 1] if i + 1 < len(text) else " "
    return (before in _OPEN_BEFORE or i == 0) and not after.isspace()


def _single_closes(text: str, i: int) -> str:
    """How a single mark inside a single-quoted span reads: "strong" close, "weak" close, or ""."""
    before = text[i - 1] if i > 0 else " "
    after = text[i + 1] if i + 1 < len(text) else " "
    if before.isspace():
        return ""
    if after.isalnum():  # don't, o'clock
        return ""
    if before in _CLOSING_PUNCT:
        return "strong"
    if not after.isspace():  # 'Halloa'! or end of paragraph
        return "strong" if after in ",.;:!?)" + _DASHES or i + 1 == len(text) else "weak"
    return "weak"  # sailors' boots, or 'Halloa' said he


def _elision_at(text: str, i: int) -> bool:
    m = re.match(r"[A-Za-z]+", text[i + 1:i + 8])
    return bool(m) and m.group(0).lower() in _ELISIONS


def _quote_ranges(text: str, carried: str, following: str) -> list[tuple[int, int, bool]]:
    """``(start, end, continued)`` of each top-level quote in a paragraph."""
    out: list[tuple[int, int, bool]] = []
    n = len(text)
    i = 0
    lead = len(text) - len(text.lstrip())
    continued = bool(carried) and text[lead:lead + 1] in (set(_DOUBLE_OPEN) | set(_SINGLE_OPEN))
    while i < n:
        ch = text[i]
        if ch in _DOUBLE_OPEN and (ch != '"' or _is_opening(text, i)):
            end = _close_double(text, i)
            out.append((i, end, continued and not out))
            i = end
            continue
        if ch in _SINGLE_OPEN and _is_opening(text, i):
            end = _close_single(text, i, following)
            if end is not None:
                out.append((i, end, continued and not out))
                i = end
                continue
        i += 1
    return out


def _close_double(text: str, start: int) -> int:
    """End (exclusive) of the double quote opened at ``start``; the paragraph's end if it stays open."""
    mark = text[start]
    closer = _DOUBLE_OPEN[mark]
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == closer and (closer != '"' or not _is_opening(text, i) or i + 1 == len(text)
                             or text[i - 1] in _DASHES):  # '"Stop—"—and': a dash ends the speech
            return i + 1
        if mark == '"' and ch in "\u201d":  # a mixed-up closing mark
            return i + 1
        i += 1
    return len(text)


def _close_single(text: str, start: int, following: str) -> int | None:
    """End of the single quote opened at ``start``; None when the mark is an apostrophe."""
    weak: list[int] = []
    i = start + 1
    nested = False
    while i < len(text):
        ch = text[i]
        if ch in "\u201c\u201d\"":
            nested = not nested if ch == '"' else ch == "\u201c"
        elif ch in ("\u2019", "'", "\u203a") and not nested:
            how = _single_closes(text, i)
            if how == "strong":
                return i + 1
            if how == "weak":
                weak.append(i)
        i += 1
    if _elision_at(text, start):
        return None
    nxt = following.lstrip()[:1]
    if nxt in ("\u2018", "'") and not weak:  # a speech that goes on in the next paragraph
        return len(text)
    if weak:
        return weak[-1] + 1
    return None


def _dash_spans(text: str) -> list[Span]:
    """Dash dialogue: speech from the paragraph's dash; a later dash, or an inverted
    incise ("dit-il", "respondió"), gives the narration back, the next dash the speech."""
    spans: list[Span] = []
    lead = len(text) - len(text.lstrip())
    if lead:
        spans.append(Span(0, lead, False))
    cuts: list[int] = []
    for m in re.finditer(f"[{_DASHES}]", text[lead + 1:]):
        cuts.append(lead + 1 + m.start())
    pieces: list[tuple[int, int, bool]] = []
    bounds = [lead] + cuts + [len(text)]
    speech = True
    for a, b in zip(bounds, bounds[1:]):
        if a == b:
            continue
        pieces.append((a, b, speech))
        speech = not speech
    for a, b, quoted in pieces:
        if quoted:
            spans.extend(_incises(text, a, b))
        else:
            spans.append(Span(a, b, False))
    return _merge_blank(text, [s for s in spans if s.end > s.start])


def _incises(text: str, a: int, b: int) -> list[Span]:
    """A dash line's speech, with the narration of inverted incises taken out."""
    out: list[Span] = []
    pos = a
    for m in _INCISE_RE.finditer(text, a, b):
        cut = m.start() + 1  # the comma stays with the speech
        if cut > pos:
            out.append(Span(pos, cut, True))
        out.append(Span(cut, m.end(), False))
        pos = m.end()
    if pos < b:
        rest = text[pos:b]
        out.append(Span(pos, b, bool(rest.strip(" .,;")) or not out))
    return out
