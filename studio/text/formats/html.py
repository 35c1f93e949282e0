"""HTML (``.html``/``.htm``/``.xhtml``) reader.

Why lxml's HTML parser: real-world HTML is rarely well-formed, and this parser
recovers from anything while never fetching DTDs or external entities. Chapters
come from headings (see :mod:`studio.text.structure`); metadata from ``<title>``,
``<meta name="author">`` and the ``lang`` attribute.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import etree

from studio.core.errors import ManuscriptError
from studio.text.decode import decode_markup, read_file
from studio.text.raw import RawBook, Reader
from studio.text.safety import ParserLimit, check_parser_limits, html_parser, parser_limit_reason
from studio.text.structure import build_chapters
from studio.text.formats.xhtml import extract_blocks, head_info

_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]{0,200}\?>")
_AUTHOR_KEYS = ("meta:author", "meta:dc.creator", "meta:dcterms.creator", "meta:book:author")
_LANG_KEYS = ("lang", "meta:content-language", "meta:language", "meta:dc.language")


def read_html(path: Path, max_bytes: int) -> RawBook:
    """Read an HTML file into raw chapters (``max_bytes``: checked by the importer already)."""
    data = read_file(path)
    declared = _CHARSET.search(data[:4096])
    text = decode_markup(data, path, declared.group(1).decode("ascii") if declared else None)
    text = _XML_DECL.sub("", text, count=1)
    if not text.strip():
        raise ManuscriptError(path, "the file is empty")
    parser = html_parser()
    try:
        root = etree.fromstring(text, parser)
    except (etree.XMLSyntaxError, etree.ParserError, ValueError) as exc:
        raise ManuscriptError(path, parser_limit_reason(str(exc)) or f"cannot parse the HTML ({exc})") from None
    try:
        check_parser_limits(parser)
    except ParserLimit as exc:
        raise ManuscriptError(path, str(exc)) from None
    if root is None:
        raise ManuscriptError(path, "the HTML document is empty")
    info = head_info(root)
    title = info.get("title", "")
    language = next((info[k] for k in _LANG_KEYS if info.get(k)), "")
    blocks, notes = extract_blocks(root, language)
    chapters, found_title = build_chapters(blocks, fallback_title=title or path.stem, notes=notes, language=language)
    return RawBook(
        title=title or found_title or path.stem,
        author=next((info[k] for k in _AUTHOR_KEYS if info.get(k)), ""),
        language=language,
        chapters=chapters,
        metadata={"format": "html"},
    )


READER = Reader("HTML", (".html", ".htm", ".xhtml"), read_html)
