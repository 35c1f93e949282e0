"""EPUB 2 and 3 reader: spine order, chapters and titles from the table of contents.

One pass over the archive: each document is parsed once, and what the book says
about how to speak it -- pronunciations (:mod:`studio.text.formats.epub_lexicon`) and
CSS Speech direction (:mod:`studio.text.formats.epub_speech`) -- comes back with the
text in the :class:`~studio.text.raw.RawBook`.

Why chapters come from the TOC and not from files: publishers split files by size,
not by chapter (one 300 KB file holding twenty stories is common, so are chapters
split over three files). The TOC (EPUB 3 nav, else EPUB 2 NCX) is what the reader
sees as chapters, with the publisher's own titles. So TOC targets - a file, or an
anchor inside one - start chapters; files without a TOC entry continue the
chapter before them, unless they are front matter (cover, title page, copyright,
TOC, dedication...), which becomes its own chapter marked ``front_matter``.

Tables of contents are front matter with a reason the producer is shown: the
EPUB 3 nav document when it is in the spine, a document the EPUB 2 guide or the
EPUB 3 landmarks call ``toc``, and a document that is mostly links (more than
60 % of its text inside ``<a href>``, at least three links; a chapter with a few
links stays a chapter). The guide or landmarks' ``copyright-page`` gives the
copyright page its reason too. The NCX file is never a spine document, so it is
never read as text. Nothing is dropped: front matter is left out by default and
can be included.
"""

from __future__ import annotations

import logging
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from lxml import etree

from studio.core.errors import ManuscriptError, StudioError
from studio.core.lexicon import Lexicon, LexiconEntry
from studio.text.formats.epub_lexicon import book_lexicon, pls_entries, ssml_entries
from studio.text.formats.epub_speech import CSS_MEDIA_TYPE, StyleSheet, log_speech, speech_of_document
from studio.text.formats.pls import PLS_MEDIA_TYPE
from studio.text.content import place_notes
from studio.text.raw import Block, BlockSpeech, RawBook, RawChapter, Reader
from studio.text.safety import SafeZip, parse_markup, parse_xml
from studio.text.structure import (
    FRONT_MATTER_TITLE,
    clean_title,
    is_front_matter_blocks,
    is_front_matter_title,
    title_from_types,
)
from studio.text.formats.xhtml import attr, document_language, extract_blocks, head_info, localname, semantic_types

log = logging.getLogger(__name__)

CONTAINER = "META-INF/container.xml"
ENCRYPTION = "META-INF/encryption.xml"
_DOC_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/x-dtbook+xml", "image/svg+xml"})
_FRONT_NAMES = {
    "cover": "Cover", "titlepage": "Title Page", "title": "Title Page", "halftitle": "Half Title",
    "halftitlepage": "Half Title", "copyright": "Copyright", "copyright-page": "Copyright",
    "toc": "Contents", "nav": "Contents", "contents": "Contents", "dedication": "Dedication",
    "colophon": "Colophon", "imprint": "Imprint", "frontmatter": "", "front": "",
}
TOC_REASON = "table of contents"
COPYRIGHT_REASON = "copyright page"
#: guide (EPUB 2) and landmarks (EPUB 3) types that say why a document is front matter
_LANDMARK_REASONS = {"toc": TOC_REASON, "copyright-page": COPYRIGHT_REASON}
#: a document with at least this many links, this share of its text inside them, is a contents page
LINK_PAGE_LINKS = 3
LINK_PAGE_SHARE = 0.6
_CONTENTS_RE = re.compile(r"^(?:(?:the\s+)?(?:brief\s+|table\s+of\s+)?contents|toc|sommaire|"
                          r"table\s+des\s+mati[eè]res|inhalt(?:sverzeichnis)?)\s*[.:]?$", re.IGNORECASE)


@dataclass
class _Item:
    href: str
    media_type: str
    properties: frozenset[str]


@dataclass
class _Chap:
    title: str
    blocks: list[Block] = field(default_factory=list)
    from_toc: bool = False
    front: bool = False
    doc_title: str = ""
    name_title: str = ""
    reason: str = ""


