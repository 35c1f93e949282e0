"""``read_manuscript``: any supported file -> a segmented, language-tagged Book, with what
its source says about speaking it (an EPUB's pronunciations and CSS Speech direction).

Why one funnel: every format reader (one module per format in
:mod:`studio.text.formats`, chosen by the file's suffix) only produces raw chapters; normalization,
sentence segmentation, language detection and the final sanity checks happen
here, identically for all formats. And every failure - missing file, binary
garbage, broken archive, or a bug in a reader on some odd file - leaves as a
:class:`ManuscriptError` naming the file, never as a traceback.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from studio.core.errors import Cancelled, ManuscriptError
from studio.core.language import language_family
from studio.core.lexicon import Lexicon
from studio.core.types import Book, Chapter, Paragraph, Sentence
from studio.text.formats import BY_SUFFIX
from studio.text.language import assign_languages
from studio.text.raw import BlockSpeech, RawBook, RawChapter
from studio.text.safety import ParserLimit
from studio.text.segment import DEFAULT_MAX_SENTENCE_CHARS, is_speakable, normalize_text, split_paragraphs, split_spans

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 50_000_000
#: what the file dialog offers: every registered format's suffixes (:mod:`studio.text.formats`)
SUPPORTED_SUFFIXES = tuple(BY_SUFFIX)
#: ``progress(stage, done, total)``: called between steps of an import; raising
#: :class:`~studio.core.errors.Cancelled` from it stops the import
ImportProgress = Callable[[str, int, int], None]
_UNSUPPORTED = {
    ".doc": "old Word .doc files are not supported; save the document as .docx",
    ".odt": "OpenDocument .odt files are not supported yet; save the document as .docx",
    ".rtf": "RTF files are not supported; save the document as .docx or .txt",
    ".mobi": "Kindle .mobi files are not supported; convert the book to EPUB",
    ".azw": "Kindle .azw files are not supported; convert the book to EPUB",
    ".azw3": "Kindle .azw3 files are not supported; convert the book to EPUB",
}


@dataclass(frozen=True)
class Manuscript:
    """An imported manuscript: its book, and how its source says to speak it -- pronunciations
    (``lexicon``) and direction per paragraph (``speech``); only an EPUB says either."""

    book: Book
    lexicon: Lexicon = Lexicon()
    speech: tuple[BlockSpeech, ...] = ()


def load_manuscript(
    path: str | Path, *, max_sentence_chars: int = DEFAULT_MAX_SENTENCE_CHARS, max_bytes: int = DEFAULT_MAX_BYTES,
    progress: ImportProgress | None = None,
) -> Book:
    """The :class:`Book` of :func:`read_manuscript` (for readers of the text alone)."""
    return read_manuscript(path, max_sentence_chars=max_sentence_chars, max_bytes=max_bytes, progress=progress).book


def read_manuscript(
    path: str | Path, *, max_sentence_chars: int = DEFAULT_MAX_SENTENCE_CHARS, max_bytes: int = DEFAULT_MAX_BYTES,
    progress: ImportProgress | None = None,
) -> Manuscript:
    """Import a manuscript (.txt, .md, .html/.htm, .epub, .docx, .pdf) as a :class:`Manuscript`.

    Raises :class:`ManuscriptError` (with the file and a one-line reason) for
    anything that cannot be imported. ``max_sentence_chars`` caps sentence length
    (longer ones are split, ``was_split=True``); ``max_bytes`` caps the file size
    (and, for EPUB/DOCX, any single archive member; the whole archive may unpack
    to at most 4x that). ``progress`` hears each step (reading, languages, every
    chapter's sentences), so a long import can show where it is and be cancelled.
    """
    path = Path(path)
    step = progress or (lambda _stage, _done, _total: None)
    if max_sentence_chars < 1:
        raise ValueError("max_sentence_chars must be at least 1")
    started = time.perf_counter()
    suffix = path.suffix.lower()
    _check_file(path, suffix, max_bytes)
    try:
        step("Reading the manuscript", 0, 1)
        raw = BY_SUFFIX[suffix].read(path, max_bytes)
        book = _build(path, raw, max_sentence_chars, step)
    except (ManuscriptError, Cancelled):
        raise
    except MemoryError:
        raise ManuscriptError(path, "the manuscript is too large to import (out of memory)") from None
    except RecursionError:
        raise ManuscriptError(path, "the document is nested too deeply to import") from None
    except ParserLimit as exc:
        raise ManuscriptError(path, str(exc)) from None
    except Exception as exc:  # a reader bug on an odd file must still read as a file problem
        log.exception("unexpected error importing %s", path)
        raise ManuscriptError(path, f"could not import this file ({type(exc).__name__}: {exc})") from exc
    log.info(
        "imported %s: %d chapters, %d words, language %s (%.2fs)",
        path, len(book.chapters), book.word_count, book.language, time.perf_counter() - started,
    )
    return Manuscript(book, Lexicon(raw.lexicon), tuple(raw.speech))


def _check_file(path: Path, suffix: str, max_bytes: int) -> None:
    if suffix in _UNSUPPORTED:
        raise ManuscriptError(path, _UNSUPPORTED[suffix])
    if suffix not in SUPPORTED_SUFFIXES:
        kinds = ", ".join(SUPPORTED_SUFFIXES)
        raise ManuscriptError(path, f"unsupported file type {suffix or '(no extension)'!r}; supported: {kinds}")
    try:
        if not path.exists():
            raise ManuscriptError(path, "file not found")
        if path.is_dir():
            raise ManuscriptError(path, "this is a folder, not a manuscript file")
        size = path.stat().st_size
    except OSError as exc:
        raise ManuscriptError(path, f"cannot access the file ({exc.strerror or exc})") from None
    if size == 0:
        raise ManuscriptError(path, "the file is empty")
    if size > max_bytes:
        raise ManuscriptError(path, f"the file is too large ({size / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.1f} MB)")


def _build(path: Path, raw: RawBook, max_sentence_chars: int, step: ImportProgress) -> Book:
    """Normalize, segment and tag languages; refuse books with nothing to say."""
    chapters: list[tuple[RawChapter, list[str]]] = []
    kinds: list[list[str]] = []  # each paragraph's kind (studio.text.content), a block's for all its paragraphs
    for chapter in raw.chapters:
        pairs = [(p, chapter.kind(i)) for i, block in enumerate(chapter.paragraphs) for p in split_paragraphs(block)]
        if pairs:
            chapters.append((chapter, [p for p, _ in pairs]))
            kinds.append([k for _, k in pairs])
    if not any(is_speakable(t) for _, texts in chapters for t in texts):
        raise ManuscriptError(path, "no speakable text (the file has no letters or digits to read)")
    book_language, languages = assign_languages([texts for _, texts in chapters], raw.language, progress=step)
    built = []
    for n, ((chapter, texts), langs, chapter_kinds) in enumerate(zip(chapters, languages, kinds)):
        step("Splitting sentences", n, len(chapters))
        paragraphs = []
        for text, (lang, confidence), kind in zip(texts, langs, chapter_kinds):
            sentences = tuple(
                Sentence(text=s.text, language=lang, was_split=s.was_split, trailing=s.trailing)
                for s in split_spans(text, max_chars=max_sentence_chars)
            )
            paragraphs.append(Paragraph(text=text, sentences=sentences, language=lang, confidence=confidence,
                                        kind=kind))
        built.append(Chapter(title=normalize_text(chapter.title) or "Untitled", paragraphs=tuple(paragraphs),
                             front_matter=chapter.front_matter,
                             front_reason=chapter.front_reason if chapter.front_matter else ""))
    metadata = {k: normalize_text(v) for k, v in raw.metadata.items() if v}
    if raw.language:
        metadata["declared_language"] = raw.language
    return Book(
        title=normalize_text(raw.title) or path.stem,
        author=normalize_text(raw.author),
        language=book_language or language_family(raw.language) or "en",
        chapters=tuple(built),
        source=str(path),
        metadata=metadata,
    )
