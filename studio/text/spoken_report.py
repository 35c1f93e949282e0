"""Every sentence of a book with the words the voice will be given (``studio inspect --spoken``).

Why a listing: the normaliser decides the reading of every number, date and
abbreviation; a producer checks those decisions before hours of rendering, reading
only the sentences where the spoken form differs from the print.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

from studio.core.lexicon import Lexicon
from studio.core.types import Book
from studio.text.normalize import spoken_form


@dataclass(frozen=True)
class SpokenSentence:
    """One sentence: ``chapter`` 1-based, ``index`` its 1-based place in the chapter
    (titles first), ``paragraph`` 1-based or None for a title."""

    chapter: int
    index: int
    paragraph: int | None
    text: str
    spoken: str
    language: str
    speaker: str = ""  # the characters speaking in it, "" the narrator (a project with casting on)
    voice: str = ""  # the voice (and performance) of each of its parts
    phonemes: str = ""  # what the voice's front end is given (filled by the caller that has the voice)
    speaker_sure: bool | None = None  # its quoted lines' speakers rest on evidence right >= 97 % (None: no quote)
    speaker_evidence: str = ""  # what they rest on: tag, continued, turn, vocative, guess, chosen, none

    @property
    def changed(self) -> bool:
        return self.spoken != self.text

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def book_sentences(book: Book, lexicon: Lexicon | None = None) -> list[SpokenSentence]:
    """The book's sentences in reading order with their spoken forms (lexicon entries kept as printed)."""
    out: list[SpokenSentence] = []
    for c_idx, chapter in enumerate(book.chapters):
        n = 0
        heading = chapter.paragraphs and _norm(chapter.paragraphs[0].text) == _norm(chapter.title)
        if chapter.title and not heading:  # a first paragraph repeating the heading is spoken as the title
            n += 1
            language = chapter.paragraphs[0].effective_language if chapter.paragraphs else book.language
            out.append(SpokenSentence(c_idx + 1, n, None, chapter.title,
                                      spoken_form(chapter.title, language, lexicon), language))
        for p_idx, para in enumerate(chapter.paragraphs):
            for sentence in para.sentences:
                n += 1
                language = para.language_override or sentence.language
                out.append(SpokenSentence(c_idx + 1, n, p_idx + 1, sentence.text,
                                          spoken_form(sentence.text, language, lexicon), language))
    return out


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold().rstrip(".:")


def changed_only(sentences: Iterable[SpokenSentence]) -> list[SpokenSentence]:
    return [s for s in sentences if s.changed]
