"""(X)HTML -> blocks of running text, shared by the HTML and EPUB readers.

Why a hand-written walk instead of ``itertext()``: a voice needs paragraphs, not a
bag of strings. Block elements (p, div, li, headings, table cells, SVG ``<text>``
lines of fixed-layout books, ...) each become one block; inline markup is joined;
page numbers, note references and hidden elements are skipped because they would
be read aloud mid-sentence. The walk is iterative so that absurdly deep nesting
cannot blow the Python stack.

What is not prose is kept as blocks of a kind (:mod:`studio.text.content`) for the
project to say or not: notes (with the references that point at them), captions, an
image's meaningful alt text, tables (row by row and summarised), code. Mathematics is
said in words in the book's language (:mod:`studio.text.mathematics`): inline where it
stands, a display equation as a block of its own (a pause before and after).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from studio.text import content
from studio.text.mathematics.latex import say_math
from studio.text.raw import Block

BLOCK_TAGS = frozenset(
    """
    p div section article header footer main aside nav blockquote li dd dt dl ul ol
    h1 h2 h3 h4 h5 h6 pre td th tr table caption figcaption figure address hr body
    hgroup details summary fieldset legend center form option
    """.split()
)
SKIP_TAGS = frozenset(
    """
    head script style noscript template iframe object embed audio video canvas
    input button select textarea map rt rp title desc metadata
    """.split()
)
#: epub:type / role values whose content must not be read inline
SKIP_TYPES = frozenset({"pagebreak", "annoref", "page-list", "landmarks", "backlink"})
SKIP_CLASSES = frozenset({"lnum", "linenum", "line-number", "linenumber", "pagenum", "page-number", "pagebreak"})
#: a note (its blocks are kept as :data:`studio.text.content.NOTE`), and what holds several
NOTE_TYPES = frozenset({"footnote", "endnote", "rearnote", "note"})
NOTE_LISTS = frozenset({"footnotes", "endnotes", "rearnotes"})
_NOTES = "notes"  # the context of a list of notes: each child with an id is a note
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_WS = re.compile(r"\s+")
_BEFORE_MARK = re.compile(r"\s+([,.;:!?)\]])")
_SOFT_HYPHEN_BREAK = re.compile(r"(\w)-\n(?=[^\W\d_A-Z])")


def localname(el: etree._Element) -> str:
    """Tag without namespace, lower case ("" for comments and the like)."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def attr(el: etree._Element, name: str) -> str | None:
    """Attribute by local name, whatever its namespace or prefix (``epub:type``)."""
    value = el.get(name)
    if value is not None:
        return value
    for key, val in el.attrib.items():
        if key.endswith("}" + name) or key.endswith(":" + name):
            return val
    return None


def semantic_types(el: etree._Element) -> set[str]:
    """``epub:type`` tokens and ARIA ``doc-*`` roles, lower case, prefixes kept."""
    types: set[str] = set()
    for key, val in el.attrib.items():  # only the namespaced epub:type, not <ol type="a">
        if key.endswith("}type") or key.endswith(":type"):
            types.update(val.lower().split())
    for role in (el.get("role") or "").lower().split():
        types.add(role[4:] if role.startswith("doc-") else role)
    return types


@dataclass(frozen=True)
class _Ctx:
    level: int | None
    types: frozenset[str]
    pre: bool
    svgtext: bool
    kind: str = ""
    note: str = ""


