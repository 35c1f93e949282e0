"""HTML and DOCX import (real files written to tmp_path)."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE

from studio.core.errors import ManuscriptError
from studio.text.importer import load_manuscript

PROSE = (
    "The harbour was quiet that morning and the boats rocked gently against the wall. "
    "Nobody in the village could remember a calmer sea at this time of the year."
)
FRENCH = (
    "Le port \u00e9tait calme ce matin-l\u00e0 et les bateaux se balan\u00e7aient doucement contre le mur. "
    "Personne au village ne se souvenait d'une mer aussi tranquille \u00e0 cette \u00e9poque de l'ann\u00e9e."
)


def assert_lossless(book) -> None:  # noqa: ANN001
    for chapter in book.chapters:
        for para in chapter.paragraphs:
            assert "".join(s.text + s.trailing for s in para.sentences) == para.text


# --- HTML -------------------------------------------------------------------------


def test_html_metadata_chapters_and_skipped_markup(tmp_path: Path) -> None:
    html = f"""<!DOCTYPE html>
<html lang="en-GB"><head>
<meta charset="utf-8"><title>Harbour Tales</title>
<meta name="author" content="Jo Bloggs">
<style>p {{ color: red }}</style><script>var never = "read";</script>
</head><body>
<h1>Harbour Tales</h1>
<h2>The Calm</h2>
<p>{PROSE}</p>
<p>Line one<br>line two<br><br>A new paragraph&nbsp;after two breaks.</p>
<p>Page <span epub:type="pagebreak">12</span>numbers and notes<a epub:type="noteref" href="#n1">1</a> vanish.</p>
<div hidden>hidden text</div><p style="display: none">invisible</p>
<h2>The Storm</h2>
<ul><li>First item</li><li>Second item</li></ul>
<table><tr><td>Cell A</td><td>Cell B</td></tr></table>
<pre>keep
  this</pre>
</body></html>"""
    path = tmp_path / "tales.html"
    path.write_text(html, encoding="utf-8")
    book = load_manuscript(path)
    assert (book.title, book.author, book.language) == ("Harbour Tales", "Jo Bloggs", "en")
    assert [c.title for c in book.chapters] == ["The Calm", "The Storm"]
    calm = [p.text for p in book.chapters[0].paragraphs]
    assert calm == [
        "The Calm",
        PROSE,
        "Line one line two",
        "A new paragraph after two breaks.",
        "Page numbers and notes vanish.",
    ]
    storm = [p.text for p in book.chapters[1].paragraphs]
    assert storm == ["The Storm", "First item", "Second item", "Cell A", "Cell B", "keep this"]
    all_text = " ".join(p.text for c in book.chapters for p in c.paragraphs)
    assert "never" not in all_text and "hidden" not in all_text and "invisible" not in all_text
    assert_lossless(book)


def test_htm_without_headings_and_legacy_charset(tmp_path: Path) -> None:
    html = f'<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"></head><body><p>{PROSE} Caf\u00e9 \u2013 ok.</p></body></html>'
    path = tmp_path / "old_page.htm"
    path.write_bytes(html.encode("cp1252"))
    book = load_manuscript(path)
    assert book.title == "old_page"
    assert book.chapters[0].paragraphs[0].text.endswith("Caf\u00e9 \u2013 ok.")


def test_html_chapter_lines_without_heading_tags(tmp_path: Path) -> None:
    html = f"<html><body><p>Chapter 1</p><p>{PROSE}</p><p>Chapter 2</p><p>{PROSE}</p></body></html>"
    path = tmp_path / "lines.html"
    path.write_text(html, encoding="utf-8")
    assert [c.title for c in load_manuscript(path).chapters] == ["Chapter 1", "Chapter 2"]


def test_html_with_no_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.html"
    path.write_text("<html><body><img src='x.png'></body></html>", encoding="utf-8")
    with pytest.raises(ManuscriptError, match="no speakable text"):
        load_manuscript(path)


# --- DOCX -------------------------------------------------------------------------


def make_docx(path: Path) -> Path:
    document = docx.Document()
    props = document.core_properties
    props.title, props.author, props.language = "The Quiet Harbour", "Jo Bloggs", "en-US"
    document.add_paragraph("The Quiet Harbour", style="Title")
    document.add_paragraph("For my mother.")
    document.add_heading("Chapter One", level=1)
    document.add_paragraph(PROSE)
    document.add_heading("A scene", level=2)
    document.add_paragraph(FRENCH)
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "Left cell"
    table.rows[0].cells[1].text = "Right cell"
    custom = document.styles.add_style("Chapter Title", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = document.styles["Heading 1"]
    document.add_paragraph("Chapter Two", style="Chapter Title")
    document.add_paragraph(PROSE)
    document.save(str(path))
    return path


def test_docx_heading_styles_start_chapters(tmp_path: Path) -> None:
    book = load_manuscript(make_docx(tmp_path / "harbour.docx"))
    assert (book.title, book.author, book.language) == ("The Quiet Harbour", "Jo Bloggs", "en")
    assert [c.title for c in book.chapters] == ["Front Matter", "Chapter One", "Chapter Two"]
    assert book.chapters[0].front_matter
    one = book.chapters[1]
    assert [p.text for p in one.paragraphs] == ["Chapter One", PROSE, "A scene", FRENCH, "Left cell", "Right cell"]
    assert one.paragraphs[3].language == "fr" and one.paragraphs[1].language == "en"
    assert book.metadata["format"] == "docx"
    assert_lossless(book)


def test_docx_without_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "blank.docx"
    document = docx.Document()
    document.add_paragraph("")
    document.add_paragraph("   ")
    document.save(str(path))
    with pytest.raises(ManuscriptError, match="no text") as info:
        load_manuscript(path)
    assert info.value.path == str(path)


def test_docx_that_is_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "fake.docx"
    path.write_text("just text pretending", encoding="utf-8")
    with pytest.raises(ManuscriptError, match="not a valid Word document"):
        load_manuscript(path)


def test_docx_zip_without_document_part(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "hollow.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
    with pytest.raises(ManuscriptError, match="not a valid Word document"):
        load_manuscript(path)
