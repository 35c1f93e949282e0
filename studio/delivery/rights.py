"""What the book says about its rights, and the copyright lines the closing credits speak from it.

Why read the book and not assume: the credits used to say "Copyright <year> by <author>"
for every book, so a nineteenth-century novel was credited to its dead author with this
year's date. A credit has to say what is true: a public-domain text says so, a book that
claims a copyright is credited to whoever it names (a publisher, an estate), and a book
that says nothing gets no copyright line for its text at all. The recording's own line
names the producer when one is given.

Where the rights come from, first found wins: the project's settings (the producer's
word), the manuscript's metadata (EPUB ``dc:rights``, Markdown front matter ``rights`` /
``copyright`` / ``license``), then the book's copyright page (a sentence of the front
matter or the first chapter that says "Copyright", "©" or "public domain"; DOCX and plain
text carry it there).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, replace

from studio.project.store import Project

#: sentences read from the start of the book when looking for its copyright page
PAGE_SENTENCES = 60

_PUBLIC = re.compile(r"\bpublic[\s-]+domain\b", re.IGNORECASE)
_NOT_PUBLIC = re.compile(r"\bnot\s+(?:\w+\s+){0,2}(?:in\s+)?the\s+public\s+domain\b", re.IGNORECASE)
_CLAIM = re.compile(r"(?:\bcopyright\b|\u00a9|\(c\))", re.IGNORECASE)
_HOLDER = re.compile(  # a holder's initials ("A. Poet") do not end it, a sentence's full stop does
    r"(?i:\bcopyright\b|\u00a9|\(c\))(?:\s*(?:\u00a9|\(c\)))?\s*(?P<years>(?:1[5-9]|20)\d\d(?:\s*[-\u2013,]\s*(?:1[5-9]|20)\d\d)*)?"
    r"[\s,]*(?i:by\s+)?(?P<holder>(?:\b[A-Z]\.\s|[^.;\n])*)")
_LICENCE = re.compile(r"\blicen[cs]e\b|\bcreative\s+commons\b|\bCC[\s-]+BY\b|\bCC0\b", re.IGNORECASE)
_RESERVED = re.compile(r"\s*,?\s*all rights reserved.*$", re.IGNORECASE)
#: a Creative Commons licence's name as books write it: "CC BY-SA 3.0", "Attribution-ShareAlike 3.0", "CC0"
_CC_SHORT = re.compile(r"\bCC[\s-]+(?P<parts>BY(?:[\s-]+(?:SA|NC|ND))*)(?:[\s-]+(?P<version>\d\.\d))?", re.IGNORECASE)
_CC_LONG = re.compile(r"\bAttribution(?P<parts>(?:-(?:NonCommercial|ShareAlike|NoDerivatives|NoDerivs))*)"
                      r"(?:\s+(?P<version>\d\.\d))?", re.IGNORECASE)
_CC_ZERO = re.compile(r"\bCC0\b|\bCC[\s-]+Zero\b", re.IGNORECASE)
_LICENSOR = re.compile(r"\blicen[cs]e\b[^.]*?\bby\s+(?P<who>[A-Z][^.,;]*)")
_LONG_PARTS = {"noncommercial": "NC", "sharealike": "SA", "noderivatives": "ND", "noderivs": "ND"}


@dataclass(frozen=True)
class BookRights:
    """``public_domain``: the text is free of copyright; ``holder`` / ``years``: whom and when
    the book's own copyright claim names ("" when it names none); ``statement``: the words read,
    ``source``: where ("project settings", "EPUB dc:rights", "front matter", "copyright page", "");
    ``licence``: the statement, when it grants a licence (Creative Commons) and claims no holder."""

    public_domain: bool = False
    holder: str = ""
    years: str = ""
    statement: str = ""
    source: str = ""
    licence: str = ""

    @property
    def known(self) -> bool:
        return self.public_domain or bool(self.holder) or bool(self.licence)


def parse_rights(statement: str, source: str = "") -> BookRights:
    """The rights a statement gives: public domain (with the edition's licence, when it names one),
    or a claim's holder and years, or a licence."""
    text = " ".join(statement.split())
    if not text:
        return BookRights()
    if _PUBLIC.search(text) and not _NOT_PUBLIC.search(text):
        return BookRights(True, statement=text, source=source, licence=text if _LICENCE.search(text) else "")
    found = _HOLDER.search(text)
    if found is None:
        return BookRights(statement=text, source=source, licence=text if _LICENCE.search(text) else "")
    holder = _RESERVED.sub("", found.group("holder") or "").strip(" ,:")
    if holder.lower() in ("", "by", "the author", "notice", "page"):
        holder = ""
    licence = text if not holder and _LICENCE.search(text) else ""
    return BookRights(False, holder, (found.group("years") or "").replace(" ", ""), text, source, licence)


def book_rights(project: Project) -> BookRights:
    """The book's rights from the first place that states them (see the module's docstring)."""
    settings = project.settings()
    if settings.rights.strip():
        return with_edition_licence(parse_rights(settings.rights, "project settings"), project)
    return book_own_rights(project)


def with_edition_licence(found: BookRights, project: Project) -> BookRights:
    """The producer's word on the text, and the licence the book's edition carries: an edition's
    licence still asks its credit when the producer says the text is in the public domain."""
    if found.holder or found.licence:
        return found
    own = book_own_rights(project)
    return replace(found, licence=own.licence) if own.licence else found


def book_own_rights(project: Project) -> BookRights:
    """What the book itself says about its rights (metadata, then its copyright page), whatever the
    producer set: what the Book Details dialog offers when the producer's entry is cleared."""
    meta = project.book().metadata
    if meta.get("rights", "").strip():
        source = "EPUB dc:rights" if meta.get("format") == "epub" else "front matter"
        found = parse_rights(meta["rights"], source)
        if found.licence and not found.public_domain and not found.holder:
            page = _copyright_page(project)  # a licensed edition: the text's status may be on its copyright page
            return replace(page, licence=found.licence) if page.public_domain else found
        if found.known:
            return found
    return _copyright_page(project)


def _copyright_page(project: Project) -> BookRights:
    infos = project.chapters()
    wanted = [c.index for c in infos if c.front_matter] + [c.index for c in infos if not c.front_matter][:1]
    rows = project.sentences(sorted(set(wanted)))[:PAGE_SENTENCES * max(1, len(wanted))]
    for row in rows:
        if _PUBLIC.search(row.text) or _CLAIM.search(row.text):
            found = parse_rights(row.text, "copyright page")
            if found.public_domain or (found.holder and found.years):  # a claim has a year; a story's "copyright" not
                return found
    return BookRights()


def licence_name(statement: str) -> tuple[str, str]:
    """``("CC BY-SA 3.0", "https://creativecommons.org/licenses/by-sa/3.0/")`` for a Creative Commons
    licence the statement names (long or short form); ``("", "")`` for any other words."""
    if _CC_ZERO.search(statement):
        return "CC0 1.0", "https://creativecommons.org/publicdomain/zero/1.0/"
    short = _CC_SHORT.search(statement)
    if short:
        parts = [p.upper() for p in re.split(r"[\s-]+", short.group("parts"))[1:]]
        version = short.group("version") or ""
    else:
        long = _CC_LONG.search(statement)
        if long is None or not _LICENCE.search(statement):
            return "", ""
        parts = [_LONG_PARTS[p.lower()] for p in long.group("parts").split("-") if p]
        version = long.group("version") or ""
    code = "-".join(["BY", *parts])
    url = f"https://creativecommons.org/licenses/{code.lower()}/{version + '/' if version else ''}"
    return f"CC {code}{' ' + version if version else ''}", url


def _edition_line(licence: str) -> tuple[str, bool]:
    """The attribution of a licensed edition, and whether its licence asks adaptations to share alike.

    Why a line of its own: an edition's licence (a Creative Commons one on a public-domain novel)
    is not the work's status; it asks to be credited by name and link (and, ShareAlike, that what
    is made from the edition is shared under the same licence)."""
    name, url = licence_name(licence)
    who = _LICENSOR.search(licence)
    by = f" by {who.group('who').strip()}" if who else ""
    if not name:
        return f"This edition{by} carries this licence: {licence.rstrip('.')}.", False
    link = url.removeprefix("https://").rstrip("/")  # the credits are spoken too: no scheme to read out
    return f"This edition is shared{by} under the Creative Commons licence {name} ({link}).", "-SA" in name


def copyright_lines(rights: BookRights, *, producer: str = "", year: str | None = None) -> list[str]:
    """The closing credits' copyright sentences: the text's status, the edition's licence, the recording's.

    A public-domain text: "This recording is in the public domain." unless a producer
    claims the recording ("Recording copyright <year> by <producer>."). A claimed text:
    "Copyright <years> by <holder>." as the book says it. A licensed edition (Creative Commons),
    public domain or not: the licence attributed as the edition's, with its name and link (a
    ShareAlike one: the recording shared under it too). Nothing said: no line for the text.
    """
    this_year = year or str(_dt.date.today().year)
    recording = f"Recording copyright {this_year} by {producer.strip()}" if producer.strip() else ""
    lines = []
    if rights.public_domain:
        lines.append("The text of this book is in the public domain.")
    elif rights.holder:
        lines.append(f"Copyright {rights.years} by {rights.holder}." if rights.years else f"Copyright {rights.holder}.")
    alike = False
    if rights.licence and not rights.holder:
        edition, alike = _edition_line(rights.licence)
        lines.append(edition)
    if alike:
        lines.append(f"{recording}, shared under the same licence." if recording
                     else "This recording is shared under the same licence.")
    elif recording:
        lines.append(f"{recording}.")
    else:
        lines.append("This recording is in the public domain." if rights.public_domain
                     else f"Recording produced in {this_year}.")
    return lines


def copyright_for(project: Project, *, rights: str = "", producer: str = "", year: str | None = None) -> list[str]:
    """The copyright sentences for ``project``: of ``rights`` as stated (empty: what the project's
    settings or the book say) and the recording's ``producer`` and ``year``; the closing credits
    speak them and the files' copyright tag carries them."""
    found = with_edition_licence(parse_rights(rights, "export"), project) if rights.strip() else book_rights(project)
    return copyright_lines(found, producer=producer, year=year)


__all__ = ["BookRights", "book_own_rights", "book_rights", "copyright_for", "copyright_lines", "licence_name",
           "parse_rights"]