class Walker:
    """``language``: the one mathematics is said in (the book's)."""

    def __init__(self, language: str = "") -> None:
        self.language = language
        self.blocks: list[Block] = []
        self.parts: list[str] = []
        self.pending_ids: list[str] = []
        self.ctx: list[_Ctx] = [_Ctx(None, frozenset(), False, False)]
        self.refs: list[str] = []  # the notes the block being read points at
        self.labels: dict[str, str] = {}  # a note's id -> the mark its reference shows ("3")
        self.display = False  # the last block is a display equation
        self.said_math = False  # the block being read holds mathematics said in words

    def add_text(self, text: str | None) -> None:
        if text:
            self.parts.append(text if self.ctx[-1].pre else _WS.sub(" ", text))

    def flush(self) -> None:
        text = "".join(self.parts)
        self.parts = []
        if not text.strip():
            return  # ids stay pending: they point at the next real block
        if self.display and self.blocks and not any(c.isalnum() for c in text):
            self.blocks[-1].text += text.strip()  # the full stop after a display equation
            return
        ctx = self.ctx[-1]
        if ctx.svgtext:
            text = _SOFT_HYPHEN_BREAK.sub(r"\1", text)
        if self.said_math:
            text = _BEFORE_MARK.sub(r"\1", text)  # "subsets of C to the power n ." -> "... n."
        kind = "" if ctx.kind == _NOTES else ctx.kind
        self.blocks.append(Block(text, ctx.level, tuple(self.pending_ids), ctx.types, kind, tuple(self.refs), ctx.note))
        self.pending_ids, self.refs, self.display, self.said_math = [], [], False, False

    def opened(self, el: etree._Element, is_block: bool) -> None:
        """An element that is read starts (its text comes next): a hook for passes that need
        to know where an element's text lies in the blocks (:mod:`studio.text.formats.epub_speech`)."""

    def closed(self, el: etree._Element, is_block: bool) -> None:
        """An element that is read ends (a block's text already flushed, its tail not yet added)."""

    def run(self, root: etree._Element) -> list[Block]:
        stack: list[tuple[etree._Element, bool, bool]] = [(root, False, False)]
        while stack:
            el, closing, is_block = stack.pop()
            if closing:
                if is_block:
                    self.flush()
                self.closed(el, is_block)
                self.ctx.pop()
                self.add_text(el.tail)
                continue
            tag = localname(el)
            ident = el.get("id") or (el.get("name") if tag == "a" else None)
            if tag and not _skipped(el, tag) and self.special(el, tag):
                if ident:
                    self.pending_ids.append(ident)
                self.add_text(el.tail)
                continue
            if not tag or _skipped(el, tag):
                if ident:
                    self.pending_ids.append(ident)
                self.add_text(el.tail)
                continue
            parent = self.ctx[-1]
            is_block = tag in BLOCK_TAGS or (tag == "text" and not parent.svgtext)
            if is_block:
                self.flush()
            if ident:
                self.pending_ids.append(ident)
            if tag == "br":
                self.parts.append("\n")
                self.add_text(el.tail)
                continue
            if tag == "tspan" and self.parts and not self.parts[-1][-1:].isspace():
                self.parts.append("\n")
            types = semantic_types(el)
            kind, note = parent.kind, parent.note
            if types & NOTE_TYPES or (parent.kind == _NOTES and ident):
                kind, note = content.NOTE, ident or parent.note
            elif types & NOTE_LISTS:
                kind = _NOTES
            elif tag in ("figcaption", "caption") and not kind:
                kind = content.CAPTION
            elif tag == "pre" and not kind:
                kind = content.CODE
            self.ctx.append(
                _Ctx(
                    _HEADINGS.get(tag, parent.level),
                    parent.types | types if types else parent.types,
                    parent.pre or tag == "pre",
                    parent.svgtext or tag == "text",
                    kind,
                    note,
                )
            )
            self.opened(el, is_block)
            self.add_text(el.text)
            stack.append((el, True, is_block))
            for child in reversed(el):
                stack.append((child, False, False))
        self.flush()
        return self.blocks


    def special(self, el: etree._Element, tag: str) -> bool:
        """Read an element that is not plain text (mathematics, an image, a note reference,
        a table); False when it is read as any other."""
        if tag == "math":
            said = say_math(el, self.language)
            if said and (el.get("display") or "").lower() == "block" and not self.ctx[-1].pre:
                self.flush()
                self.parts.append(said)
                self.flush()
                self.display = True
            elif said:
                self.parts.append(f" {said} ")
                self.said_math = True
            return True
        if tag == "img":
            alt = " ".join((el.get("alt") or "").split())
            if alt and content.meaningful(alt, self.language):
                self.flush()
                self.emit(Block(alt, kind=self.ctx[-1].kind or content.ALT, note=self.ctx[-1].note))
            return True
        if tag == "a" and ("noteref" in semantic_types(el) or "noteref" in (el.get("class") or "").lower().split()):
            target = (el.get("href") or "").partition("#")[2]
            if target:
                self.refs.append(target)
                self.labels.setdefault(target, " ".join("".join(el.itertext()).split()).strip("[]()"))
            return True
        if tag == "table":
            return self.table(el)
        return False

    def table(self, el: etree._Element) -> bool:
        """A table of two rows and columns or more: its caption, then its rows and its summary
        (:func:`studio.text.content.table_blocks`); a one-row or one-column table is laid-out text, read as such."""
        rows: list[list[str]] = []
        heads = 0
        caption = ""
        for node in el.iter():
            name = localname(node)
            if name == "caption":
                caption = " ".join(b.text for b in self.inner(node))
            elif name == "tr" and _table_of(node) is el:
                cells = [c for c in node if localname(c) in ("td", "th")]
                if heads == len(rows) and cells and (all(localname(c) == "th" for c in cells)
                                                    or localname(node.getparent()) == "thead"):
                    heads += 1
                rows.append([" ".join(b.text.strip() for b in self.inner(c)) for c in cells])
        if max((len(r) for r in rows), default=0) < 2 or len(rows) < 2:
            return False  # one row or one column: text laid out in a table, read as text
        self.flush()
        made = ([Block(caption.strip(), kind=content.CAPTION)] if caption.strip() else []) + \
            content.table_blocks(rows, heads, self.language)
        made[0].refs, self.refs = tuple(self.refs), []
        for block in made:
            block.note = self.ctx[-1].note
            self.emit(block)
        return True

    def emit(self, block: Block) -> None:
        """A block made whole, not from the text read (an image's alt text, a table's rows)."""
        self.blocks.append(block)

    def inner(self, el: etree._Element) -> list[Block]:
        """The blocks of one element read on its own (a table's cell), its note references kept."""
        walker = Walker(self.language)
        blocks = walker.run(el)
        self.refs.extend(r for b in blocks for r in b.refs)
        self.labels.update(walker.labels)
        return blocks


