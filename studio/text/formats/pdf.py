"""PDF reader (text PDFs): chapters from the outline, else from heading sizes.

Why pdfminer.six: it is MIT-licensed, pure Python (no native parser to trust with
hostile files), and gives what reading a book back needs - every line with its
position, every character with its size, the reading order of text boxes, and the
document outline. The geometry rules live in :mod:`studio.text.formats.pdf_layout`; this
module talks to the library: pages to lines, footnote markers out, outline to
chapters. A PDF without a text layer (a scan) is refused with a one-line reason:
there is nothing to read until someone runs OCR on it.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Iterator

from studio.core.errors import ManuscriptError
from studio.text.formats.pdf_layout import Line, PageLines, TextBlock, build_blocks, strip_running_lines
from studio.text.raw import Block, RawBook, RawChapter, Reader
from studio.text.structure import FRONT_MATTER_TITLE, build_chapters, clean_title, is_front_matter_title

log = logging.getLogger(__name__)

#: more pages than any book; a hostile file claiming millions is refused early
MAX_PAGES = 5000
#: a character this much smaller than its line, set above the baseline, is a footnote marker
SUPERSCRIPT_RATIO = 0.8
_MARKER_CHARS = set("0123456789*\u2020\u2021\u00a7\u00b9\u00b2\u00b3\u2070\u2074\u2075\u2076\u2077\u2078\u2079")
_WS = re.compile(r"\s+")


def read_pdf(path: Path, max_bytes: int) -> RawBook:
    """Read a text PDF into raw chapters (see the module docstring for the rules).

    ``max_bytes``: the importer has checked the file's size; pdfminer reads pages as it goes.
    """
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFException
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdfpage import PDFPage
    from pdfminer.psexceptions import PSException

    with open(path, "rb") as fh:
        if not fh.read(1024).lstrip().startswith(b"%PDF"):
            raise ManuscriptError(path, "this is not a PDF file (no %PDF header)")
        fh.seek(0)
        try:
            doc = PDFDocument(PDFParser(fh))
            pages = list(_first_pages(PDFPage.create_pages(doc), path))
            if not pages:
                raise ManuscriptError(path, "the PDF has no pages")
            page_lines, images = _read_lines(pages)
        except PDFEncryptionError:
            raise ManuscriptError(path, "the PDF is encrypted with a password; it cannot be imported") from None
        except (PDFException, PSException) as exc:
            raise ManuscriptError(path, f"this is not a valid PDF file, or it is damaged ({type(exc).__name__})") from None
        if not any(ln.text.strip() for p in page_lines for ln in p.lines):
            if images:
                raise ManuscriptError(path, "this PDF has no text layer (a scanned document?); run OCR on it first, then import it again")
            raise ManuscriptError(path, "the PDF contains no text")
        outline = _outline(doc, {page.pageid: (i, p.height) for i, (page, p) in enumerate(zip(pages, page_lines))})
        info = _info(doc)
    blocks = build_blocks(strip_running_lines(page_lines))
    title = info.get("Title", "")
    if outline:
        chapters = _chapters_from_outline(blocks, outline)
    else:
        chapters, found = build_chapters([Block(b.text, level=b.level) for b in blocks], fallback_title=title or path.stem)
        title = title or found
    log.debug("pdf %s: %d pages, %d blocks, %d chapters (outline: %s)", path, len(pages), len(blocks), len(chapters), bool(outline))
    return RawBook(
        title=title or path.stem,
        author=info.get("Author", ""),
        language=info.get("Lang", ""),
        chapters=chapters,
        metadata={"format": "pdf"},
    )


READER = Reader("PDF", (".pdf",), read_pdf)


def _first_pages(pages: Iterator[Any], path: Path) -> Iterator[Any]:
    for number, page in enumerate(pages):
        if number >= MAX_PAGES:
            raise ManuscriptError(path, f"the PDF has more than {MAX_PAGES} pages; split it into smaller files")
        yield page


def _read_lines(pages: list[Any]) -> tuple[list[PageLines], bool]:
    """Every page's text lines in reading order, and whether any page holds images."""
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams, LTFigure, LTImage, LTTextContainer, LTTextLine
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager

    manager = PDFResourceManager()
    device = PDFPageAggregator(manager, laparams=LAParams())
    interpreter = PDFPageInterpreter(manager, device)
    out: list[PageLines] = []
    images = False
    for number, page in enumerate(pages):
        interpreter.process_page(page)
        layout = device.get_result()
        height = float(layout.height)
        lines: list[Line] = []
        for item in layout:
            if isinstance(item, (LTImage, LTFigure)):
                images = True
            if not isinstance(item, LTTextContainer):
                continue
            for obj in item if not isinstance(item, LTTextLine) else [item]:
                if isinstance(obj, LTTextLine):
                    line = _line(obj, number, height)
                    if line is not None:
                        lines.append(line)
        out.append(PageLines(height, lines))
    return out, images


