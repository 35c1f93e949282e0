"""What the per-format readers hand to the importer, before normalization, and what a reader is.

Why a separate, mutable shape: readers build chapters incrementally (an EPUB
chapter can span several files), while the public types in ``studio.core.types``
are frozen and must hold fully segmented, language-tagged text. Keeping the raw
shape tiny means every format shares one normalization/segmentation/language path.

A format is one module of :mod:`studio.text.formats` with a :class:`Reader`
(its name, its file suffixes and its read function); the importer picks the
reader by suffix from that registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from studio.core.lexicon import LexiconEntry


@dataclass
class Block:
    """One block of running text as found in the source.

    ``level`` is the heading level (1-6) when the source marks it as a heading,
    ``ids`` the anchors that point at it (EPUB tables of contents link to them),
    ``types`` the semantic tags around it (EPUB ``epub:type``: ``titlepage``, ...).
    ``kind`` is what it is when not prose (:mod:`studio.text.content`: a note, a caption...);
    ``refs`` the notes it points at (their ids), ``note`` the id of the note it belongs to.
    """

    text: str
    level: int | None = None
    ids: tuple[str, ...] = ()
    types: frozenset[str] = frozenset()
    kind: str = ""
    refs: tuple[str, ...] = ()
    note: str = ""


@dataclass
class RawChapter:
    """A chapter whose paragraphs are still raw text (may contain line breaks)."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    front_matter: bool = False
    front_reason: str = ""  # why front matter, when the reader knows ("table of contents")
    kinds: list[str] = field(default_factory=list)  # each paragraph's kind (studio.text.content); []: all prose

    def kind(self, index: int) -> str:
        return self.kinds[index] if index < len(self.kinds) else ""


@dataclass(frozen=True)
class BlockSpeech:
    """What one block of text (an imported paragraph) is to be read with (an EPUB's CSS Speech).

    ``text``: the block's text, normalized as the importer does; ``stressed``: indices
    of its words (``text.split()``) to stress."""

    text: str
    rate: float | None = None
    pause_before: float | None = None
    pause_after: float | None = None
    stressed: tuple[int, ...] = ()


@dataclass
class RawBook:
    """Metadata (as found, not yet normalized) plus raw chapters, and what the source says
    about how to speak them: pronunciations (``lexicon``, first entry per word wins) and
    direction per block (``speech``); only an EPUB says either."""

    title: str = ""
    author: str = ""
    language: str = ""
    chapters: list[RawChapter] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    lexicon: tuple[LexiconEntry, ...] = ()
    speech: list[BlockSpeech] = field(default_factory=list)


@dataclass(frozen=True)
class Reader:
    """One manuscript format: ``read(path, max_bytes)`` -> :class:`RawBook`.

    ``suffixes`` are lower-case with the dot (``".epub"``). ``max_bytes`` bounds
    what an archive format may unpack per member (the file's own size is checked
    by the importer before ``read`` is called). A reader raises
    :class:`~studio.core.errors.ManuscriptError` for a file it cannot read.
    """

    name: str
    suffixes: tuple[str, ...]
    read: Callable[[Path, int], RawBook]


def title_from_name(path: Path) -> str:
    """The title a manuscript's file name suggests, when the text names none."""
    return re.sub(r"[_]+", " ", path.stem).strip() or path.name


def text_book(path: Path, chapters: list[RawChapter], found_title: str, meta: dict[str, str],
              metadata: dict[str, str]) -> RawBook:
    """The book of a text-like file: title, author and language from its header fields
    (``meta``), else the title its headings gave (``found_title``), else its file name."""
    return RawBook(
        title=meta.get("title") or found_title or title_from_name(path),
        author=meta.get("author", ""),
        language=meta.get("language", ""),
        chapters=chapters,
        metadata=metadata,
    )