def read_epub(path: Path, max_bytes: int) -> RawBook:
    """Read an EPUB into raw chapters (zip-bomb and XXE safe)."""
    with SafeZip(path, max_member=max_bytes, max_total=4 * max_bytes, kind="EPUB") as z:
        opf_path = _find_opf(z, path)
        opf = parse_xml(z.read(opf_path), path, f"the package file {opf_path!r}")
        meta = _metadata(opf)
        manifest = _manifest(opf, posixpath.dirname(opf_path))
        spine = _spine(opf, manifest)
        if not spine:
            raise ManuscriptError(path, "the EPUB has no readable documents in its spine (reading order)")
        _refuse_drm(z, path, [doc for doc, _ in spine])
        nav_path = next((i.href for i in manifest.values() if "nav" in i.properties), "")
        toc = _toc(z, opf, manifest, nav_path)
        reasons = _landmark_reasons(z, opf, posixpath.dirname(opf_path), nav_path)
        speaking = _Speaking(path.name, meta.get("language", ""))
        for item in manifest.values():
            if item.media_type in (PLS_MEDIA_TYPE, CSS_MEDIA_TYPE) and z.has(item.href):
                speaking.package_file(item.media_type, item.href, z.read(item.href))
        chapters = _assemble(z, path, spine, toc, nav_path, reasons, speaking, meta.get("language", ""))
    log_speech(path.name, speaking.sheet, speaking.marks)
    return RawBook(
        title=meta.get("title") or path.stem,
        author=meta.get("author", ""),
        language=meta.get("language", ""),
        chapters=chapters,
        metadata={"format": "epub", **{k: v for k, v in meta.items() if k not in ("title", "author", "language")}},
        lexicon=book_lexicon(path.name, speaking.declared, speaking.ssml),
        speech=speaking.marks,
    )


@dataclass
class _Speaking:
    """How the book says to speak it, gathered from each file as the one pass reads it:
    pronunciations (PLS files, SSML in the documents) and CSS Speech direction."""

    name: str
    language: str
    sheet: StyleSheet = field(default_factory=StyleSheet)
    declared: list[LexiconEntry] = field(default_factory=list)
    ssml: list[LexiconEntry] = field(default_factory=list)
    marks: list[BlockSpeech] = field(default_factory=list)

    def package_file(self, media_type: str, href: str, data: bytes) -> None:
        """A lexicon or a style sheet the package lists (a broken lexicon is logged and left out)."""
        if media_type == CSS_MEDIA_TYPE:
            self.sheet.add_css(data.decode("utf-8", errors="replace"))
            return
        try:
            self.declared.extend(pls_entries(data, f"{self.name}:{href}"))
        except StudioError as err:
            log.warning("%s: the lexicon %s could not be read (%s); continuing without it", self.name, href, err)

    def document(self, root: etree._Element, linear: bool) -> None:
        """A spine document: its SSML always, its direction when it is read aloud (linear)."""
        self.ssml.extend(ssml_entries(root, self.language))
        if linear:
            self.marks.extend(speech_of_document(root, self.sheet, self.language))


READER = Reader("EPUB", (".epub",), read_epub)


def read_epub_lexicon(path: str | Path, *, max_bytes: int = 64 << 20) -> Lexicon:
    """Every pronunciation the EPUB at ``path`` declares, as one lexicon (the same pass as an import)."""
    return Lexicon(read_epub(Path(path), max_bytes).lexicon)


#: Cover art larger than this is not read (no real cover comes close).
MAX_COVER_BYTES = 20 * 1024 * 1024
_IMAGE_TYPES = ("image/jpeg", "image/png")


def read_cover(path: Path) -> tuple[bytes, str] | None:
    """The EPUB's cover image as ``(bytes, media type)``, or None when it has none.

    EPUB 3 marks the manifest item ``properties="cover-image"``; EPUB 2 names its
    id in ``<meta name="cover" content="...">``. Only JPEG and PNG are returned
    (what audio containers can carry). Read on export, from the source file, so a
    project does not keep a copy of every cover it was ever given.
    """
    with SafeZip(path, max_member=MAX_COVER_BYTES, max_total=4 * MAX_COVER_BYTES, kind="EPUB") as z:
        opf_path = _find_opf(z, path)
        opf = parse_xml(z.read(opf_path), path, f"the package file {opf_path!r}")
        manifest = _manifest(opf, posixpath.dirname(opf_path))
        item = next((i for i in manifest.values() if "cover-image" in i.properties), None)
        if item is None:
            cover_id = next((el.get("content", "") for el in opf.iter()
                             if localname(el) == "meta" and (el.get("name") or "").lower() == "cover"), "")
            item = manifest.get(cover_id)
        if item is None or item.media_type not in _IMAGE_TYPES or not z.has(item.href):
            return None
        return z.read(item.href), item.media_type


