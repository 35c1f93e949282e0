"""Import-level properties (hypothesis): generated manuscripts written as real
.txt/.md/.html/.epub/.docx files and imported.

``test_text_segment.py`` proves segmentation loses nothing inside a paragraph and
``test_text_bad_input.py`` that arbitrary bytes end in a Book or a ManuscriptError;
these add the whole-file view: every word written into a manuscript comes back out of
the importer (in a title or a paragraph) whatever the scripts, punctuation and line
structure around it, and Markdown/HTML soup never escapes as another exception.
"""

from __future__ import annotations

import html
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studio.core.errors import ManuscriptError
from studio.core.types import Book
from studio.text.importer import load_manuscript

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hostile"))
from make_corpus import docx, epub, wpara  # noqa: E402 - minimal, dependency-free containers

CATCH_ALL = "could not import this file"

#: letters that are alphanumeric and NFC-stable, from several scripts (no combining marks)
LETTERS = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\u00e9\u00e0\u00fc\u00df\u00e7\u00f1\u00f8"
    "\u0430\u0431\u0432\u0433\u0434\u0435\u0436\u0437\u0438\u043a\u041c\u041f"  # Cyrillic
    "\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6\u03b7\u03b8\u03a9"  # Greek
    "\u4f60\u597d\u4e16\u754c\u4e66"  # CJK
    "\u0645\u0631\u062d\u0628\u0627"  # Arabic
    "\u05e9\u05dc\u05d5\u05dd"  # Hebrew
)
DIGITS = "0123456789"
WORD = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from(LETTERS),
    st.text(alphabet=LETTERS + DIGITS, max_size=11),
)
NUMBER = st.integers(min_value=0, max_value=10**9).map(str)
#: what may stand between two words: punctuation, line breaks, paragraph breaks
SEPARATOR = st.sampled_from([" ", " ", " ", ", ", ". ", "! ", "? ", "; ", ": ", " \u2014 ", "\u2026 ", " (", ") ",
                             '" ', "\n", "\n\n", "\t", ".\n\n", "\u00a0"])


@st.composite
def manuscripts(draw: st.DrawFn, *, numbers: bool = True) -> str:
    """Words joined by separators; starts with a word (so no Markdown syntax can form:
    lines begin with a letter or a digit inside running text only)."""
    words = draw(st.lists(st.one_of(WORD, NUMBER) if numbers else WORD, min_size=1, max_size=60))
    words[0] = draw(WORD)
    out = [words[0]]
    for word in words[1:]:
        sep = draw(SEPARATOR)
        if sep.endswith("\n") and not word[0].isalpha():
            word = draw(WORD) + word  # a line starting "12. " would be a Markdown list marker
        out += [sep, word]
    return "".join(out)


def words(text: str) -> Counter[str]:
    """Maximal runs of letters and digits."""
    return Counter("".join(ch if ch.isalnum() else " " for ch in text).split())


def book_words(book: Book) -> Counter[str]:
    parts = [book.title, book.author] + [c.title for c in book.chapters]
    parts += [p.text for c in book.chapters for p in c.paragraphs]
    return words("\n".join(parts))


def import_text(name: str, data: bytes | str) -> Book:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return load_manuscript(path)


def import_built(name: str, build) -> Book:  # noqa: ANN001 - build(path) writes the file
    with tempfile.TemporaryDirectory() as tmp:
        return load_manuscript(build(Path(tmp) / name))


def assert_nothing_dropped(source: str, book: Book) -> None:
    missing = words(source) - book_words(book)
    assert not missing, f"words lost on import: {dict(missing)}"
    for chapter in book.chapters:
        for para in chapter.paragraphs:
            assert "".join(s.text + s.trailing for s in para.sentences) == para.text


def paragraphs_of(text: str) -> list[str]:
    return [p for p in text.split("\n\n") if p.strip()]


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(text=manuscripts(), suffix=st.sampled_from([".txt", ".md"]))
def test_plain_and_markdown_keep_every_word(text: str, suffix: str) -> None:
    # always imports: there is always a word to say
    assert_nothing_dropped(text, import_text("book" + suffix, text))


@PROPERTY
@given(text=manuscripts(), headings=st.lists(st.booleans(), max_size=20))
def test_html_keeps_every_word(text: str, headings: list[bool]) -> None:
    blocks = []
    for i, para in enumerate(paragraphs_of(text)):
        tag = "h2" if i < len(headings) and headings[i] else "p"
        blocks.append(f"<{tag}>{html.escape(para)}</{tag}>")
    doc = f"<html><head><title>T</title></head><body>{''.join(blocks)}</body></html>"
    if len(blocks) == 1 and blocks[0].startswith("<h2>"):
        # a lone heading opening the document is the book's title: nothing left to read
        with pytest.raises(ManuscriptError, match="no speakable text"):
            import_text("book.html", doc)
        return
    assert_nothing_dropped(text, import_text("book.html", doc))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=manuscripts())
def test_epub_and_docx_keep_every_word(text: str) -> None:
    paras = paragraphs_of(text)
    chapter = "".join(f"<p>{html.escape(p, quote=False)}</p>" for p in paras)
    doc = ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
           f"<head><title>t</title></head><body>{chapter}</body></html>")
    assert_nothing_dropped(text, import_built("book.epub", lambda p: epub(p, doc)))
    # Word keeps line breaks inside a paragraph as <w:br/>; a plain run is one line here
    body = "".join(wpara(html.escape(" ".join(p.split("\n")), quote=False)) for p in paras)
    assert_nothing_dropped(text, import_built("book.docx", lambda p: docx(p, body)))


MARKUP_TOKENS = st.sampled_from([
    "# ", "## ", "###### ", "#", "* ", "- ", "+ ", "1. ", "2) ", "> ", ">> ", "```", "~~~", "---", "===", "***",
    "*", "**", "_", "__", "`", "[", "]", "(", ")", "![", "](", "<b>", "</b>", "<!--", "-->", "<br/>", "\\",
    "&amp;", "&nbsp;", "&#0;", "&#x110000;", "&bogus;", "<", ">", "<p>", "</p>", "<h1>", "</h1>", "<div>",
    "<script>", "</script>", "<![CDATA[", "]]>", "<?xml ?>", "<!DOCTYPE x>", "\n", "\n\n", " ", "\t", "\r",
    "\u200f", "\u202e", "\ufeff", "\x00", "\x0c",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tokens=st.lists(st.one_of(MARKUP_TOKENS, WORD, NUMBER), max_size=80), suffix=st.sampled_from([".md", ".html"]))
def test_markup_soup_is_a_book_or_a_clear_refusal(tokens: list[str], suffix: str) -> None:
    try:
        book = import_text("soup" + suffix, "".join(tokens))
    except ManuscriptError as err:
        assert not err.reason.startswith(CATCH_ALL), err.reason  # a reader bug, not a file problem
        assert "\n" not in err.reason
        return
    assert book.chapters and all(c.paragraphs for c in book.chapters)
    for chapter in book.chapters:
        for para in chapter.paragraphs:
            assert "".join(s.text + s.trailing for s in para.sentences) == para.text
