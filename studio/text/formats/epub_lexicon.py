"""Pronunciations an EPUB 3 carries: its PLS lexicons and the SSML in its content.

Why apart from the reader's text: the reader keeps every character of the text
(SSML elements and attributes are inline markup, so ``<span ssml:ph="nɔrθ">N.</span>``
still reads "N." in the manuscript). What the publisher said about *how* to speak it
becomes project lexicon entries instead: the EPUB reader
(:mod:`studio.text.formats.epub`) hands each lexicon file and each document it parses
here, in its one pass over the archive.

Sources, in this order (the first entry for a word wins, the author's own PLS
before inline markup):

* every manifest item of media type ``application/pls+xml`` (EPUB 3 declares its
  lexicons in the package);
* SSML in spine documents: ``ssml:ph`` attributes (EPUB 3's SSML attributes, with
  ``ssml:alphabet`` inherited from ancestors), ``<phoneme ph=...>`` and
  ``<sub alias=...>`` elements. The element's text is the grapheme.

SSML marks one occurrence, a lexicon entry applies to all of them, so inline
markup becomes *case-exact* entries ("Mobile" the city, not "mobile"), and markup
on text with no letter or digit is skipped: a ditto mark ``"`` spoken as
"Democratic" in one table cell must not turn every quotation mark of the book into
that word. The same text marked up twice with different pronunciations keeps the
first; skipped and conflicting markup is counted in the log.
"""

from __future__ import annotations

import logging
from collections import Counter

from lxml import etree

from studio.core.language import language_family
from studio.core.lexicon import Lexicon, LexiconEntry, normalize_grapheme
from studio.text.formats.pls import read_pls
from studio.text.formats.xhtml import localname

log = logging.getLogger(__name__)

SSML_NS = "http://www.w3.org/2001/10/synthesis"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _ssml_attr(el: etree._Element, name: str) -> str | None:
    """An SSML attribute (``ssml:name`` as XML namespace, or literally from the HTML parser)."""
    value = el.get(f"{{{SSML_NS}}}{name}")
    return value if value is not None else el.get(f"ssml:{name}")


def pls_entries(data: bytes, where: str) -> list[LexiconEntry]:
    """The entries of one PLS lexicon file of the book (``where`` names it in messages)."""
    result = read_pls(data, where)
    log.info("%s: %d entries from the lexicon", where, len(result.entries))
    return list(result.entries)


def book_lexicon(name: str, declared: list[LexiconEntry], ssml: list[LexiconEntry]) -> tuple[LexiconEntry, ...]:
    """The book's pronunciations: its PLS entries, then its SSML; the first entry for a word wins."""
    log.info("%s: %d SSML pronunciation(s) in the content", name, len(ssml))
    return _first_wins([*declared, *ssml]).entries


def ssml_entries(root: etree._Element, default_lang: str = "") -> list[LexiconEntry]:
    """Lexicon entries from SSML markup in one (X)HTML document, in document order."""
    out: list[LexiconEntry] = []
    # (element, inherited alphabet, inherited language); iterative: deep nesting is hostile input
    stack: list[tuple[etree._Element, str, str]] = [(root, "", default_lang)]
    while stack:
        el, alphabet, lang = stack.pop()
        if not isinstance(el.tag, str):
            continue
        alphabet = _ssml_attr(el, "alphabet") or alphabet
        lang = el.get(_XML_LANG) or el.get("lang") or lang
        grapheme = normalize_grapheme("".join(el.itertext()))
        name = localname(el)
        entry: LexiconEntry | None = None
        ph = _ssml_attr(el, "ph")
        if ph is None and name == "phoneme":
            ph = el.get("ph")
            alphabet = el.get("alphabet") or alphabet
        if ph is not None and grapheme and ph.strip():
            if alphabet.lower() in ("", "ipa", "x-ipa"):
                entry = LexiconEntry(grapheme, "phoneme", ph, True, language_family(lang) or None)
            else:
                log.info("skipping SSML pronunciation of %r in alphabet %r (only IPA)", grapheme, alphabet)
        elif name == "sub" and el.get("alias") and grapheme:
            entry = LexiconEntry(grapheme, "alias", el.get("alias", ""), True, language_family(lang) or None)
        if entry is not None and not any(c.isalnum() for c in entry.grapheme):
            log.info("skipping SSML on %r: no word in it, its meaning depends on where it stands", entry.grapheme)
        elif entry is not None:
            out.append(entry)
        for child in reversed(el):
            stack.append((child, alphabet, lang))
    return out


def _first_wins(entries: list[LexiconEntry]) -> Lexicon:
    kept: dict[tuple[str, str, bool], LexiconEntry] = {}
    conflicts: Counter[str] = Counter()
    for entry in entries:
        have = kept.get(entry.key)
        if have is None:
            kept[entry.key] = entry
        elif (have.kind, have.value) != (entry.kind, entry.value):
            conflicts[entry.grapheme] += 1
    if conflicts:
        log.info("kept the first of several pronunciations for %d word(s): %s", len(conflicts), sorted(conflicts)[:10])
    return Lexicon.of(kept.values())
