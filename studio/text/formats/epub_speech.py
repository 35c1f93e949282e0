"""Direction an EPUB 3 carries in CSS Speech: pauses, speaking rate and stressed words.

Why apart from the reader's text: what the publisher said about *how* to read it
becomes per-sentence direction in the project (:mod:`studio.project.direction`),
matched to the imported paragraphs by their text. The EPUB reader
(:mod:`studio.text.formats.epub`) hands each document it parses here too, in its one
pass over the archive; the blocks are found by the reader's own walk
(:class:`studio.text.formats.xhtml.Walker`), so a block's text here is the text the
importer made a paragraph of.

Read, in the ``style`` attribute and in the book's CSS (its ``text/css`` manifest
items and ``<style>`` elements; rules inside ``@media`` blocks count too) for simple
selectors only (``p``, ``.class``, ``p.class``; others are counted and ignored),
each also with its ``-epub-`` prefix:

* ``pause-before`` / ``pause-after`` / ``pause`` and ``rest-before`` / ``rest-after`` /
  ``rest`` on a block: silence before its first sentence / after its last (pause and
  rest add up), times (``300ms``, ``1.5s``) or strengths (``none`` 0, ``x-weak`` 0.1 s,
  ``weak`` 0.25 s, ``medium`` 0.5 s, ``strong`` 1 s, ``x-strong`` 1.5 s);
* ``voice-rate`` (inherited): ``x-slow`` 0.7, ``slow`` 0.85, ``medium``/``normal`` 1,
  ``fast`` 1.15, ``x-fast`` 1.3, times a percentage when one is given (``slow 90%``,
  ``80%``): the rate of the block's sentences;
* ``voice-stress`` (inherited): ``strong`` or ``moderate`` on an inline element
  stresses its words (``none``, ``reduced``, ``normal`` stress nothing).

Plain ``<em>``/``<i>`` are *not* emphasis: italics mark titles, ships and foreign
words as often as stress.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from lxml import etree

from studio.text.formats.xhtml import Walker, document_language, find_body, localname
from studio.text.raw import Block, BlockSpeech
from studio.text.segment import normalize_text

log = logging.getLogger(__name__)

CSS_MEDIA_TYPE = "text/css"
PAUSE_STRENGTHS = {"none": 0.0, "x-weak": 0.1, "weak": 0.25, "medium": 0.5, "strong": 1.0, "x-strong": 1.5}
RATES = {"x-slow": 0.7, "slow": 0.85, "medium": 1.0, "normal": 1.0, "fast": 1.15, "x-fast": 1.3}
STRESSED = frozenset({"strong", "moderate"})
_PROPS = ("pause-before", "pause-after", "pause", "rest-before", "rest-after", "rest", "voice-rate", "voice-stress")
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_SIMPLE = re.compile(r"^([a-zA-Z][\w-]*)?(?:\.([\w-]+))?$")
_TIME = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)(ms|s)$")


def declarations(style: str) -> dict[str, str]:
    """The speech properties of one declaration block, ``-epub-`` prefix dropped."""
    out: dict[str, str] = {}
    for decl in style.split(";"):
        name, sep, value = decl.partition(":")
        name = name.strip().lower().removeprefix("-epub-")
        if sep and name in _PROPS:
            out[name] = value.strip().lower().replace("!important", "").strip()
    return out


@dataclass
class StyleSheet:
    """Speech declarations by simple selector: ``(element or "", class or "")``."""

    rules: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    ignored: int = 0

    def add_css(self, css: str) -> None:
        for selectors, body in _RULE.findall(_COMMENT.sub("", css)):
            found = declarations(body)
            if not found:
                continue
            for selector in selectors.split(","):
                selector = selector.strip()
                if selector.startswith("@"):
                    continue
                m = _SIMPLE.match(selector)
                if m is None or not (m.group(1) or m.group(2)):
                    self.ignored += 1
                    continue
                self.rules.setdefault(((m.group(1) or "").lower(), m.group(2) or ""), {}).update(found)

    def of(self, el: etree._Element) -> dict[str, str]:
        """The element's speech properties: element rules, then class, then element.class, then ``style``."""
        tag = localname(el)
        out: dict[str, str] = {}
        classes = (el.get("class") or "").split()
        for key in [(tag, "")] + [("", c) for c in classes] + [(tag, c) for c in classes]:
            out.update(self.rules.get(key, {}))
        out.update(declarations(el.get("style") or ""))
        return out


def seconds(value: str) -> float | None:
    """A pause value in seconds (a time or a strength; None when neither)."""
    value = value.strip()
    if value in PAUSE_STRENGTHS:
        return PAUSE_STRENGTHS[value]
    m = _TIME.match(value)
    if m is None:
        return None
    return float(m.group(1)) / (1000.0 if m.group(2) == "ms" else 1.0)


def rate(value: str) -> float | None:
    """A ``voice-rate`` as a factor of the normal rate (None when unreadable)."""
    factor, seen = 1.0, False
    for part in value.split():
        if part in RATES:
            factor *= RATES[part]
            seen = True
        elif part.endswith("%"):
            try:
                factor *= float(part[:-1]) / 100.0
                seen = True
            except ValueError:
                return None
        else:
            return None
    return round(factor, 3) if seen and factor > 0 else None