def _table_of(row: etree._Element) -> etree._Element | None:
    node = row.getparent()
    while node is not None and localname(node) != "table":
        node = node.getparent()
    return node


def _skipped(el: etree._Element, tag: str) -> bool:
    if tag in SKIP_TAGS:
        return True
    if el.get("hidden") is not None or el.get("aria-hidden") == "true":
        return True
    style = (el.get("style") or "").replace(" ", "").lower()
    if "display:none" in style:
        return True
    if semantic_types(el) & SKIP_TYPES:
        return True
    classes = (el.get("class") or "").lower().split()
    return any(c in SKIP_CLASSES for c in classes)


def find_body(root: etree._Element) -> etree._Element:
    for el in root.iter():
        if localname(el) == "body":
            return el
    return root


def extract_blocks(root: etree._Element, language: str = "") -> tuple[list[Block], dict[str, str]]:
    """All text blocks of a document's body, in reading order, and the marks its note
    references show (a note's id -> "3"); ``language``: the one mathematics is said in."""
    walker = Walker(language)
    return walker.run(find_body(root)), walker.labels


def document_language(root: etree._Element, default: str) -> str:
    """The language a document declares (``xml:lang``/``lang`` on its root), else ``default``."""
    return (attr(root, "lang") or "").strip() or default


def head_info(root: etree._Element) -> dict[str, str]:
    """``title``, ``lang`` and ``<meta name=...>`` values of a document's head."""
    info: dict[str, str] = {}
    lang = attr(root, "lang")
    if lang:
        info["lang"] = lang.strip()
    for el in root.iter():
        name = localname(el)
        if name == "body":
            break
        if name == "title" and "title" not in info:
            title = _WS.sub(" ", "".join(el.itertext())).strip()
            if title:
                info["title"] = title
        elif name == "meta":
            key = (el.get("name") or el.get("http-equiv") or el.get("property") or "").strip().lower()
            content = (el.get("content") or "").strip()
            if key and content:
                info.setdefault("meta:" + key, content)
            if el.get("charset"):
                info.setdefault("charset", el.get("charset", "").strip())
    return info
