"""Technical books read right: mathematics said by the rules, and nothing dropped without a choice.

The EPUB is built here (tests/support/epub.py: a first course in linear algebra in miniature,
its MathML with the placeholder alttext real textbooks carry); the readings are the English
table's (studio/text/mathematics/rules/en.json) as docs/mathematics.md lists them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from studio.text.importer import read_manuscript
from studio.text.mathematics.latex import spoken_pieces
from studio.text.mathematics.speech import say_mathml
from support.epub import technical_book

M = "http://www.w3.org/1998/Math/MathML"


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    return read_manuscript(technical_book(tmp_path_factory.mktemp("tech") / "course.epub")).book


def _paragraphs(book, chapter: int = 0) -> list[tuple[str, str]]:
    return [(p.kind, p.text) for p in book.chapters[chapter].paragraphs]


def test_mathml_in_an_epub_reads_as_the_rules_say(book):
    texts = [t for _k, t in _paragraphs(book)]
    assert "When A is square, both C of A and R of A are subsets of C to the power n." in texts
    assert ("The half is a over b, the area is pi r squared, the side is the square root of x and its cube root "
            "is the cube root of y; the distance is the absolute value of x minus y.") in texts


def test_a_display_matrix_is_a_paragraph_of_its_own(book):
    texts = [t for _k, t in _paragraphs(book)]
    i = texts.index("The matrix is")
    assert texts[i + 1] == "M equals the 2 by 2 matrix, row 1: 1, 2; row 2: 3, 4, end of matrix"
    assert texts[i + 2] == "and it is invertible."


def test_a_placeholder_alttext_is_never_read(book):
    said = " ".join(p.text for c in book.chapters for p in c.paragraphs)
    assert "not available" not in said.lower()


def test_a_footnote_is_kept_in_place_and_at_the_end_of_its_chapter(book):
    paragraphs = _paragraphs(book)
    note = "Note 1. Subsets of the same space, that is."
    assert paragraphs[-1] == ("note", note)
    assert ("note-in-place", note) == paragraphs[2]  # after the paragraph that points at it
    assert all(note not in t for _k, t in _paragraphs(book, 1))


def test_captions_alt_text_tables_and_code_are_kept_with_their_kind(book):
    paragraphs = _paragraphs(book)
    assert ("caption", "Figure 3: The column space of M.") in paragraphs
    assert ("alt", "A graph with three vertices") in paragraphs
    assert ("table", "Row 1: Name: M; Rank: 2.") in paragraphs
    assert ("table-summary", "A table of 2 rows and 2 columns: Name, Rank.") in paragraphs
    assert ("code", "rank(M) == 2") in paragraphs


@pytest.mark.parametrize(("latex", "said"), [
    (r"\frac{a}{b}", "a over b"),
    (r"\frac{a+b}{c}", "the fraction a plus b, over c, end of fraction"),
    (r"\frac{1}{2}", "1/2"),
    (r"x^2", "x squared"),
    (r"(x+1)^2", "the quantity x plus 1, squared"),
    (r"x^{n+1}", "x to the power n plus 1, end of exponent"),
    (r"A^{-1}", "A inverse"),
    (r"A^T", "A transpose"),
    (r"\sqrt{x}", "the square root of x"),
    (r"\sqrt[3]{x}", "the cube root of x"),
    (r"\left| x \right|", "the absolute value of x"),
    (r"C(A)", "C of A"),
    (r"\sin x", "sine of x"),
    (r"\sum_{i=1}^{n} a_i", "the sum from i equals 1 to n of a sub i"),
    (r"\int_0^1 x^2\,dx", "the integral from 0 to 1 of x squared d x"),
    (r"\lim_{x \to 0} f(x)", "the limit as x approaches 0 of f of x"),
    (r"\begin{pmatrix} a & b \\ c & d\end{pmatrix}", "the 2 by 2 matrix, row 1: a, b; row 2: c, d, end of matrix"),
    (r"\begin{bmatrix} 1 \\ 2\end{bmatrix}", "the column vector 1, 2"),
    (r"\{x \mid x>0\}", "the set of x such that x is greater than 0"),
    (r"[0, 1]", "the closed interval from 0 to 1"),
    (r"2(x+1)", "2 times the quantity x plus 1"),
])
def test_latex_reads_as_the_rules_say(latex, said):
    assert spoken_pieces(f"${latex}$", "en") == [(said, False)]


def test_dollar_amounts_are_not_mathematics():
    assert spoken_pieces("It costs $5 and $10, or $2.50 each.", "en") == [("It costs $5 and $10, or $2.50 each.",
                                                                            False)]


def test_a_markdown_expression_is_said_and_a_display_one_stands_apart(tmp_path: Path):
    source = tmp_path / "notes.md"
    source.write_text("# Areas\n\nThe area is $\\pi r^2$ and the price $5.\n\n$$\nx = \\frac{a}{b}\n$$\n\n"
                      "```\nprint(1)\n```\n", encoding="utf-8")
    paragraphs = [(p.kind, p.text) for c in read_manuscript(source).book.chapters for p in c.paragraphs]
    assert ("", "The area is pi r squared and the price $5.") in paragraphs
    assert ("", "x equals a over b") in paragraphs
    assert ("code", "print(1)") in paragraphs


def test_readings_follow_the_books_language():
    root = etree.fromstring(f'<math xmlns="{M}"><msup><mi>x</mi><mn>2</mn></msup><mo>+</mo>'
                            f'<mfrac><mi>a</mi><mi>b</mi></mfrac></math>')
    assert say_mathml(root, "fr") == "x au carré plus a sur b"
    assert say_mathml(root, "de") == "x Quadrat plus a durch b"