def _line(obj: Any, page: int, height: float) -> Line | None:
    """One pdfminer text line as a :class:`Line`, footnote markers dropped."""
    from pdfminer.layout import LTChar

    chars = [c for c in obj if isinstance(c, LTChar)]
    if not chars:
        return None
    sizes = sorted(c.size for c in chars)
    size = sizes[len(sizes) // 2]
    base = sorted(c.y0 for c in chars if c.size >= size * SUPERSCRIPT_RATIO)
    baseline = base[len(base) // 2] if base else obj.y0
    text = []
    for item in obj:
        char = item.get_text()
        if isinstance(item, LTChar) and _is_marker(item, char, size, baseline):
            continue
        text.append(char)
    joined = _WS.sub(" ", "".join(text)).strip()
    if not joined:
        return None
    return Line(joined, page, float(obj.x0), float(obj.x1), height - float(obj.y1), height - float(obj.y0), float(size))


def _is_marker(char: Any, text: str, size: float, baseline: float) -> bool:
    """A small raised digit or dagger: the call of a footnote, not a word."""
    return text in _MARKER_CHARS and char.size < size * SUPERSCRIPT_RATIO and char.y0 > baseline + size * 0.15


def _info(doc: Any) -> dict[str, str]:
    """Title, Author and the catalog's /Lang as strings (missing ones left out)."""
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    def text(value: Any) -> str:
        value = resolve1(value)
        if isinstance(value, bytes):
            return decode_text(value).strip()
        return value.strip() if isinstance(value, str) else ""

    out: dict[str, str] = {}
    for info in doc.info[:1]:
        for key in ("Title", "Author"):
            if text(info.get(key)):
                out[key] = text(info.get(key))
    lang = text(doc.catalog.get("Lang"))
    if lang:
        out["Lang"] = lang
    return out


def _outline(doc: Any, page_index: dict[int, tuple[int, float]]) -> list[tuple[str, int, float | None]]:
    """The chapter-level outline entries as ``(title, page, top or None)``, in page order.

    Chapters are the shallowest level, or the level below when a single top entry
    (the book's own title) holds everything. Entries whose target cannot be found
    are skipped; an outline where none resolves counts as no outline.
    """
    from pdfminer.pdfdocument import PDFException, PDFNoOutlines
    from pdfminer.psexceptions import PSException

    try:
        entries = [(level, title, _target(doc, dest, action, page_index)) for level, title, dest, action, _se in doc.get_outlines()]
    except (PDFNoOutlines, PDFException, PSException, KeyError, TypeError, ValueError):
        return []
    entries = [(lvl, title if isinstance(title, str) else "", tgt) for lvl, title, tgt in entries if tgt is not None]
    if not entries:
        return []
    top = min(lvl for lvl, _t, _g in entries)
    if sum(1 for lvl, _t, _g in entries if lvl == top) == 1 and any(lvl > top for lvl, _t, _g in entries):
        top += 1
    chosen = [(clean_title(t), tgt[0], tgt[1]) for lvl, t, tgt in entries if lvl == top]
    return sorted(chosen, key=lambda e: (e[1], -(e[2] is None), e[2] or 0.0))


def _target(doc: Any, dest: Any, action: Any, page_index: dict[int, tuple[int, float]]) -> tuple[int, float | None] | None:
    """Resolve an outline destination to ``(page number, top in points from the page top)``."""
    from pdfminer.pdftypes import PDFObjRef, resolve1
    from pdfminer.psparser import PSLiteral

    if dest is None and action is not None:
        action = resolve1(action)
        dest = action.get("D") if isinstance(action, dict) else None
    dest = resolve1(dest)
    if isinstance(dest, (bytes, str, PSLiteral)):
        name = dest.name if isinstance(dest, PSLiteral) else dest
        dest = resolve1(doc.get_dest(name))
    if isinstance(dest, dict):
        dest = resolve1(dest.get("D"))
    if not isinstance(dest, list) or not dest or not isinstance(dest[0], PDFObjRef):
        return None
    if dest[0].objid not in page_index:
        return None
    page, height = page_index[dest[0].objid]
    top = None
    if len(dest) > 3 and getattr(dest[1], "name", "") == "XYZ" and isinstance(resolve1(dest[3]), (int, float)):
        top = height - float(resolve1(dest[3]))  # PDF y runs up from the bottom
    return page, top


def _chapters_from_outline(blocks: list[TextBlock], outline: list[tuple[str, int, float | None]]) -> list[RawChapter]:
    """Cut the blocks where the outline points; text before the first entry is front matter.

    An entry starts at the first block on its page that carries its title, else at
    the first block at or below its target point, else at the page's first block.
    """
    starts: list[tuple[int, str]] = []
    for title, page, y in outline:
        at = _start_block(blocks, title, page, y, after=starts[-1][0] if starts else 0)
        if at is not None:
            starts.append((at, title))
    if not starts:
        return [RawChapter(FRONT_MATTER_TITLE, [b.text for b in blocks])]
    chapters = []
    if starts[0][0] > 0:
        chapters.append(RawChapter(FRONT_MATTER_TITLE, [b.text for b in blocks[: starts[0][0]]], True))
    bounds = starts + [(len(blocks), "")]
    for (a, title), (b, _next) in zip(bounds, bounds[1:]):
        if b > a:
            chapters.append(RawChapter(title, [blk.text for blk in blocks[a:b]], is_front_matter_title(title)))
    return chapters


def _start_block(blocks: list[TextBlock], title: str, page: int, y: float | None, *, after: int) -> int | None:
    wanted = _WS.sub(" ", title).strip().lower()
    on_page = [i for i in range(after, len(blocks)) if blocks[i].page == page]
    if not on_page:
        later = [i for i in range(after, len(blocks)) if blocks[i].page > page]
        return later[0] if later else None
    for i in on_page:
        if wanted and _WS.sub(" ", blocks[i].text).strip().lower().startswith(wanted):
            return i
    below = [i for i in on_page if y is None or blocks[i].top >= y - 2]
    return (below or on_page)[0]
