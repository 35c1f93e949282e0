"""W3C Pronunciation Lexicon Specification (PLS 1.0) files <-> lexicon entries.

Why PLS: it is the format EPUB 3 books carry their pronunciations in and the one
other speech tools read, so a lexicon built here can leave the studio and one made
elsewhere can come in.

What PLS cannot say, and how it is kept: PLS has no case rule and only one
language per file. Entries that need more carry two attributes in our own
namespace (``studio:case="exact"``, ``studio:lang``); other PLS readers ignore
them, and our reader puts them back, so export -> import gives the same entries.

Reading rules: every ``<grapheme>`` of a ``<lexeme>`` becomes an entry; its
pronunciation is the ``<phoneme prefer="true">`` if there is one, else the first
``<phoneme>``/``<alias>`` in document order (PLS's own rule). Only the IPA alphabet
is understood (the Piper voices' front end speaks IPA); lexemes in another
alphabet are skipped and counted, never guessed.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from studio.core.errors import StudioError
from studio.core.language import language_family
from studio.core.lexicon import LexiconEntry
from studio.text.safety import parse_xml
from studio.text.formats.xhtml import localname

log = logging.getLogger(__name__)

PLS_NS = "http://www.w3.org/2005/01/pronunciation-lexicon"
STUDIO_NS = "urn:x-audiobook-studio:lexicon"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
PLS_MEDIA_TYPE = "application/pls+xml"


class LexiconFormatError(StudioError):
    """A file that is not a usable PLS lexicon."""


@dataclass
class PlsResult:
    """What a PLS file gave: entries, and lexemes skipped with the reason (for the user)."""

    entries: list[LexiconEntry] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def _is_ipa(alphabet: str | None) -> bool:
    return (alphabet or "").strip().lower() in ("ipa", "x-ipa", "")


def read_pls(data: bytes, source: str | Path) -> PlsResult:
    """Parse PLS bytes (XXE safe); LexiconFormatError if the root is not ``<lexicon>``."""
    try:
        root = parse_xml(data, source, "the pronunciation lexicon")
    except StudioError as err:
        raise LexiconFormatError(str(err)) from err
    if localname(root) != "lexicon":
        raise LexiconFormatError(f"{source}: not a PLS lexicon (the root element is <{localname(root)}>)")
    alphabet = root.get("alphabet") or "ipa"
    default_lang = language_family(root.get(XML_LANG) or root.get("lang") or "") or None
    result = PlsResult()
    for lexeme in root:
        if localname(lexeme) != "lexeme":
            continue
        graphemes = [" ".join((g.text or "").split()) for g in lexeme if localname(g) == "grapheme"]
        graphemes = [g for g in graphemes if g]
        pron = _pronunciation(lexeme, alphabet)
        if not graphemes:
            result.skipped["a lexeme without a grapheme"] += 1
            continue
        if pron is None:
            result.skipped["no IPA phoneme or alias (other alphabets are not supported)"] += 1
            continue
        kind, value = pron
        lang_attr = lexeme.get(f"{{{STUDIO_NS}}}lang")
        lang = (language_family(lang_attr) or None) if lang_attr is not None else default_lang
        exact = lexeme.get(f"{{{STUDIO_NS}}}case") == "exact"
        for grapheme in graphemes:
            try:
                result.entries.append(LexiconEntry(grapheme, kind, value, case_sensitive=exact, language=lang))  # type: ignore[arg-type]
            except ValueError as err:
                result.skipped[str(err)] += 1
    if result.skipped:
        log.info("%s: skipped %d lexeme(s): %s", source, sum(result.skipped.values()), dict(result.skipped))
    return result


def _pronunciation(lexeme: etree._Element, alphabet: str) -> tuple[str, str] | None:
    prons: list[tuple[bool, str, str]] = []
    for el in lexeme:
        name = localname(el)
        text = " ".join((el.text or "").split())
        if not text:
            continue
        if name == "phoneme" and _is_ipa(el.get("alphabet") or alphabet):
            prons.append((el.get("prefer") == "true", "phoneme", text))
        elif name == "alias":
            prons.append((el.get("prefer") == "true", "alias", text))
    if not prons:
        return None
    preferred = [p for p in prons if p[0]]
    _, kind, value = (preferred or prons)[0]
    return kind, value


def read_pls_file(path: str | Path) -> PlsResult:
    """Read a PLS file from disk (LexiconFormatError when unreadable)."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise LexiconFormatError(f"cannot read {path}: {err}") from err
    return read_pls(data, path)


def write_pls(entries: Iterable[LexiconEntry], language: str | None = None) -> bytes:
    """A PLS 1.0 document (UTF-8) holding ``entries``.

    ``language`` is the file's ``xml:lang`` (default: the most common entry
    language, else ``und``); entries in another language, or in every language,
    say so with ``studio:lang``.
    """
    entries = list(entries)
    if language is None:
        langs = Counter(e.language for e in entries if e.language)
        language = langs.most_common(1)[0][0] if langs else "und"
    file_lang = language_family(language) or language
    root = etree.Element(
        f"{{{PLS_NS}}}lexicon", nsmap={None: PLS_NS, "studio": STUDIO_NS},
        attrib={"version": "1.0", "alphabet": "ipa", XML_LANG: file_lang},
    )
    for entry in entries:
        lexeme = etree.SubElement(root, f"{{{PLS_NS}}}lexeme")
        if (entry.language or "und") != file_lang:
            lexeme.set(f"{{{STUDIO_NS}}}lang", entry.language or "")
        if entry.case_sensitive:
            lexeme.set(f"{{{STUDIO_NS}}}case", "exact")
        etree.SubElement(lexeme, f"{{{PLS_NS}}}grapheme").text = entry.grapheme
        etree.SubElement(lexeme, f"{{{PLS_NS}}}{entry.kind}").text = entry.value
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def write_pls_file(path: str | Path, entries: Iterable[LexiconEntry], language: str | None = None) -> None:
    """Write a PLS file (to a temp name, then renamed: never a half-written lexicon)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(write_pls(entries, language))
    tmp.replace(path)
