"""Tables of contents and copyright pages in EPUBs: front matter with a reason, never dropped."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from support.epub import PROSE, XHTML, epub3_single_file, make_epub, opf, xhtml

from studio.engine.voice.catalog import get_voice
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.text.formats.epub import COPYRIGHT_REASON, TOC_REASON
from studio.text.importer import load_manuscript

NCX = "application/x-dtbncx+xml"


def ncx(points: list[tuple[str, str]]) -> str:
    nav = "".join(f'<navPoint id="n{i}" playOrder="{i}"><navLabel><text>{label}</text></navLabel>'
                  f'<content src="{src}"/></navPoint>' for i, (label, src) in enumerate(points, 1))
    return f'<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>{nav}</navMap></ncx>'


def epub2(path: Path, docs: dict[str, str], points: list[tuple[str, str]], guide: str = "") -> Path:
    """EPUB 2 whose spine is ``docs`` in order (neutral file names: nothing guessed from them)."""
    items = [("ncx", "toc.ncx", NCX)] + [(f"d{i}", name, XHTML) for i, name in enumerate(docs)]
    package = opf(items, [f"d{i}" for i in range(len(docs))], version="2.0",
                  meta="<dc:title>Links</dc:title><dc:language>en</dc:language>")
    package = package.replace("</package>", f"<guide>{guide}</guide></package>")
    files = {"OEBPS/content.opf": package, "OEBPS/toc.ncx": ncx(points)}
    files.update({f"OEBPS/{name}": body for name, body in docs.items()})
    return make_epub(path, files)


def chapter_list(body: int) -> str:
    return "<ol>" + "".join(f'<li><a href="p{i}.xhtml">Chapter {i}: The Long Way Round</a></li>'
                            for i in range(1, body + 1)) + "</ol>"


def test_epub3_nav_in_the_spine_is_a_table_of_contents(tmp_path: Path) -> None:
    book = load_manuscript(epub3_single_file(tmp_path / "one.epub"))
    assert [(c.title, c.front_matter, c.front_reason) for c in book.chapters][:3] == [
        ("Contents", True, TOC_REASON), ("One File", True, ""), ("Part One", False, "")]


def test_a_page_of_links_is_a_contents_page_and_a_chapter_with_links_is_not(tmp_path: Path) -> None:
    with_links = (f"<h2>Chapter 1: The Long Way Round</h2><p>{PROSE} See <a href='p2.xhtml'>the next part</a>, "
                  f"<a href='https://example.org'>the map</a> and <a href='#n1'>a note</a>.</p><p id='n1'>{PROSE}</p>")
    docs = {
        "a.xhtml": xhtml("<h1>Brief Contents</h1>" + chapter_list(5)),
        "p1.xhtml": xhtml(with_links),
        "p2.xhtml": xhtml(f"<h2>Chapter 2: The Long Way Round</h2><p>{PROSE}</p>"),
    }
    points = [("Brief Contents", "a.xhtml"), ("Chapter 1", "p1.xhtml"), ("Chapter 2", "p2.xhtml")]
    book = load_manuscript(epub2(tmp_path / "links.epub", docs, points))
    assert [(c.title, c.front_matter, c.front_reason) for c in book.chapters] == [
        ("Brief Contents", True, TOC_REASON), ("Chapter 1", False, ""), ("Chapter 2", False, "")]
    assert book.chapters[0].paragraphs  # still there: excluded by default, includable


def test_guide_and_landmarks_name_the_contents_and_copyright_pages(tmp_path: Path) -> None:
    docs = {
        "x.xhtml": xhtml(f"<p>{PROSE}</p>"),  # says nothing of itself: the guide says it is the copyright page
        "y.xhtml": xhtml("<h1>Overview</h1><p>Part one, then part two, then the end.</p>"),
        "p1.xhtml": xhtml(f"<h2>One</h2><p>{PROSE}</p>"),
    }
    guide = '<reference type="copyright-page" href="x.xhtml"/><reference type="toc" href="y.xhtml"/>'
    book = load_manuscript(epub2(tmp_path / "guide.epub", docs, [("One", "p1.xhtml")], guide))
    assert [(c.front_matter, c.front_reason) for c in book.chapters] == [
        (True, COPYRIGHT_REASON), (True, TOC_REASON), (False, "")]

    nav = xhtml('<nav epub:type="toc"><ol><li><a href="p1.xhtml">One</a></li></ol></nav>'
                '<nav epub:type="landmarks"><ol><li><a epub:type="toc" href="y.xhtml">Overview</a></li>'
                '<li><a epub:type="bodymatter" href="p1.xhtml">Start</a></li></ol></nav>')
    items = [("nav", "nav.xhtml", XHTML), ("y", "y.xhtml", XHTML), ("p1", "p1.xhtml", XHTML)]
    package = opf(items, ["y", "p1"], meta="<dc:title>Marks</dc:title><dc:language>en</dc:language>").replace(
        'href="nav.xhtml" media-type', 'href="nav.xhtml" properties="nav" media-type')
    files = {"OEBPS/content.opf": package, "OEBPS/nav.xhtml": nav, "OEBPS/y.xhtml": docs["y.xhtml"],
             "OEBPS/p1.xhtml": docs["p1.xhtml"]}
    book = load_manuscript(make_epub(tmp_path / "marks.epub", files))
    assert [(c.title, c.front_matter, c.front_reason) for c in book.chapters] == [
        ("Overview", True, TOC_REASON), ("One", False, "")]


def test_real_contents_page_is_excluded_in_the_project_and_chapters_are_not(
        shared_epubs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = shared_epubs / "childrens-literature.epub"
    book = load_manuscript(source)
    assert (book.chapters[0].title, book.chapters[0].front_reason) == ("THE CONTENTS", TOC_REASON)
    assert not any(c.front_matter for c in book.chapters[1:])

    # The same real contents page as an ordinary document (no nav property, a neutral name):
    # recognised by its links alone.
    with zipfile.ZipFile(source) as z:
        page = z.read("EPUB/nav.xhtml").decode("utf-8")
    docs = {"a.xhtml": page, "p1.xhtml": xhtml(f"<h2>One</h2><p>{PROSE}</p>")}
    plain = load_manuscript(epub2(tmp_path / "plain.epub", docs, [("One", "p1.xhtml")]))
    assert [(c.front_matter, c.front_reason) for c in plain.chapters] == [(True, TOC_REASON), (False, "")]

    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    project = open_for_manuscript(tmp_path / "plain.epub", tmp_path / "plain.studio",
                                  new_project_settings(get_voice(None))).project
    with project:
        control = project.chapter_control.all()
        assert (control[0].included, control[0].reason) == (False, TOC_REASON)
        assert project.chapter_control.included() == [1]
        assert project.chapters()[0].reason == TOC_REASON
