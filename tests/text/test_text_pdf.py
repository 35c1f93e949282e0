"""PDF import on real PDFs generated here with fpdf2: headers, footers, page numbers,
hyphenation, footnote markers, outline chapters, heading-size chapters, scans."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

fpdf = pytest.importorskip("fpdf")

from studio.core.errors import ManuscriptError  # noqa: E402
from studio.core.types import Book  # noqa: E402
from studio.text.importer import load_manuscript  # noqa: E402

RUNNING_HEADER = "The Lighthouse Keeper - A Novel"
FOOTER_NOTE = "Draft copy, not for sale"
_WORDS = (
    "the keeper walked along quiet shore while gulls circled above grey water and wind carried salt "
    "through narrow streets of harbour town where fishermen mended their nets each morning before dawn"
).split()
_LONG = ["extraordinary", "notwithstanding", "circumstances", "unquestionably", "lighthouse", "understanding"]


def prose(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(_WORDS + _LONG) for _ in range(rng.randint(8, 16))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


class Writer:
    """Lays out paragraphs line by line, hyphenating long words at the margin, so
    the test knows exactly which words went in."""

    def __init__(self, *, header: bool = True, outline: bool = True) -> None:
        self.outline = outline
        self.hyphenated = 0
        self.footnotes = 0
        use_header = header

        class Doc(fpdf.FPDF):
            def header(self) -> None:
                if use_header:
                    self.set_font("Helvetica", size=8)
                    self.cell(0, 6, RUNNING_HEADER, align="C", new_x="LMARGIN", new_y="NEXT")
                    self.ln(6)

            def footer(self) -> None:
                if use_header:
                    self.set_y(-15)
                    self.set_font("Helvetica", size=8)
                    self.cell(0, 5, FOOTER_NOTE, align="L")
                    self.set_x(self.l_margin)
                    self.cell(0, 5, f"- {self.page_no()} -", align="R")

        self.pdf = Doc(format=(148, 210))  # A5
        self.pdf.set_auto_page_break(True, margin=22)
        self.pdf.add_page()

    def heading(self, text: str, size: int = 18) -> None:
        pdf = self.pdf
        if self.outline:
            pdf.start_section(text, level=0)
        pdf.set_font("Helvetica", style="B", size=size)
        pdf.cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)

    def paragraph(self, text: str, footnote_after: str = "") -> None:
        """Ragged-right lines; a word that does not fit is broken with a hyphen if it is long."""
        pdf = self.pdf
        pdf.set_font("Helvetica", size=11)
        width = pdf.w - pdf.l_margin - pdf.r_margin
        line = ""
        words = text.split()
        i = 0
        while i < len(words):
            word = words[i]
            trial = f"{line} {word}".strip()
            if pdf.get_string_width(trial) <= width:
                line = trial
                i += 1
                continue
            if len(word) >= 10 and line:
                for cut in range(len(word) - 4, 3, -1):
                    head = f"{line} {word[:cut]}-"
                    if pdf.get_string_width(head) <= width:
                        self._line(head, footnote_after)
                        self.hyphenated += 1
                        words[i] = word[cut:]
                        line = ""
                        break
                else:
                    self._line(line, footnote_after)
                    line = ""
                continue
            self._line(line, footnote_after)
            line = ""
        if line:
            self._line(line, footnote_after)
        pdf.ln(3)

    def _line(self, text: str, footnote_after: str) -> None:
        pdf = self.pdf
        if footnote_after and footnote_after in text.split():
            before, _, after = text.partition(footnote_after)
            pdf.write(6, before + footnote_after)
            self.footnotes += 1
            pdf.char_vpos = "SUP"
            pdf.write(6, "1")
            pdf.char_vpos = "LINE"
            pdf.write(6, after)
            pdf.ln(6)
            return
        pdf.cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")

    def save(self, path: Path) -> Path:
        self.pdf.set_title("The Lighthouse Keeper")
        self.pdf.set_author("A. Writer")
        self.pdf.output(str(path))
        return path


def words_of(text: str) -> Counter[str]:
    return Counter(re.findall(r"[A-Za-z]+", text.lower()))


def book_text(book: Book) -> str:
    return "\n".join(p.text for c in book.chapters for p in c.paragraphs)


def make_novel(tmp_path: Path, *, outline: bool, titles: list[str]) -> tuple[Path, str, Writer]:
    rng = random.Random(3)
    w = Writer(outline=outline)
    written = []
    for n, title in enumerate(titles):
        if n:
            w.pdf.add_page()
        w.heading(title)
        written.append(title)
        for k in range(5):
            text = prose(rng, 6)
            w.paragraph(text, footnote_after="shore" if n == 0 else "")
            written.append(text)
    return w.save(tmp_path / "novel.pdf"), "\n".join(written), w


def test_outline_chapters_without_headers_footers_or_page_numbers(tmp_path: Path) -> None:
    titles = ["Arrival", "The Storm", "Morning After"]
    path, written, writer = make_novel(tmp_path, outline=True, titles=titles)
    assert writer.pdf.page_no() >= 6 and writer.hyphenated >= 3 and writer.footnotes >= 2  # it exercises what it claims
    book = load_manuscript(path)
    assert [c.title for c in book.chapters] == titles
    assert book.title == "The Lighthouse Keeper" and book.author == "A. Writer"
    text = book_text(book)
    assert "Lighthouse Keeper - A Novel" not in text and "Draft copy" not in text
    assert not re.search(r"-\s*\d+\s*-", text)
    assert not any(ch.isdigit() for ch in text)  # page numbers and the footnote marker are gone
    for chapter, title in zip(book.chapters, titles):
        assert chapter.paragraphs[0].text == title
        assert len(chapter.paragraphs) == 6  # heading + five paragraphs, rebuilt across page breaks


def test_no_body_word_is_lost_or_invented(tmp_path: Path) -> None:
    path, written, writer = make_novel(tmp_path, outline=True, titles=["One", "Two"])
    assert writer.hyphenated >= 2
    out = book_text(load_manuscript(path))
    assert words_of(out) == words_of(written)
    # hyphenated words come back whole, so every paragraph is exactly what was written
    assert [p for p in out.split("\n")] == written.split("\n")


def test_chapters_from_heading_size_without_outline(tmp_path: Path) -> None:
    rng = random.Random(5)
    w = Writer(outline=False)
    w.heading("The Lighthouse Keeper", size=26)  # the title page: one larger heading first
    titles = ["A Quiet Shore", "Harbour Lights", "Nets at Dawn"]
    for n, title in enumerate(titles):
        if n:
            w.pdf.add_page()
        w.heading(title)
        for _ in range(3):
            w.paragraph(prose(rng, 5))
    book = load_manuscript(w.save(tmp_path / "plain.pdf"))
    assert [c.title for c in book.chapters] == titles
    assert book.title == "The Lighthouse Keeper"
    assert all(len(c.paragraphs) == 4 for c in book.chapters)
    assert RUNNING_HEADER not in book_text(book)


def test_scanned_pdf_is_refused_with_one_line(tmp_path: Path) -> None:
    from PIL import Image

    pdf = fpdf.FPDF()
    for shade in (200, 230):
        pdf.add_page()
        pdf.image(Image.new("L", (400, 560), shade), x=10, y=10, w=180)
    path = tmp_path / "scan.pdf"
    pdf.output(str(path))
    with pytest.raises(ManuscriptError, match="no text layer") as info:
        load_manuscript(path)
    assert "OCR" in info.value.reason and "\n" not in info.value.reason


@pytest.mark.parametrize("data, reason", [(b"hello, not a pdf", "not a PDF"), (b"%PDF-1.4\n garbage " * 20, "not a valid PDF|no pages")])
def test_broken_pdf(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(data)
    with pytest.raises(ManuscriptError, match=reason):
        load_manuscript(path)


def test_layout_rules() -> None:
    from studio.text.formats.pdf_layout import is_page_number, join_lines

    assert all(is_page_number(t) for t in ("12", "- 12 -", "xiv", "Page 3 of 40", "[7]"))
    assert not any(is_page_number(t) for t in ("12 Angry Men", "Chapter 3", "I saw it", "Civil", "Mild"))
    assert join_lines(["under-", "standing is", "key"]) == "understanding is key"
    assert join_lines(["Jean-", "Paul came"]) == "Jean-Paul came"  # a real hyphen before a capital stays
    assert join_lines(["soft\u00ad", "hyphen"]) == "softhyphen"
