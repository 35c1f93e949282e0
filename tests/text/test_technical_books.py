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


def _probe_set() -> list[tuple[str, str]]:
    """The probe set of docs/mathematics.md: each LaTeX expression and what is said."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "mathematics.md").read_text(encoding="utf-8")
    table = doc.split("<!-- probe set: begin -->")[1].split("<!-- probe set: end -->")[0]
    rows = [line.strip().strip("|").split(" | ") for line in table.splitlines() if line.startswith("| `")]
    return [(latex.strip().strip("`"), said.strip()) for latex, said in rows]


@pytest.mark.parametrize(("latex", "said"), _probe_set())
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


def test_the_probe_set_covers_every_construction():
    latex = " ".join(x for x, _ in _probe_set())
    for construction in (r"\frac", "^", r"\sqrt", r"\left|", "C(A)", r"\sum", r"\int", r"\lim", "pmatrix", r"\{"):
        assert construction in latex


# ------------------------------------------------------------ the project and the audit


@pytest.fixture
def project(tmp_path: Path, book):
    from studio.project.settings import ProjectSettings
    from studio.project.store import Project

    with Project.create(tmp_path / "course.studio", book, ProjectSettings(voice_id="en_US-joe-medium")) as opened:
        yield opened


def _said(project) -> list[str]:
    return [r.text for r in project.sentences() if not r.skipped]


def test_a_footnote_is_read_at_the_end_of_its_chapter_and_left_out_when_set_so(project):
    said = _said(project)
    assert said.count("Note 1.") == 1 and said.index("Note 1.") > said.index("That is all for vector spaces.")
    assert "Figure 3: The column space of M." in said  # an image's caption is read
    assert "A graph with three vertices" not in said and "rank(M) == 2" not in said  # alt text, code: left out
    project.update_settings(project.settings().with_changes(notes="skip"))
    assert "Note 1." not in _said(project)
    project.update_settings(project.settings().with_changes(notes="inline", images="all", tables="summary"))
    said = _said(project)
    assert said.index("Note 1.") < said.index("The half is a over b, the area is pi r squared, the side is the square "
                                               "root of x and its cube root is the cube root of y; the distance is the "
                                               "absolute value of x minus y.")
    assert "A graph with three vertices" in said and "A table of 2 rows and 2 columns: Name, Rank." in said
    assert "Row 1: Name: M; Rank: 2." not in said


def test_the_audit_lists_what_will_not_be_said(project):
    from studio.rendering.book_audit import audit_project

    audit = audit_project(project)
    assert audit.silent_counts() == {"notes (in place)": 2, "images' alt text": 1, "table summaries": 1,
                                     "code blocks": 1}
    assert all(f.text != "Note 1." for f in audit.findings if f.kind != "silent")


def test_greek_and_virginia_are_not_guessed_words(tmp_path: Path):
    from studio.rendering.book_audit import audit_project
    from studio.project.settings import ProjectSettings
    from studio.project.store import Project

    source = tmp_path / "voyage.md"
    source.write_text("# Voyage\n\nThe ship left Virginia with a Greek sailor and John aboard. Then Queequeg sang "
                      "across the Atlantic.\n\nThe sea was calm and the sailors slept on deck all night.\n",
                      encoding="utf-8")
    settings = ProjectSettings(voice_id="en_US-joe-medium")
    with Project.create(tmp_path / "p", read_manuscript(source).book, settings) as p:
        guessed = {f.detail.split(" (")[0] for f in audit_project(p).of_kind("guessed")}
    assert "Queequeg" in guessed
    assert not guessed & {"Greek", "Virginia", "John", "Atlantic"}


def test_spelled_codes_are_one_row_each_and_accepted_in_one_step(tmp_path: Path):
    from studio.project.settings import ProjectSettings
    from studio.project.store import Project
    from studio.project.undo import UndoHistory
    from studio.rendering.book_audit import accept_spelled, audit_project

    source = tmp_path / "theorems.md"
    source.write_text("# Theorems\n\nTheorem VFSLS holds. By Theorem VFSLS the span is closed. Theorem CSRN follows.\n",
                      encoding="utf-8")
    settings = ProjectSettings(voice_id="en_US-joe-medium")
    with Project.create(tmp_path / "p", read_manuscript(source).book, settings) as p:
        spelled = [f.detail for f in audit_project(p).of_kind("spelled")]
        assert sorted(spelled) == ["CSRN (1x)", "VFSLS (2x)"]
        assert accept_spelled(p, [d.split(" (")[0] for d in spelled]) == 2
        assert audit_project(p).of_kind("spelled") == ()
        UndoHistory(p.db).undo()
        assert len(audit_project(p).of_kind("spelled")) == 2


def test_a_line_of_invented_words_in_capitals_keeps_the_books_language(tmp_path: Path):
    source = tmp_path / "whale.md"
    source.write_text("# The Whale\n\nThe harpooneer stood up in the boat and shouted at the top of his voice to the "
                      "others.\n\nPEKEE-NUEE-NUEE, ERROMANGOAN.\n\nThen he sat down again and the boat moved on "
                      "across the grey water.\n", encoding="utf-8")
    book = read_manuscript(source).book
    assert {p.language for c in book.chapters for p in c.paragraphs} == {"en"}


def test_inspect_lists_what_a_manuscript_leaves_out_as_the_choices_say(tmp_path: Path, capsys) -> None:
    from studio.cli import main

    def left_out(*args: str) -> dict[str, int]:
        assert main(["inspect", str(source), "--audit", *args]) == 0
        line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("left out of the audio: "))
        return {what: int(n) for what, n in (part.rsplit(" ", 1) for part in line.split(": ", 1)[1].split(", "))}

    source = technical_book(tmp_path / "course.epub")
    assert left_out() == {"notes (in place)": 2, "images' alt text": 1, "table summaries": 1, "code blocks": 1}
    assert left_out("--notes", "skip", "--code", "read", "--images", "all") == {
        "notes (in place)": 2, "notes (at the end of the chapter)": 2, "table summaries": 1}


def test_the_english_dictionary_clears_no_word_of_another_language() -> None:
    from studio.text.audit import audit_sentences
    from studio.text.spoken_report import SpokenSentence

    french = SpokenSentence(1, 1, 1, "Il parlait avec Jean et John.", "Il parlait avec Jean et John.", "fr")
    audit = audit_sentences([french], "fr", phonemize=lambda text, language: "dʒˈɑːn",
                            guessed=[("John", 1, french.text)])
    assert [f.detail for f in audit.of_kind("guessed")] == ["John (1x)"]
