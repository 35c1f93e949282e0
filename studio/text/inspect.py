"""A pre-flight report on a Book: what will take long, what was cut, what has no voice.

Why before rendering: a render can take hours. Problems a producer can fix in
seconds - a 3-hour "chapter" that is really a missing heading, a French passage
with no French voice installed, sentences the cap had to cut - should be visible
before the GPU starts, not discovered in the finished audio.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from studio.core.types import Book, Chapter, UnvoicedPolicy

PREVIEW_CHARS = 80


@dataclass(frozen=True)
class SplitSentence:
    """A sentence the length cap cut into ``pieces`` consecutive Sentence objects."""

    chapter_index: int
    paragraph_index: int
    sentence_index: int  # index of its first piece in ``paragraph.sentences``
    pieces: int
    preview: str


@dataclass(frozen=True)
class UnvoicedPassage:
    """A paragraph whose language no available voice speaks."""

    chapter_index: int
    paragraph_index: int
    language: str
    preview: str


@dataclass(frozen=True)
class ChapterReport:
    index: int
    title: str
    front_matter: bool
    word_count: int
    duration_seconds: float
    languages: tuple[str, ...]  # most words first
    too_long: bool
    split_sentences: tuple[SplitSentence, ...]
    unvoiced: tuple[UnvoicedPassage, ...]

    @property
    def split_sentence_count(self) -> int:
        return len(self.split_sentences)


@dataclass(frozen=True)
class BookReport:
    title: str
    author: str
    language: str
    words_per_minute: float
    chapters: tuple[ChapterReport, ...]

    @property
    def word_count(self) -> int:
        return sum(c.word_count for c in self.chapters)

    @property
    def duration_seconds(self) -> float:
        return sum(c.duration_seconds for c in self.chapters)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted({lang for c in self.chapters for lang in c.languages}))

    @property
    def long_chapters(self) -> tuple[ChapterReport, ...]:
        return tuple(c for c in self.chapters if c.too_long)

    @property
    def split_sentence_count(self) -> int:
        return sum(c.split_sentence_count for c in self.chapters)

    @property
    def unvoiced(self) -> tuple[UnvoicedPassage, ...]:
        return tuple(p for c in self.chapters for p in c.unvoiced)

    @property
    def missing_voice_languages(self) -> tuple[str, ...]:
        return tuple(sorted({p.language for p in self.unvoiced}))

    def warnings(self) -> list[str]:
        """One human-readable line per problem, for the CLI and the GUI."""
        lines = []
        for c in self.long_chapters:
            lines.append(f"Chapter {c.index + 1} '{c.title}' runs about {c.duration_seconds / 60:.0f} minutes")
        if self.split_sentence_count:
            lines.append(f"{self.split_sentence_count} over-long sentence(s) were split at the length cap")
        for lang in self.missing_voice_languages:
            count = sum(1 for p in self.unvoiced if p.language == lang)
            lines.append(f"{count} passage(s) in '{lang}' have no matching voice")
        return lines


def _preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1].rstrip() + "\u2026"


def language_prefix(code: str) -> str:
    """``en_US``/``en-GB``/``EN`` -> ``en``: voices and paragraphs compare on this."""
    return code.replace("-", "_").split("_")[0].strip().lower()


def _split_groups(chapter_index: int, chapter: Chapter) -> Iterable[SplitSentence]:
    """Consecutive ``was_split`` pieces of a paragraph form one original sentence.

    A piece ends the group when it closes with sentence punctuation (the cap cuts
    at clause marks and spaces, so only the last piece normally does).
    """
    for p_idx, para in enumerate(chapter.paragraphs):
        start = None
        for s_idx, sentence in enumerate(para.sentences):
            if sentence.was_split:
                if start is None:
                    start = s_idx
                if sentence.text.rstrip("\"'\u201d\u2019\u00bb)]").endswith((".", "!", "?", "\u2026")):
                    yield _group(chapter_index, p_idx, para.sentences, start, s_idx + 1)
                    start = None
            elif start is not None:
                yield _group(chapter_index, p_idx, para.sentences, start, s_idx)
                start = None
        if start is not None:
            yield _group(chapter_index, p_idx, para.sentences, start, len(para.sentences))


def _group(c_idx: int, p_idx: int, sentences, start: int, end: int) -> SplitSentence:  # noqa: ANN001
    text = "".join(s.text + s.trailing for s in sentences[start:end]).strip()
    return SplitSentence(c_idx, p_idx, start, end - start, _preview(text))


def inspect_book(
    book: Book,
    *,
    words_per_minute: float = 155,
    long_chapter_minutes: float = 60,
    voice_languages: set[str] | None = None,
    durations: Sequence[float] | None = None,
) -> BookReport:
    """Per-chapter words, estimated spoken time, languages and problem flags.

    ``voice_languages`` are the languages of the voices available (``en_US``,
    ``fr``...); when given, paragraphs in any other language are reported.
    ``durations`` (one per chapter) are better estimates than a flat
    ``words_per_minute`` (the project layer's, from the voice's measured rate and
    the pauses: :mod:`studio.project.duration`); the long-chapter flag follows them.
    """
    if words_per_minute <= 0:
        raise ValueError("words_per_minute must be positive")
    voices = {language_prefix(v) for v in voice_languages} if voice_languages is not None else None
    reports = []
    for c_idx, chapter in enumerate(book.chapters):
        words = chapter.word_count
        duration = words / words_per_minute * 60.0 if durations is None else float(durations[c_idx])
        counts: Counter[str] = Counter()
        unvoiced = []
        for p_idx, para in enumerate(chapter.paragraphs):
            lang = para.effective_language
            counts[lang] += len(para.text.split())
            if voices is not None and language_prefix(lang) not in voices:
                unvoiced.append(UnvoicedPassage(c_idx, p_idx, lang, _preview(para.text)))
        reports.append(
            ChapterReport(
                index=c_idx,
                title=chapter.title,
                front_matter=chapter.front_matter,
                word_count=words,
                duration_seconds=duration,
                languages=tuple(lang for lang, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
                too_long=duration > long_chapter_minutes * 60.0,
                split_sentences=tuple(_split_groups(c_idx, chapter)),
                unvoiced=tuple(unvoiced),
            )
        )
    return BookReport(book.title, book.author, book.language, float(words_per_minute), tuple(reports))


def speaking_languages(
    language: str, book_language: str, voice_languages: set[str], policy: UnvoicedPolicy
) -> tuple[str, str] | None:
    """``(voice language, phoneme language)`` for a passage, or ``None`` to skip it.

    A language with a voice is spoken by that voice. Otherwise ``policy`` decides:
    the book's voice with the passage's own phonemes, the book's voice reading it as
    the book's language, or nothing (the caller lists what was skipped).
    """
    voices = {language_prefix(v) for v in voice_languages}
    lang, book = language_prefix(language), language_prefix(book_language)
    if lang in voices:
        return lang, lang
    if policy is UnvoicedPolicy.SKIP:
        return None
    return (book, lang) if policy is UnvoicedPolicy.NATIVE_PHONEMES else (book, book)
