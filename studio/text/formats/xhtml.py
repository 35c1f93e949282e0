"""(X)HTML -> blocks of running text, shared by the HTML and EPUB readers.

Why a hand-written walk instead of ``itertext()``: a voice needs paragraphs, not a
bag of strings. Block elements (p, div, li, headings, table cells, SVG ``<text>``
lines of fixed-layout books, ...) each become one block; inline markup is joined;
page numbers, note references and hidden elements are skipped because they would
be read aloud mid-sentence. The walk is iterative so that absurdly deep nesting
cannot blow the Python stack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

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
    head script style noscript template iframe object embed audio video canvas math
    img input button select textarea map rt rp title desc metadata
    """.split()
)
#: epub:type / role values whose content must not be read inline
SKIP_TYPES = frozenset({"pagebreak", "noteref", "footnote", "annoref", "page-list", "landmarks"})
SKIP_CLASSES = frozenset({"lnum", "linenum", "line-number", "linenumber", "pagenum", "page-number", "pagebreak", "noteref"})
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_WS = re.compile(r"\s+")
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


class Walker:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.parts: list[str] = []
        self.pending_ids: list[str] = []
        self.ctx: list[_Ctx] = [_Ctx(None, frozenset(), False, False)]

    def add_text(self, text: str | None) -> None:
        if text:
            self.parts.append(text if self.ctx[-1].pre else _WS.sub(" ", text))

    def flush(self) -> None:
        text = "".join(self.parts)
        self.parts = []
        if not text.strip():
            return  # ids stay pending: they point at the next real block
        ctx = self.ctx[-1]
        if ctx.svgtext:
            text = _SOFT_HYPHEN_BREAK.sub(r"\1", text)
        self.blocks.append(Block(text, ctx.level, tuple(self.pending_ids), ctx.types))
        self.pending_ids = []

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
            self.ctx.append(
                _Ctx(
                    _HEADINGS.get(tag, parent.level),
                    parent.types | types if types else parent.types,
                    parent.pre or tag == "pre",
                    parent.svgtext or tag == "text",
                )
            )
            self.opened(el, is_block)
            self.add_text(el.text)
            stack.append((el, True, is_block))
            for child in reversed(el):
                stack.append((child, False, False))
        self.flush()
        return self.blocks


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


def extract_blocks(root: etree._Element) -> list[Block]:
    """All text blocks of a document's body, in reading order."""
    return Walker().run(find_body(root))


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
