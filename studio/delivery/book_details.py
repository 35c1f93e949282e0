"""The book's details as the credits and the files' tags use them, and where each one came from.

Why one place: the title, author, narrator, the book's rights and the recording's copyright
are read from several sources -- the producer's settings, the manuscript (EPUB metadata,
Markdown front matter, DOCX properties), the book's copyright page, the defaults -- and a
producer who sees "Copyright 2019 by Acme Press" in the credits needs to know whether the
EPUB said it or they typed it. The Book Details dialog and ``studio details`` show and
set them through these functions; the export reads them through :func:`book_details` too,
so what is shown is what is spoken and tagged.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass

from studio.core.errors import StudioError
from studio.delivery.credits import default_narrator
from studio.delivery.rights import BookRights, book_own_rights
from studio.project.store import Project

#: where a value the producer typed comes from, as the dialog and the command line say it
SET_BY_YOU = "set by you"

#: the manuscript's format -> where its title and author were read, in a producer's words
_FROM_FORMAT = {"epub": "from the EPUB", "markdown": "from the front matter", "docx": "from the DOCX's properties",
                "html": "from the HTML", "pdf": "from the PDF"}
#: where the book's rights were read (:class:`~studio.delivery.rights.BookRights`'s source), in those words
_RIGHTS_FROM = {"EPUB dc:rights": "from the EPUB (dc:rights)", "front matter": "from the front matter",
                "copyright page": "from the book's copyright page"}

#: the settings each detail is stored under, in the dialog's order
FIELDS = ("title", "author", "narrator", "rights", "producer", "recording_year")
LABELS = {"title": "Title", "author": "Author", "narrator": "Narrator", "rights": "Rights (the book's)",
          "producer": "Recording copyright holder", "recording_year": "Recording year"}


@dataclass(frozen=True)
class Detail:
    """One detail: the ``value`` the export uses and its ``source`` ("from the EPUB", "set by you", ...);
    ``inherited`` / ``inherited_source``: what it would be without the producer's entry."""

    value: str
    source: str
    inherited: str
    inherited_source: str

    @property
    def own(self) -> bool:
        """The producer typed it (stored in the project's settings)."""
        return self.source == SET_BY_YOU


@dataclass(frozen=True)
class BookDetails:
    """The book's details (see :data:`FIELDS`), each with where it came from."""

    title: Detail
    author: Detail
    narrator: Detail
    rights: Detail
    producer: Detail
    recording_year: Detail

    def lines(self) -> list[str]:
        """One line per detail, as ``studio details`` prints them."""
        out = []
        for name in FIELDS:
            d: Detail = getattr(self, name)
            out.append(f"{LABELS[name]}: {d.value or '(none)'}  [{d.source}]")
        return out


def _detail(own: str, inherited: str, inherited_source: str) -> Detail:
    own = own.strip()
    return Detail(own, SET_BY_YOU, inherited, inherited_source) if own else \
        Detail(inherited, inherited_source, inherited, inherited_source)


def _rights_words(rights: BookRights) -> str:
    """The book's rights in a line: the statement the book makes ("" when it says nothing)."""
    return rights.statement if rights.known else ""


def book_details(project: Project) -> BookDetails:
    """Every detail's value and source: the producer's settings first, then the book, then the default."""
    settings, book = project.settings(), project.book()
    where = _FROM_FORMAT.get(str(book.metadata.get("format", "")), "from the manuscript")
    found = book_own_rights(project)
    return BookDetails(
        title=_detail(settings.title, book.title, where),
        author=_detail(settings.author, book.author, where if book.author else "not given"),
        narrator=_detail(settings.narrator, default_narrator(project), "default (the voice)"),
        rights=_detail(settings.rights, _rights_words(found), _RIGHTS_FROM.get(found.source, "the book says nothing")),
        producer=_detail(settings.producer, "", "not given"),
        recording_year=_detail(settings.recording_year, str(_dt.date.today().year), "default (this year)"),
    )


def changes_for(details: BookDetails, values: Mapping[str, str]) -> dict[str, str]:
    """The settings to store for the producer's ``values`` (keys of :data:`FIELDS`): a value equal to
    the inherited one, or empty, stores "" (the book's own value then follows a re-import)."""
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise StudioError(f"unknown book detail(s): {', '.join(sorted(unknown))}")
    out = {}
    for name, value in values.items():
        text = " ".join(str(value).split())
        out[name] = "" if text == getattr(details, name).inherited else text
    return out


def source_for(detail: Detail, text: str) -> str:
    """Where the value would come from if ``text`` were saved (the dialog says it as you type)."""
    text = " ".join(text.split())
    return detail.inherited_source if not text or text == detail.inherited else SET_BY_YOU


def save_book_details(project: Project, **values: str) -> BookDetails:
    """Store the producer's entries in the project's settings (see :func:`changes_for`); the details now."""
    changes = changes_for(book_details(project), values)
    project.update_settings(project.settings().with_changes(**changes))
    return book_details(project)


__all__ = ["FIELDS", "LABELS", "SET_BY_YOU", "BookDetails", "Detail", "book_details", "changes_for",
           "save_book_details", "source_for"]