def _find_opf(z: SafeZip, path: Path) -> str:
    if z.has(CONTAINER):
        container = parse_xml(z.read(CONTAINER), path, CONTAINER)
        rootfiles = [el for el in container.iter() if localname(el) == "rootfile" and el.get("full-path")]
        rootfiles.sort(key=lambda el: el.get("media-type") != "application/oebps-package+xml")
        if not rootfiles:
            raise ManuscriptError(path, "not a valid EPUB: container.xml names no package (.opf) file")
        opf_path = _norm(unquote(rootfiles[0].get("full-path", "")))
        if not z.has(opf_path):
            raise ManuscriptError(path, f"not a valid EPUB: the package file {opf_path!r} is missing")
        return opf_path
    candidates = sorted(n for n in z.names() if n.lower().endswith(".opf"))
    if not candidates:
        raise ManuscriptError(path, "not a valid EPUB: META-INF/container.xml and the package (.opf) file are missing")
    log.warning("%s: no META-INF/container.xml, using %s", path, candidates[0])
    return candidates[0]


def _norm(href: str, base: str = "") -> str:
    return posixpath.normpath(posixpath.join(base, href)).lstrip("/") if href else ""


def _text(el: etree._Element) -> str:
    return " ".join("".join(el.itertext()).split())


def _metadata(opf: etree._Element) -> dict[str, str]:
    """Title (the ``main`` one), authors (role ``aut`` or unroled), language, extras."""
    titles: list[tuple[str, str]] = []
    creators: list[tuple[str, str, str]] = []
    refines: dict[tuple[str, str], str] = {}
    out: dict[str, str] = {}
    for el in opf.iter():
        name = localname(el)
        if name == "meta" and el.get("refines") and el.get("property"):
            refines[(el.get("refines", "").lstrip("#"), el.get("property", ""))] = _text(el)
        elif name == "title" and _text(el):
            titles.append((el.get("id", ""), _text(el)))
        elif name == "creator" and _text(el):
            creators.append((el.get("id", ""), _text(el), attr(el, "role") or ""))
        elif name in ("language", "publisher", "date", "identifier") and _text(el):
            out.setdefault(name, _text(el))
        elif name == "rights" and _text(el):  # the edition's licence and the text's status: the credits say them
            out["rights"] = f"{out['rights']} {_text(el)}" if out.get("rights") else _text(el)
    if titles:
        main = [t for i, t in titles if refines.get((i, "title-type")) == "main"]
        out["title"] = main[0] if main else titles[0][1]
    roles = [(n, role or refines.get((i, "role"), "")) for i, n, role in creators]
    authors = [n for n, r in roles if r == "aut"] or [n for n, r in roles if not r] or [n for n, _ in roles[:1]]
    if authors:
        out["author"] = ", ".join(dict.fromkeys(authors))
    return out


def _manifest(opf: etree._Element, base: str) -> dict[str, _Item]:
    items = {}
    for el in opf.iter():
        if localname(el) == "item" and el.get("id") and el.get("href"):
            items[el.get("id", "")] = _Item(
                _norm(unquote(el.get("href", "").split("#")[0]), base),
                (el.get("media-type") or "").strip().lower(),
                frozenset((el.get("properties") or "").split()),
            )
    return items


def _spine(opf: etree._Element, manifest: dict[str, _Item]) -> list[tuple[str, bool]]:
    """Content documents in reading order, with their ``linear`` flag."""
    out = []
    for el in opf.iter():
        if localname(el) == "itemref":
            item = manifest.get(el.get("idref", ""))
            if item is None or (item.media_type and item.media_type not in _DOC_TYPES):
                continue
            out.append((item.href, (el.get("linear") or "yes").strip().lower() != "no"))
    return out


def _refuse_drm(z: SafeZip, path: Path, docs: list[str]) -> None:
    """Encrypted content documents mean DRM; font obfuscation alone is fine."""
    if not z.has(ENCRYPTION):
        return
    root = parse_xml(z.read(ENCRYPTION), path, ENCRYPTION)
    encrypted = {_norm(unquote(el.get("URI", ""))) for el in root.iter() if localname(el) == "CipherReference".lower()}
    if encrypted & set(docs):
        raise ManuscriptError(path, "this EPUB is DRM-protected (its text is encrypted) and cannot be imported")


