"""Text layer: manuscript files in, segmented and language-tagged Books out.

Public API::

    load_manuscript(path, *, max_sentence_chars=500, max_bytes=50_000_000) -> Book
    inspect_book(book, *, words_per_minute=155, long_chapter_minutes=60,
                 voice_languages=None) -> BookReport
    apply_language_override(book, chapter_idx, paragraph_idx, lang) -> Book
    normalize_text / split_paragraphs / split_sentences / is_speakable
    detect_language(text) -> (code, confidence)

The names are resolved on first use (PEP 562), not at import: the sentence splitter
(:mod:`studio.text.segment`) is needed by the engine layer (calibration, streaming)
on machines that have no document importers (lxml, python-docx, ebooklib,
langdetect), e.g. a GPU box that only synthesizes; importing ``studio.text.segment``
must not drag those in.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> the submodule that defines it
_EXPORTS = {
    "SUPPORTED_SUFFIXES": "importer",
    "load_manuscript": "importer",
    "BookReport": "inspect",
    "ChapterReport": "inspect",
    "SplitSentence": "inspect",
    "UnvoicedPassage": "inspect",
    "inspect_book": "inspect",
    "apply_language_override": "language",
    "detect_language": "language",
    "is_speakable": "segment",
    "normalize_text": "segment",
    "split_paragraphs": "segment",
    "split_sentences": "segment",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and readers
    from studio.text.importer import SUPPORTED_SUFFIXES, load_manuscript
    from studio.text.inspect import BookReport, ChapterReport, SplitSentence, UnvoicedPassage, inspect_book
    from studio.text.language import apply_language_override, detect_language
    from studio.text.segment import is_speakable, normalize_text, split_paragraphs, split_sentences


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'studio.text' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"studio.text.{module}"), name)
    globals()[name] = value
    return value


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
    "normalize_text",
    "split_paragraphs",
    "split_sentences",
]
