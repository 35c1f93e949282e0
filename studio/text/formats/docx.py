"""Word (``.docx``) reader: heading styles start chapters.

Why python-docx plus our own checks: python-docx resolves styles (a custom
"Chapter Title" style based on "Heading 1" is still a heading) and reads the core
properties, and its XML parser does not resolve entities. It does, however, read
the whole package into memory, so the archive is size-checked first.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from studio.core.errors import ManuscriptError
from studio.text.raw import Block, RawBook, Reader
from studio.text.safety import SafeZip, parser_limit_reason
from studio.text.structure import build_chapters

log = logging.getLogger(__name__)

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def read_docx(path: Path, max_bytes: int) -> RawBook:
    """Read a Word document into raw chapters."""
    with SafeZip(path, max_member=max_bytes, max_total=4 * max_bytes, kind="Word document") as z:
        if not z.has("word/document.xml") and not any(n.endswith("/document.xml") for n in z.names()):
            raise ManuscriptError(path, "not a valid Word document (no word/document.xml)")
        if z.has("word/document.xml") and _declares_dtd(z.read("word/document.xml")):
            # Word never writes one; with entities unresolved, text after an entity
            # reference would silently vanish, so refuse rather than import half.
            raise ManuscriptError(path, "refusing this Word document: it declares a DTD (<!DOCTYPE>), "
                                        "which Word never writes (a tampered or hostile file?)")
    import docx  # python-docx; imported late because it is slow to import
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(str(path))
    except PackageNotFoundError:
        raise ManuscriptError(path, "not a valid Word document") from None
    except Exception as exc:  # python-docx fails in many ways on damaged packages
        log.debug("python-docx could not open %s", path, exc_info=True)
        limit = parser_limit_reason(str(exc))
        if limit:
            raise ManuscriptError(path, limit) from None
        raise ManuscriptError(path, f"not a valid Word document, or damaged ({type(exc).__name__})") from None
    props = document.core_properties
    blocks, title_in_text = _blocks(document)
    if not any(b.text.strip() for b in blocks):
        raise ManuscriptError(path, "the Word document contains no text")
    title = (props.title or "").strip() or title_in_text
    chapters, found_title = build_chapters(blocks, fallback_title=title or path.stem)
    return RawBook(
        title=title or found_title or path.stem,
        author=(props.author or "").strip(),
        language=(props.language or "").strip(),
        chapters=chapters,
        metadata={"format": "docx"},
    )


READER = Reader("Word", (".docx",), read_docx)


def _declares_dtd(xml: bytes) -> bool:
    """Whether a ``<!DOCTYPE`` comes before the root element (read from the prolog only)."""
    head = xml[:4096]
    root = head.find(b"<w:")
    return b"<!DOCTYPE" in (head if root < 0 else head[:root]).upper()


def _blocks(document) -> tuple[list[Block], str]:  # noqa: ANN001 - python-docx Document
    """Paragraphs and table cells in body order; the "Title" style names the book."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    blocks: list[Block] = []
    title = ""
    body = document.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(child, document)
            text = para.text
            if not text.strip():
                continue
            style = _style_name(para)
            if style == "title" and not title and not blocks:
                title = " ".join(text.split())
                continue
            blocks.append(Block(text, level=_heading_level(para)))
        elif tag == "tbl":
            seen: set[int] = set()
            for row in Table(child, document).rows:
                for cell in row.cells:
                    if id(cell._tc) in seen:  # merged cells repeat
                        continue
                    seen.add(id(cell._tc))
                    text = "\n".join(p.text for p in cell.paragraphs)
                    if text.strip():
                        blocks.append(Block(text))
    return blocks, title


def _style_name(para) -> str:  # noqa: ANN001
    try:
        return (para.style.name or "").strip().lower() if para.style is not None else ""
    except (KeyError, AttributeError, ValueError):
        return ""


def _heading_level(para) -> int | None:  # noqa: ANN001
    """Heading level from the style (or any style it is based on), or outline level."""
    try:
        style = para.style
    except (KeyError, AttributeError, ValueError):
        style = None
    depth = 0
    while style is not None and depth < 10:
        m = _HEADING_STYLE.match((style.name or "").strip())
        if m:
            return int(m.group(1))
        style = style.base_style
        depth += 1
    lvl = para._p.find(f"{{{_W_NS}}}pPr/{{{_W_NS}}}outlineLvl")
    if lvl is not None:
        try:
            value = int(lvl.get(f"{{{_W_NS}}}val", "9"))
        except ValueError:
            return None
        return value + 1 if value < 9 else None
    return None