def _toc(z: SafeZip, opf: etree._Element, manifest: dict[str, _Item], nav_path: str) -> list[tuple[str, str | None, str]]:
    """``(document, fragment or None, label)`` in TOC order: EPUB 3 nav, else NCX."""
    entries: list[tuple[str, str | None, str]] = []
    if nav_path and z.has(nav_path):
        entries = _nav_entries(z.read(nav_path), posixpath.dirname(nav_path))
    if not entries:
        spine_el = next((el for el in opf.iter() if localname(el) == "spine"), None)
        ncx_id = spine_el.get("toc") if spine_el is not None else None
        ncx = manifest.get(ncx_id or "") or next(
            (i for i in manifest.values() if i.media_type == "application/x-dtbncx+xml"), None
        )
        if ncx is not None and z.has(ncx.href):
            entries = _ncx_entries(z.read(ncx.href), posixpath.dirname(ncx.href))
    return entries


def _split_href(href: str, base: str) -> tuple[str, str | None]:
    doc, _, frag = href.strip().partition("#")
    return _norm(unquote(doc), base), (unquote(frag) or None)


def _nav_entries(data: bytes, base: str) -> list[tuple[str, str | None, str]]:
    root = parse_markup(data)
    if root is None:
        return []
    navs = [el for el in root.iter() if localname(el) == "nav"]
    nav = next((n for n in navs if "toc" in semantic_types(n)), navs[0] if navs else None)
    if nav is None:
        return []
    out = []
    for a in nav.iter():
        if localname(a) == "a" and a.get("href") and _text(a):
            doc, frag = _split_href(a.get("href", ""), base)
            out.append((doc, frag, clean_title(_text(a))))
    return out


def _ncx_entries(data: bytes, base: str) -> list[tuple[str, str | None, str]]:
    try:
        root = parse_xml(data, "toc.ncx", "the NCX table of contents")
    except ManuscriptError:
        return []  # a broken NCX only costs us the chapter titles
    out = []
    for point in root.iter():
        if localname(point) != "navPoint".lower():
            continue
        label = next((_text(el) for el in point.iter() if localname(el) == "text" and _text(el)), "")
        content = next((el for el in point if localname(el) == "content"), None)
        if content is not None and content.get("src") and label:
            doc, frag = _split_href(content.get("src", ""), base)
            out.append((doc, frag, clean_title(label)))
    return out


def _landmark_reasons(z: SafeZip, opf: etree._Element, base: str, nav_path: str) -> dict[tuple[str, str | None], str]:
    """``(document, fragment or None) -> reason`` from the EPUB 2 guide and the EPUB 3 landmarks."""
    found = [(el.get("href", ""), (el.get("type") or "").strip().lower(), base)
             for el in opf.iter() if localname(el) == "reference" and el.get("href")]
    root = parse_markup(z.read(nav_path)) if nav_path and z.has(nav_path) else None
    if root is not None:
        for nav in (n for n in root.iter() if localname(n) == "nav" and "landmarks" in semantic_types(n)):
            found += [(a.get("href", ""), kind, posixpath.dirname(nav_path))
                      for a in nav.iter() if localname(a) == "a" and a.get("href") for kind in semantic_types(a)]
    out = {}
    for href, kind, where in reversed(found):  # the first word on a document wins
        if kind in _LANDMARK_REASONS:
            doc, frag = _split_href(href, where)
            out[(doc or nav_path, frag)] = _LANDMARK_REASONS[kind]  # "#toc": the nav document itself
    if nav_path:
        out.setdefault((nav_path, None), TOC_REASON)
    return out


def _mostly_links(root: etree._Element) -> bool:
    """A contents page: several links holding most of the document's text."""
    body = next((el for el in root.iter() if localname(el) == "body"), root)
    links = [a for a in body.iter() if localname(a) == "a" and a.get("href")]
    if len(links) < LINK_PAGE_LINKS:
        return False
    total = _visible_chars(body)
    return total > 0 and sum(_visible_chars(a) for a in links) / total > LINK_PAGE_SHARE


def _visible_chars(el: etree._Element) -> int:
    """Characters of text a reader sees (no whitespace, scripts, styles or comments)."""
    n = 0
    for node in el.iter():
        if isinstance(node.tag, str) and localname(node) not in ("script", "style"):
            n += len("".join((node.text or "").split()))
        if node is not el:
            n += len("".join((node.tail or "").split()))
    return n


