"""Chapter structure: headings, "Chapter IV"-style lines, front matter, sections.

Why in one place: every format ends up as a list of blocks, some of them headings.
Deciding *which* headings start chapters (and which one is really the book title)
is the same problem for Markdown, HTML and DOCX, so it is solved once here. The
chapter heading stays in the text as the chapter's first paragraph, so it is
spoken (audiobook convention) and ``Chapter.title`` carries the same words.
"""

from __future__ import annotations

import re
from typing import Sequence

from studio.text.content import place_notes
from studio.text.raw import Block, RawChapter

#: unstructured text longer than ~1.5x this is cut into "Section N" chapters
SECTION_WORDS = 5000
MAX_HEADING_CHARS = 100
MAX_TITLE_CHARS = 200
FRONT_MATTER_TITLE = "Front Matter"

_NUM_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    "fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|"
    "seventy|eighty|ninety|hundred"
)
_ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
    "last|final|premier|premi[eè]re|seconde?|deuxi[eè]me|troisi[eè]me|quatri[eè]me|"
    "cinqui[eè]me|un|une|deux|trois|quatre|cinq|six|sept|huit|neuf|dix"
)
_ROMAN = r"(?=[ivxlcdm])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
_NUMBER = rf"(?:\d{{1,4}}|{_ROMAN}|(?:{_NUM_WORDS})(?:[-\s](?:{_NUM_WORDS}))?|{_ORDINALS})"
_CHAPTER_WORD = r"(?:chapter|chap\.|chapitre|cap[ií]tulo|kapitel|part|partie|parte|teil|book|livre|volume|act)"
#: "Chapter 1", "CHAPTER IV.", "Chapter One: The Lamp", "Part Two - Winter"; not "Chapter one was dull."
CHAPTER_RE = re.compile(rf"^{_CHAPTER_WORD}\s+{_NUMBER}\.?(?:\s*[:.\u2014\u2013-]\s*\S.*)?$", re.IGNORECASE)
#: unnumbered headings that stand alone on their line
STANDALONE_RE = re.compile(
    r"^(?:prologue|epilogue|[ée]pilogue|interlude|afterword|foreword|preface|pr[ée]face|"
    r"introduction|avant-propos)\.?(?:\s*[:.\u2014\u2013-]\s*\S.*)?$",
    re.IGNORECASE,
)
_FRONT_TITLE_RE = re.compile(
    r"^(?:the\s+)?(?:front\s+)?(?:cover|title(?:\s*page)?|half[\s-]*title(?:\s*page)?|copyright(?:\s*page)?|"
    r"(?:table\s+of\s+)?contents|toc|dedication|epigraph|imprint|colophon|front\s*matter|"
    r"(?:other\s+)?books\s+by\b.*|also\s+by\b.*|couverture|page\s+de\s+titre|sommaire|"
    r"table\s+des\s+mati[eè]res|d[ée]dicace|mentions\s+l[ée]gales|inhalt|inhaltsverzeichnis|widmung)"
    r"\s*[.:]?$",
    re.IGNORECASE,
)
#: epub:type values of front matter (EPUB 3 structural semantics)
FRONT_TYPES = frozenset(
    {
        "cover", "titlepage", "halftitlepage", "frontmatter", "copyright-page", "toc",
        "dedication", "epigraph", "imprint", "colophon", "landmarks", "loi", "lot",
        "seriespage", "other-credits", "contributors", "errata",
    }
)
_TYPE_TITLES = {
    "cover": "Cover", "titlepage": "Title Page", "halftitlepage": "Half Title",
    "copyright-page": "Copyright", "toc": "Contents", "dedication": "Dedication",
    "epigraph": "Epigraph", "colophon": "Colophon", "imprint": "Imprint",
}
_WS = re.compile(r"\s+")


def clean_title(text: str) -> str:
    """One line, no runs of spaces, bounded length."""
    title = _WS.sub(" ", text).strip()
    if len(title) > MAX_TITLE_CHARS:
        title = title[: MAX_TITLE_CHARS - 1].rstrip() + "\u2026"
    return title


def is_chapter_heading(line: str) -> bool:
    """True for a line that is, by itself, a chapter/part heading in plain text."""
    if len(line) > 4 * MAX_HEADING_CHARS:
        return False  # cheap exit before touching a (possibly 10 MB) line
    line = _WS.sub(" ", line).strip().strip("*_#").strip()
    if not line or len(line) > MAX_HEADING_CHARS:
        return False
    return bool(CHAPTER_RE.match(line) or STANDALONE_RE.match(line))


