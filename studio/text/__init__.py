"""Text layer: manuscript files in, segmented and language-tagged Books out.

Public API::

    load_manuscript(path, *, max_sentence_chars=500, max_bytes=50_000_000) -> Book
    inspect_book(book, *, words_per_minute=155, long_chapter_minutes=60,
                 voice_languages=None) -> BookReport
    apply_language_override(book, chapter_idx, paragraph_idx, lang) -> Book
    normalize_text / split_paragraphs / split_sentences / is_speakable
    detect_language(text, languages=None) -> (code, confidence); normalize_language_code(code)
"""

from studio.text.importer import SUPPORTED_SUFFIXES, load_manuscript
from studio.text.inspect import BookReport, ChapterReport, SplitSentence, UnvoicedPassage, inspect_book
from studio.text.language import apply_language_override, detect_language, normalize_language_code
from studio.text.segment import is_speakable, normalize_text, split_paragraphs, split_sentences

__all__ = [
    "SUPPORTED_SUFFIXES",
    "BookReport",
    "ChapterReport",
    "SplitSentence",
    "UnvoicedPassage",
    "apply_language_override",
    "detect_language",
    "inspect_book",
    "is_speakable",
    "load_manuscript",
    "normalize_language_code",
    "normalize_text",
    "split_paragraphs",
    "split_sentences",
]