def _pair(props: dict[str, str], side: str) -> float | None:
    """``pause-<side>`` plus ``rest-<side>`` (each also from its shorthand)."""
    total, seen = 0.0, False
    for kind in ("pause", "rest"):
        value = props.get(f"{kind}-{side}")
        if value is None and kind in props:
            parts = props[kind].split()
            value = parts[0] if side == "before" or len(parts) == 1 else parts[1]
        secs = seconds(value) if value is not None else None
        if secs is not None:
            total, seen = total + secs, True
    return round(total, 3) if seen else None


class _SpeechWalker(Walker):
    """The reader's walk, noting where each styled element's text lies."""

    def __init__(self, sheet: StyleSheet, language: str) -> None:
        super().__init__(language)
        self.sheet = sheet
        self.inherited: list[tuple[str | None, str | None]] = [(None, None)]  # (voice-rate, voice-stress)
        self.open: list[tuple[int, int, dict[str, str]]] = []  # (block count, text length, own props)
        self.rates: dict[int, str] = {}  # block -> voice-rate
        self.before: dict[int, float] = {}
        self.after: dict[int, float] = {}
        self.stress: dict[int, list[tuple[int, int]]] = {}  # block -> character spans
        self.whole: set[int] = set()  # blocks stressed as a whole
        self.texts: list[str] = []  # each block's text

    def _length(self) -> int:
        return sum(len(p) for p in self.parts)

    def opened(self, el: etree._Element, is_block: bool) -> None:
        props = self.sheet.of(el)
        rate_, stress = self.inherited[-1]
        self.inherited.append((props.get("voice-rate", rate_), props.get("voice-stress", stress)))
        self.open.append((len(self.blocks), self._length(), props))

    def closed(self, el: etree._Element, is_block: bool) -> None:
        first, start, props = self.open.pop()
        rate_, stress = self.inherited.pop()
        outer_stress = self.inherited[-1][1]
        if is_block:
            last = len(self.blocks)
            for b in range(first, last):  # inner blocks closed first: their own rate stays
                if rate_ is not None:
                    self.rates.setdefault(b, rate_)
                if stress in STRESSED and outer_stress not in STRESSED:
                    self.whole.add(b)
            if last > first:  # a section's pause and its first/last paragraph's: the longer one
                before, after = _pair(props, "before"), _pair(props, "after")
                if before is not None:
                    self.before[first] = max(before, self.before.get(first, 0.0))
                if after is not None:
                    self.after[last - 1] = max(after, self.after.get(last - 1, 0.0))
        elif stress in STRESSED and outer_stress not in STRESSED and len(self.blocks) == first:
            self.stress.setdefault(first, []).append((start, self._length()))

    def flush(self) -> None:
        text, count = "".join(self.parts), len(self.blocks)  # as the block holds it: the offsets are into it
        super().flush()
        if len(self.blocks) > count:
            self.texts.append(text)

    def emit(self, block: Block) -> None:
        super().emit(block)
        self.texts.append(block.text)

    def speech(self) -> list[BlockSpeech]:
        out = []
        for b, raw in enumerate(self.texts):
            words = normalize_text(raw).split()
            stressed: set[int] = set(range(len(words))) if b in self.whole else set()
            for start, stop in self.stress.get(b, ()):
                stressed.update(_word_range(raw, start, stop))
            factor = rate(self.rates[b]) if b in self.rates else None
            mark = BlockSpeech(normalize_text(raw), None if factor in (None, 1.0) else factor, self.before.get(b),
                               self.after.get(b), tuple(sorted(w for w in stressed if w < len(words))))
            if mark.rate or mark.pause_before is not None or mark.pause_after is not None or mark.stressed:
                out.append(mark)
        return out


def _word_range(text: str, start: int, stop: int) -> range:
    """The words (indices into ``text.split()``) that characters ``[start, stop)`` touch."""
    first = len(text[:start].split())
    if start and start < len(text) and not text[start - 1].isspace() and not text[start].isspace():
        first -= 1  # it starts inside a word: that word
    return range(max(first, 0), len(text[:stop].split()))


def speech_of_document(root: etree._Element, sheet: StyleSheet, language: str = "") -> list[BlockSpeech]:
    """The directed blocks of one content document, in reading order (``language``: the one its
    mathematics is said in, as the reader's walk says it)."""
    local = StyleSheet(dict(sheet.rules))
    for el in root.iter():
        if localname(el) == "style":
            local.add_css("".join(el.itertext()))
    walker = _SpeechWalker(local, document_language(root, language))
    walker.run(find_body(root))
    sheet.ignored += local.ignored
    return walker.speech()


def log_speech(name: str, sheet: StyleSheet, marks: list[BlockSpeech]) -> None:
    """Say what the book's CSS Speech gave (and what was not read)."""
    if sheet.ignored:
        log.info("%s: %d CSS selector(s) with speech properties not read (only element, .class, element.class)",
                 name, sheet.ignored)
    log.info("%s: %d paragraph(s) with CSS Speech direction", name, len(marks))
