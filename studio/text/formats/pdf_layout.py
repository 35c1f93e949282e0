"""Page lines -> running text: the layout half of the PDF reader, free of any PDF library.

Why separate: a PDF has no paragraphs, only positioned lines. Everything that turns
those lines back into prose - dropping running headers, footers and page numbers,
rejoining hyphenated words, cutting paragraphs at wide gaps or indents, spotting
headings by font size - is plain geometry on :class:`Line`, decided here, so the
rules can be read (and tested) without a PDF parser in the way.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from statistics import median
from typing import Sequence

#: lines in the top or bottom this share of a page may be running headers/footers
MARGIN_ZONE = 0.12
#: a line this much larger than the body text is a heading
HEADING_RATIO = 1.15
#: a vertical gap this many times the usual line step starts a paragraph
PARAGRAPH_GAP = 1.45
#: a line starting this many body font sizes right of the column's left edge is indented
INDENT_EMS = 0.8
#: a last line shorter than this share of the column width ends a paragraph at a page break
SHORT_LINE = 0.8

_PAGE_NUMBER = re.compile(
    r"^(?:(?:page|p\.|seite|p[aá]gina|pagina|strona|strana|стр\.?|страница)\s*)?"
    r"[-\u2013\u2014(\[]?\s*(?:\d{1,4}|(?=[ivxlcdm])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3}))"
    r"\s*[-\u2013\u2014)\]]?"
    r"(?:\s*(?:/|of|von|de|di|z|из)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_HYPHENS = "-\u2010\u00ad"


@dataclass
class Line:
    """One text line on a page, in PDF points (``top`` measured down from the page top)."""

    text: str
    page: int
    x0: float
    x1: float
    top: float
    bottom: float
    size: float

    @property
    def height(self) -> float:
        return self.bottom - self.top


@dataclass
class PageLines:
    """The lines of one page in reading order, and the page height."""

    height: float
    lines: list[Line]


@dataclass
class TextBlock:
    """A rebuilt paragraph or heading; ``page``/``top`` locate where it starts."""

    text: str
    page: int
    top: float
    level: int | None = None


def is_page_number(text: str) -> bool:
    """"12", "- 12 -", "xiv", "Page 3 of 40" and the like."""
    return bool(_PAGE_NUMBER.match(text.strip()))


def _margin_key(line: Line) -> str:
    """Running headers repeat with only the page number changing."""
    return _DIGITS.sub("#", " ".join(line.text.lower().split())) + f"|{round(line.size)}"


def strip_running_lines(pages: Sequence[PageLines]) -> list[PageLines]:
    """Drop page numbers and running headers/footers from the top and bottom margins.

    A margin line goes when it is a page number, or when the same text (digits
    ignored, same font size) sits in a margin of at least one other page. The font
    size is part of the match so a chapter heading at the top of a page is never
    mistaken for the running header that repeats its words in small print.
    """
    def in_margin(line: Line, page: PageLines, idx: int) -> bool:
        edge = idx < 2 or idx >= len(page.lines) - 2
        return edge and (line.bottom <= page.height * MARGIN_ZONE or line.top >= page.height * (1 - MARGIN_ZONE))

    seen: defaultdict[str, set[int]] = defaultdict(set)
    for number, page in enumerate(pages):
        for idx, line in enumerate(page.lines):
            if in_margin(line, page, idx):
                seen[_margin_key(line)].add(number)
    out = []
    for number, page in enumerate(pages):
        kept = [
            line for idx, line in enumerate(page.lines)
            if not (in_margin(line, page, idx) and (is_page_number(line.text) or len(seen[_margin_key(line)]) > 1))
        ]
        out.append(PageLines(page.height, kept))
    return out


def body_size(pages: Sequence[PageLines]) -> float:
    """The font size most characters are set in."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[round(line.size, 1)] += len(line.text)
    return max(sizes.items(), key=lambda kv: (kv[1], -kv[0]))[0] if sizes else 0.0


def heading_levels(pages: Sequence[PageLines], body: float) -> dict[float, int]:
    """Heading level by font size: the largest size is level 1."""
    big = sorted({round(line.size, 1) for p in pages for line in p.lines if line.size >= body * HEADING_RATIO}, reverse=True)
    return {size: level for level, size in enumerate(big[:6], 1)}


def join_lines(lines: Sequence[str]) -> str:
    """Lines of one paragraph -> one string; ``exam-`` + ``ple`` -> ``example``.

    A hyphen at a line end followed by a lowercase letter is a typesetter's break
    and goes; before a capital or a digit (``Jean-`` / ``Paul``) it is a real
    hyphen and stays, without the space.
    """
    out = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if not out:
            out = line
        elif out[-1] in _HYPHENS and len(out) > 1 and out[-2].isalpha():
            out = out[:-1] + line if line[0].islower() else (out.rstrip("\u00ad") + line)
        else:
            out += " " + line
    return out.replace("\u00ad", "")


def build_blocks(pages: Sequence[PageLines]) -> list[TextBlock]:
    """Rebuild paragraphs and headings from cleaned page lines, across page breaks.

    A paragraph ends at a gap clearly wider than the usual line step, at an
    indented line, at a change to or from heading size, and - at a page or column
    break - after a short last line. Headings keep their own blocks (a heading set
    on two lines becomes one block).
    """
    body = body_size(pages)
    levels = heading_levels(pages, body)
    lines = [line for page in pages for line in page.lines]
    if not lines:
        return []
    step = _usual_step(lines, body)
    left, width = _column(lines, body)
    blocks: list[TextBlock] = []
    current: list[Line] = []

    def flush() -> None:
        if current:
            level = levels.get(round(current[0].size, 1))
            blocks.append(TextBlock(join_lines([ln.text for ln in current]), current[0].page, current[0].top, level))
            current.clear()

    for line in lines:
        if current and _starts_new(current[-1], line, levels, body, step, left, width):
            flush()
        current.append(line)
    flush()
    return [b for b in blocks if b.text.strip()]


def _starts_new(prev: Line, line: Line, levels: dict[float, int], body: float, step: float, left: float, width: float) -> bool:
    prev_level = levels.get(round(prev.size, 1))
    level = levels.get(round(line.size, 1))
    if prev_level != level:
        return True
    if level is not None:  # a heading set on several lines stays one heading
        return line.page != prev.page or line.top - prev.bottom > step
    indented = line.x0 - left > INDENT_EMS * body
    if line.page != prev.page or line.top < prev.top:  # page or column break
        return indented or (prev.x1 - left) < SHORT_LINE * width
    return indented or (line.top - prev.top) > PARAGRAPH_GAP * step


def _usual_step(lines: Sequence[Line], body: float) -> float:
    """The median baseline-to-baseline distance between body lines on a page."""
    steps = [
        b.top - a.top for a, b in zip(lines, lines[1:])
        if a.page == b.page and 0 < b.top - a.top < 4 * max(body, 1.0) and abs(a.size - body) < 0.5
    ]
    return median(steps) if steps else max(body, 1.0) * 1.2


def _column(lines: Sequence[Line], body: float) -> tuple[float, float]:
    """Left edge and width of the body text column (the most common ones)."""
    lefts = Counter(round(ln.x0) for ln in lines if abs(ln.size - body) < 0.5)
    rights = sorted(ln.x1 for ln in lines if abs(ln.size - body) < 0.5)
    if not lefts:
        return 0.0, 1.0
    left = float(min(x for x, n in lefts.items() if n >= max(lefts.values()) * 0.5))
    right = rights[int(len(rights) * 0.9)]  # ragged right: most full lines reach about here
    return left, max(right - left, 1.0)