def _front_name(doc: str) -> str | None:
    """``"Copyright"`` for ``copyright.xhtml`` & co.; None when the name says nothing."""
    stem = posixpath.splitext(posixpath.basename(doc))[0].lower()
    stem = stem.rstrip("0123456789").rstrip("-_")
    return _FRONT_NAMES.get(stem)


def _assemble(
    z: SafeZip, path: Path, spine: list[tuple[str, bool]], toc: list[tuple[str, str | None, str]], nav_path: str,
    reasons: dict[tuple[str, str | None], str], speaking: _Speaking, language: str,
) -> list[RawChapter]:
    targets: dict[str, dict[str | None, str]] = {}
    for doc, frag, label in toc:
        targets.setdefault(doc, {}).setdefault(frag, label)
    chapters: list[_Chap] = []
    labels: dict[str, str] = {}  # a note's id -> the mark its references show
    readable = 0
    for doc, linear in spine:
        if not linear:
            log.debug("%s: skipping non-linear spine item %s", path, doc)
            aside = parse_markup(z.read(doc)) if z.has(doc) else None
            if aside is not None:
                speaking.document(aside, linear=False)  # its pronunciations still count
            continue
        if not z.has(doc):
            log.warning("%s: spine document %s is missing from the archive", path, doc)
            continue
        root = parse_markup(z.read(doc))
        if root is None:
            log.warning("%s: spine document %s is empty or unparsable", path, doc)
            continue
        readable += 1
        speaking.document(root, linear=True)
        blocks, marks = extract_blocks(root, document_language(root, language))
        labels.update(marks)
        doc_title = head_info(root).get("title", "")
        anchors = targets.get(doc, {})
        name_title = _front_name(doc)
        reason = reasons.get((doc, None)) or (TOC_REASON if _mostly_links(root) else "")
        front_doc = bool(reason) or doc == nav_path or name_title is not None or is_front_matter_blocks(blocks)
        first = len(chapters)
        if None in anchors:
            chapters.append(_Chap(anchors[None], from_toc=True, doc_title=doc_title))
        elif front_doc or not chapters or chapters[-1].front:
            chapters.append(_Chap("", front=front_doc, doc_title=doc_title, name_title=name_title or ""))
        for block in blocks:
            hits = [anchors[i] for i in block.ids if i in anchors]
            if hits:
                why = next((reasons[(doc, i)] for i in block.ids if (doc, i) in reasons), "")
                chapters.append(_Chap(hits[-1], from_toc=True, doc_title=doc_title, front=bool(why), reason=why))
            chapters[-1].blocks.append(block)
        for chap in chapters[first:] if reason else ():  # a contents page: every chapter it starts
            chap.front, chap.reason = True, chap.reason or reason
    if readable == 0:
        raise ManuscriptError(path, "none of the EPUB's documents could be read")
    for chap, blocks in zip(chapters, place_notes([c.blocks for c in chapters], labels, language)):
        chap.blocks = blocks
    return [_finish(c) for c in chapters if c.blocks]


def _finish(chap: _Chap) -> RawChapter:
    """Give untitled parts a title and decide front matter from all the evidence."""
    title = chap.title
    if not title:
        heading = next((b.text for b in chap.blocks if b.level), "")
        first = chap.blocks[0].text if chap.blocks else ""
        title = (
            clean_title(heading)
            or title_from_types(chap.blocks)
            or chap.name_title
            or (clean_title(first) if len(first.strip()) <= 60 else "")
            or (FRONT_MATTER_TITLE if chap.front else clean_title(chap.doc_title) or "Untitled")
        )
    front = chap.front or is_front_matter_title(title) or is_front_matter_blocks(chap.blocks)
    reason = chap.reason or (_reason(title, chap) if front else "")
    return RawChapter(title, [b.text for b in chap.blocks], front, reason, kinds=[b.kind for b in chap.blocks])


def _reason(title: str, chap: _Chap) -> str:
    """Why front matter, from its title or ``epub:type`` when nothing said it before."""
    types = set().union(*(b.types for b in chap.blocks))
    if "toc" in types or _CONTENTS_RE.match(clean_title(title)):
        return TOC_REASON
    if "copyright-page" in types or clean_title(title).lower().startswith("copyright"):
        return COPYRIGHT_REASON
    return ""
