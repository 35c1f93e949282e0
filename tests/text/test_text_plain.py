"""Plain text and Markdown import, and chapter detection."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from studio.text.importer import load_manuscript
from studio.text.structure import is_chapter_heading

PROSE = (
    "The harbour was quiet that morning and the boats rocked gently against the wall. "
    "Nobody in the village could remember a calmer sea at this time of the year."
)


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def titles(book) -> list[str]:  # noqa: ANN001
    return [c.title for c in book.chapters]


def assert_lossless(book) -> None:  # noqa: ANN001
    for chapter in book.chapters:
        for para in chapter.paragraphs:
            assert "".join(s.text + s.trailing for s in para.sentences) == para.text
            assert all(s.language == para.effective_language for s in para.sentences)


@pytest.mark.parametrize(
    "line",
    [
        "Chapter 1", "CHAPTER IV", "Chapter One", "Chapter Twenty-One", "chapter xii.",
        "Chapter 3: The Storm", "CHAPTER I. THE BEGINNING", "Chapter One \u2014 The Lamp",
        "Part One", "PART II", "Part Two - Winter", "Book 3", "Prologue", "Epilogue",
        "Chapitre 2", "Chapitre premier", "# Chapter 1",
    ],
)
def test_chapter_heading_patterns(line: str) -> None:
    assert is_chapter_heading(line)


@pytest.mark.parametrize(
    "line",
    [
        "Chapter one was boring.", "Part of the problem is this.", "The chapter ended.",
        "Chapter", "Chapter 1 " + "x" * 120, "Booking a room", "Chapter IIII",
    ],
)
def test_not_chapter_headings(line: str) -> None:
    assert not is_chapter_heading(line)


def test_txt_chapters_and_paragraphs(tmp_path: Path) -> None:
    text = (
        "A short preface line.\n\n"
        "CHAPTER I\n\n" + PROSE + "\n\n" + PROSE + "\n\n"
        "Chapter Two\n" + PROSE + "\n\n"
        "Part Three: The End\n\n" + textwrap.fill(PROSE, 60) + "\n"
    )
    book = load_manuscript(write(tmp_path, "novel.txt", text))
    assert titles(book) == ["Front Matter", "CHAPTER I", "Chapter Two", "Part Three: The End"]
    assert book.chapters[0].front_matter and not book.chapters[1].front_matter
    assert [p.text for p in book.chapters[1].paragraphs] == ["CHAPTER I", PROSE, PROSE]
    # a heading line glued to its text is split off; wrapped lines are joined
    assert [p.text for p in book.chapters[2].paragraphs] == ["Chapter Two", PROSE]
    assert book.chapters[3].paragraphs[1].text == PROSE
    assert book.title == "novel" and book.language == "en"
    assert book.metadata["format"] == "text"
    assert_lossless(book)


def test_txt_header_fields_give_metadata(tmp_path: Path) -> None:
    text = "Title: The Quiet Harbour\nAuthor: Jo Bloggs\n\n" + PROSE
    book = load_manuscript(write(tmp_path, "gutenberg_style.txt", text))
    assert (book.title, book.author) == ("The Quiet Harbour", "Jo Bloggs")


def test_txt_one_paragraph_per_long_line(tmp_path: Path) -> None:
    text = "\n".join([PROSE, "Yes.", PROSE + " Once more."])
    book = load_manuscript(write(tmp_path, "lines.txt", text))
    assert len(book.chapters[0].paragraphs) == 3


def test_long_unstructured_text_becomes_sections(tmp_path: Path) -> None:
    para = " ".join(["word"] * 100) + "."
    text = "\n\n".join([para] * 180)  # 18,000 words, no headings
    book = load_manuscript(write(tmp_path, "long.txt", text))
    assert titles(book) == ["Section 1", "Section 2", "Section 3", "Section 4"]
    counts = [c.word_count for c in book.chapters]
    assert sum(counts) == 18_000 and all(1_250 <= n <= 5_100 for n in counts)


def test_short_unstructured_text_is_one_chapter(tmp_path: Path) -> None:
    book = load_manuscript(write(tmp_path, "my_story.txt", PROSE))
    assert titles(book) == ["my story"]


def test_markdown_headings_front_matter_and_cleanup(tmp_path: Path) -> None:
    text = (
        "---\ntitle: \"Sea Stories\"\nauthors:\n  - Ann Example\n  - Bo Example\nlang: en-GB\n---\n\n"
        "# Sea Stories\n\n"
        "## Contents\n\nThe Harbour, The Storm\n\n"
        "## The Harbour\n\n"
        "The **harbour** was _quiet_ and [the boats](http://example.com) rocked. "
        "See ![a picture](pic.png) and `code`. An escaped \\*star\\* and snake_case stay.\n\n"
        "> Quoted line one\n> quoted line two.\n\n"
        "- first item\n- second item\n\n"
        "```\nprint('never read')\n```\n\n"
        "* * *\n\n"
        "### A subheading\n\nMore text.<!-- a hidden comment -->\n\n"
        "The Storm\n---------\n\nIt rained.\n"
    )
    book = load_manuscript(write(tmp_path, "sea.md", text))
    assert (book.title, book.author, book.language) == ("Sea Stories", "Ann Example, Bo Example", "en")
    assert titles(book) == ["Contents", "The Harbour", "The Storm"]
    assert book.chapters[0].front_matter and not book.chapters[1].front_matter
    texts = [p.text for p in book.chapters[1].paragraphs]
    assert texts[1] == (
        "The harbour was quiet and the boats rocked. See a picture and code. "
        "An escaped *star* and snake_case stay."
    )
    assert "Quoted line one quoted line two." in texts
    assert "first item" in texts and "second item" in texts
    assert "A subheading" in texts and "More text." in texts
    assert not any("hidden" in t for t in texts)
    # code is kept as code, which a project leaves silent unless the producer has it read
    assert [p.kind for p in book.chapters[1].paragraphs if "never read" in p.text] == ["code"]
    assert_lossless(book)


def test_markdown_title_from_first_heading(tmp_path: Path) -> None:
    text = "# My Essay\n\n" + PROSE + "\n\n" + PROSE
    book = load_manuscript(write(tmp_path, "essay.md", text))
    assert book.title == "My Essay"
    assert titles(book) == ["My Essay"]
    assert len(book.chapters[0].paragraphs) == 2


def test_markdown_h1_chapters_when_several(tmp_path: Path) -> None:
    text = "# One\n\n" + PROSE + "\n\n# Two\n\n## Inside two\n\n" + PROSE
    book = load_manuscript(write(tmp_path, "book.md", text))
    assert titles(book) == ["One", "Two"]
    assert [p.text for p in book.chapters[1].paragraphs][:2] == ["Two", "Inside two"]


def test_markdown_without_headings_uses_chapter_lines(tmp_path: Path) -> None:
    text = "Chapter 1\n\n" + PROSE + "\n\nChapter 2\n\n" + PROSE
    book = load_manuscript(write(tmp_path, "plain.md", text))
    assert titles(book) == ["Chapter 1", "Chapter 2"]


def test_encodings(tmp_path: Path) -> None:
    text = "Caf\u00e9 cr\u00e8me, na\u00efve fa\u00e7ade. " * 3
    for name, encoding in [("bom8.txt", "utf-8-sig"), ("u16.txt", "utf-16"), ("u32.txt", "utf-32")]:
        book = load_manuscript(write(tmp_path, name, text, encoding))
        assert book.chapters[0].paragraphs[0].text == text.strip()
    cp = load_manuscript(write(tmp_path, "ansi.txt", text + " \u201cquoted\u201d \u2013 dash", "cp1252"))
    assert cp.metadata["encoding"] == "cp1252"
    assert "\u201cquoted\u201d \u2013 dash" in cp.chapters[0].paragraphs[0].text
    u16 = load_manuscript(write(tmp_path, "u16le_nobom.txt", text, "utf-16-le"))
    assert u16.chapters[0].paragraphs[0].text == text.strip()


def test_sentence_cap_is_configurable(tmp_path: Path) -> None:
    text = ", ".join(["a clause of several words"] * 40) + "."
    book = load_manuscript(write(tmp_path, "long.txt", text), max_sentence_chars=120)
    sentences = book.chapters[0].paragraphs[0].sentences
    assert len(sentences) > 1 and all(s.was_split and len(s.text) <= 120 for s in sentences)
    assert_lossless(book)