def is_front_matter_title(title: str) -> bool:
    return bool(_FRONT_TITLE_RE.match(clean_title(title)))


def is_front_matter_blocks(blocks: Sequence[Block]) -> bool:
    """Most of the text sits inside front-matter semantics (titlepage, copyright...)."""
    total = front = 0
    for block in blocks:
        size = len(block.text)
        total += size
        if block.types & FRONT_TYPES and "bodymatter" not in block.types:
            front += size
    return total > 0 and front * 2 > total


def title_from_types(blocks: Sequence[Block]) -> str:
    """A readable title for an untitled front-matter part ("Title Page", ...)."""
    for block in blocks:
        for kind, title in _TYPE_TITLES.items():
            if kind in block.types:
                return title
    return ""


def build_chapters(blocks: Sequence[Block], *, fallback_title: str, notes: dict[str, str] | None = None,
                   language: str = "") -> tuple[list[RawChapter], str]:
    """Cut blocks into chapters; returns ``(chapters, title_found_in_text)``.

    Rules: a lone top-level heading that opens the document (Markdown ``# Title``,
    an HTML ``<h1>`` above ``<h2>`` chapters, a DOCX "Heading 1" above "Heading 2"s)
    is the book's title, not a chapter. Chapters start at the shallowest heading
    level left. Without headings, "Chapter 1"-style lines start chapters. Text
    before the first chapter is front matter. With no structure at all, long text
    is cut into ~5,000-word "Section N" chapters at paragraph boundaries. Notes go to the
    end of the chapter that points at them (:func:`studio.text.content.place_notes`; ``notes``:
    each note's id -> its mark, ``language``: the words that introduce it).
    """
    blocks = [b for b in blocks if b.text.strip()]
    found_title = ""
    headings = [i for i, b in enumerate(blocks) if b.level]
    if headings and headings[0] == 0:
        top = min(blocks[i].level or 0 for i in headings)
        tops = [i for i in headings if blocks[i].level == top]
        first = blocks[0]
        if tops == [0] and first.level == top and not is_chapter_heading(first.text):
            found_title = clean_title(first.text)
            blocks = blocks[1:]
            headings = [i - 1 for i in headings[1:]]
    if headings:
        top = min(blocks[i].level or 0 for i in headings)
        starts = [i for i in headings if blocks[i].level == top]
    else:
        starts = [i for i, b in enumerate(blocks) if "\n" not in b.text.strip() and is_chapter_heading(b.text)]
    if not starts:
        title = found_title or fallback_title
        (whole,) = place_notes([blocks], notes or {}, language)
        return split_sections(title, [b.text for b in whole], kinds=[b.kind for b in whole]), found_title
    bounds = ([0] if starts[0] > 0 else []) + starts + [len(blocks)]
    parts = place_notes([blocks[a:b] for a, b in zip(bounds, bounds[1:])], notes or {}, language)
    chapters: list[RawChapter] = []
    for n, part in enumerate(parts):
        kinds = [blk.kind for blk in part]
        if n == 0 and starts[0] > 0:
            chapters.append(RawChapter(title_from_types(part) or FRONT_MATTER_TITLE, [b.text for b in part], True,
                                       kinds=kinds))
            continue
        title = clean_title(part[0].text)
        front = is_front_matter_title(title) or is_front_matter_blocks(part)
        chapters.append(RawChapter(title, [blk.text for blk in part], front, kinds=kinds))
    return chapters, found_title


def split_sections(title: str, paragraphs: list[str], words_per_section: int = SECTION_WORDS,
                   kinds: list[str] | None = None) -> list[RawChapter]:
    """One chapter, or numbered sections when the text is long and has no headings.

    Cuts only between paragraphs; a last section under a quarter of the target is
    folded into the one before so the book does not end on a stub. ``kinds``: each
    paragraph's (:mod:`studio.text.content`), kept with it.
    """
    kinds = list(kinds or [""] * len(paragraphs))
    counts = [len(p.split()) for p in paragraphs]
    if sum(counts) <= words_per_section * 1.5:
        return [RawChapter(title, list(paragraphs), False, kinds=kinds)] if paragraphs else []
    groups: list[list[int]] = [[]]
    words = 0
    for i, n in enumerate(counts):
        if words >= words_per_section:
            groups.append([])
            words = 0
        groups[-1].append(i)
        words += n
    if len(groups) > 1 and words < words_per_section // 4:
        groups[-2].extend(groups.pop())
    return [RawChapter(f"Section {n}", [paragraphs[i] for i in g], False, kinds=[kinds[i] for i in g])
            for n, g in enumerate(groups, 1)]
