"""What the project tracks per sentence and per chapter, as frozen rows for every reader."""

from __future__ import annotations

from dataclasses import dataclass

from studio.core.lexicon import Lexicon
from studio.engine.base import SynthesisSettings
from studio.project.cast import Part
from studio.project.rendition import PartRendition
from studio.project.unvoiced import SKIPPED


@dataclass(frozen=True)
class SentenceRow:
    """One spoken unit as the project tracks it.

    ``chapter``/``paragraph``/``index`` are 0-based positions (``paragraph`` None:
    the chapter title). ``language`` is effective (override applied). ``state`` is
    effective too: a ``done`` row whose audio was made for other inputs (edited
    text, new language, other voice or settings, a changed lexicon entry it
    contains) reads ``pending``. ``lexicon`` holds the pronunciation entries that
    occur in the sentence: what the render hands the front end, and what its key
    carries. ``said`` is the language the front end is given (the project's policy
    for unvoiced languages, :mod:`studio.project.unvoiced`; ``skip/...``: left silent).
    """

    id: int
    chapter: int
    paragraph: int | None
    index: int
    order: int
    text: str
    language: str
    was_split: bool
    trailing: str
    state: str
    reason: str | None
    cache_key: str | None
    expected_key: str
    duration: float | None
    checksum: str | None
    synth_count: int
    lexicon: Lexicon = Lexicon()
    said: str = ""
    spoken: str = ""  # what the voice is given (studio.project.spoken); "" when not computed
    synthesis: SynthesisSettings | None = None  # its own (a rate directed, studio.project.direction), else None
    #: its parts, who speaks each and with which voice, when casting is on (studio.project.cast), else ()
    cast: tuple[Part, ...] = ()
    parts: tuple[PartRendition, ...] = ()  # the cast parts' words (studio.project.rendition), in that order
    kind: str = ""  # its paragraph's kind when not prose (a note, a caption...: studio.text.content)

    @property
    def skipped(self) -> bool:
        return self.said.startswith(SKIPPED)

    @property
    def is_title(self) -> bool:
        return self.paragraph is None


@dataclass(frozen=True)
class ChapterInfo:
    """Per-chapter summary for listings and export decisions: the effective chapters
    (``title`` as imported, ``name``/``included`` as the producer decided; the chapter's
    number is :func:`studio.project.numbering.chapter_number` of ``index``)."""

    index: int
    title: str
    front_matter: bool
    sentences: int
    done: int
    failed: int
    duration: float
    name: str = ""
    included: bool = True
    reason: str = ""  # why the import called it front matter, when it knows

    @property
    def complete(self) -> bool:
        return self.done == self.sentences
