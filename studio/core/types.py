"""The manuscript as immutable data: Book -> Chapter -> Paragraph -> Sentence.

Frozen dataclasses so they can cross threads and processes (and travel in Qt
signals) without anyone mutating them underneath a render.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class UnvoicedPolicy(str, Enum):
    """What to do with a passage in a language that no installed voice speaks.

    Why a choice: each option loses something. Reading a German quotation with the
    English voice but German phonemes gets the words right in an English accent;
    reading it as English mangles the words but keeps the voice's own sound;
    skipping keeps the audio clean but drops text (so skipped passages are listed).
    The project stores the user's choice; ``str`` values so it serializes as is.
    """

    NATIVE_PHONEMES = "native"  # the book's voice, speaking that language's phonemes
    BOOK_LANGUAGE = "book"  # read as if written in the book's language
    SKIP = "skip"  # left out of the audio, listed for the user


@dataclass(frozen=True)
class Sentence:
    """One unit of synthesis and of caching.

    ``text`` is exactly a slice of the paragraph's normalized text and ``trailing``
    the whitespace that followed it (``" "`` or ``""``), so
    ``"".join(s.text + s.trailing for s in paragraph.sentences) == paragraph.text``:
    nothing is ever dropped. ``was_split`` marks pieces of a sentence that exceeded
    the length cap.
    """

    text: str
    language: str
    was_split: bool = False
    trailing: str = ""


@dataclass(frozen=True)
class Paragraph:
    """A paragraph with its detected language (ISO 639-1, e.g. ``en``, ``fr``).

    ``language_override`` is the user's choice and wins over detection. ``kind`` is what
    it is when not prose ("note", "caption", "alt", "table", "table-summary", "code";
    :mod:`studio.text.content`): the project's settings say whether it is read.
    """

    text: str
    sentences: tuple[Sentence, ...]
    language: str
    confidence: float
    language_override: str | None = None
    kind: str = ""

    @property
    def effective_language(self) -> str:
        return self.language_override or self.language


@dataclass(frozen=True)
class Chapter:
    """A chapter; ``front_matter`` marks title pages, copyright, TOC and the like.

    ``front_reason`` says why, when the importer knows (``"table of contents"``),
    so the producer sees why a chapter is left out by default.
    """

    title: str
    paragraphs: tuple[Paragraph, ...]
    front_matter: bool = False
    front_reason: str = ""

    @property
    def word_count(self) -> int:
        return sum(len(p.text.split()) for p in self.paragraphs)


@dataclass(frozen=True)
class Book:
    """An imported manuscript; ``language`` is the book's main language."""

    title: str
    author: str
    language: str
    chapters: tuple[Chapter, ...]
    source: str = ""
    metadata: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def word_count(self) -> int:
        return sum(c.word_count for c in self.chapters)
