"""EPUB import: hand-built EPUB 2/3 files, hostile archives, and the shared real EPUBs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from studio.core.errors import ManuscriptError
from studio.text.importer import load_manuscript
from support.epub import PROSE, XHTML, epub3_single_file, make_epub, opf, xhtml


def epub2(path: Path) -> Path:
    """EPUB 2: NCX only, opf:role authors, cover/title/copyright front matter, a split chapter."""
    ncx = (
        '<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>'
        '<navPoint id="a" playOrder="1"><navLabel><text>Title Page</text></navLabel><content src="title.xhtml"/></navPoint>'
        '<navPoint id="b" playOrder="2"><navLabel><text>The First Tide</text></navLabel><content src="text/ch1.xhtml"/></navPoint>'
        '<navPoint id="c" playOrder="3"><navLabel><text>The Second Tide</text></navLabel><content src="text/ch2.xhtml#start"/></navPoint>'
        "</navMap></ncx>"
    )
    meta = (
        '<dc:title>Two Tides</dc:title><dc:creator opf:role="ill">Ivy Illustrator</dc:creator>'
        '<dc:creator opf:role="aut">Ann Author</dc:creator><dc:language>en</dc:language><dc:publisher>Small Press</dc:publisher>'
    )
    items = [
        ("ncx", "toc.ncx", "application/x-dtbncx+xml"), ("cover", "cover.xhtml", XHTML), ("title", "title.xhtml", XHTML),
        ("copy", "copyright.xhtml", XHTML), ("c1", "text/ch1.xhtml", XHTML), ("c1b", "text/ch1_split.xhtml", XHTML),
        ("c2", "text/ch2.xhtml", XHTML), ("notes", "notes.xhtml", XHTML), ("css", "style.css", "text/css"),
    ]
    files = {
        "OEBPS/content.opf": opf(items, ["cover", "title", "copy", "c1", "c1b", "!notes", "c2"], version="2.0", meta=meta),
        "OEBPS/toc.ncx": ncx,
        "OEBPS/cover.xhtml": xhtml('<img src="cover.jpg" alt="Cover"/>'),
        "OEBPS/title.xhtml": xhtml("<h1>Two Tides</h1><p>Ann Author</p>"),
        "OEBPS/copyright.xhtml": xhtml("<p>Copyright 2024 Ann Author. All rights reserved.</p>"),
        "OEBPS/text/ch1.xhtml": xhtml(f"<h2>The First Tide</h2><p>{PROSE}</p>"),
        "OEBPS/text/ch1_split.xhtml": xhtml(f"<p>{PROSE} It went on.</p>"),
        "OEBPS/notes.xhtml": xhtml("<p>A non-linear note that is not read.</p>"),
        "OEBPS/text/ch2.xhtml": xhtml(f'<p>Lead-in belongs to chapter one.</p><h2 id="start">The Second Tide</h2><p>{PROSE}</p>'),
        "OEBPS/style.css": "p {}",
    }
    return make_epub(path, files)


def test_epub2_ncx_chapters_front_matter_and_metadata(tmp_path: Path) -> None:
    book = load_manuscript(epub2(tmp_path / "tides.epub"))
    assert (book.title, book.author, book.language) == ("Two Tides", "Ann Author", "en")
    assert book.metadata["publisher"] == "Small Press"
    assert [(c.title, c.front_matter) for c in book.chapters] == [
        ("Title Page", True),
        ("Copyright", True),
        ("The First Tide", False),
        ("The Second Tide", False),
    ]
    first = [p.text for p in book.chapters[2].paragraphs]
    assert first == ["The First Tide", PROSE, PROSE + " It went on.", "Lead-in belongs to chapter one."]
    assert [p.text for p in book.chapters[3].paragraphs] == ["The Second Tide", PROSE]
    assert "non-linear" not in str([p.text for c in book.chapters for p in c.paragraphs])


def test_epub3_nav_fragments_split_one_file(tmp_path: Path) -> None:
    book = load_manuscript(epub3_single_file(tmp_path / "one.epub"))
    assert book.language == "en"
    assert [(c.title, c.front_matter) for c in book.chapters] == [
        ("Contents", True),
        ("One File", True),
        ("Part One", False),
        ("One", False),
        ("Two", False),
    ]
    assert [p.text for p in book.chapters[3].paragraphs] == ["One", PROSE, "Page break."]
    assert [p.text for p in book.chapters[4].paragraphs if not p.kind] == ["Two", PROSE]
    # the footnote nothing points at is kept where it stands, for the project to read or leave out
    assert [(p.kind, p.text) for p in book.chapters[4].paragraphs if p.kind] == [
        ("note-in-place", "Note 1. A footnote."), ("note", "Note 1. A footnote.")]


def test_epub_sample_matches_markdown(resources: Path) -> None:
    md = load_manuscript(resources / "sample.md")
    ep = load_manuscript(resources / "sample.epub")
    assert len(md.chapters) == len(ep.chapters) == 3
    assert [c.title for c in md.chapters] == [c.title for c in ep.chapters]
    assert [[p.text for p in c.paragraphs] for c in md.chapters] == [[p.text for p in c.paragraphs] for c in ep.chapters]
    assert (md.title, md.author, md.language) == (ep.title, ep.author, ep.language)
    assert md.title == "The Lighthouse Keeper's Daughter"


def test_sample_epub_is_reproducible(resources: Path, tmp_path: Path) -> None:
    import runpy
    import sys

    script = resources / "make_sample_epub.py"
    argv = sys.argv
    sys.argv = [str(script), str(tmp_path / "again.epub")]
    try:
        with pytest.raises(SystemExit) as done:
            runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = argv
    assert done.value.code == 0
    assert (tmp_path / "again.epub").read_bytes() == (resources / "sample.epub").read_bytes()


# --- hostile and broken archives ---------------------------------------------------------


def test_external_entities_are_never_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-VALUE", encoding="utf-8")
    evil = (
        f'<?xml version="1.0"?><!DOCTYPE html [<!ENTITY xxe SYSTEM "file://{secret}">]>'
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Hello &xxe; world, this is a normal paragraph.</p></body></html>'
    )
    items = [("c", "c.xhtml", XHTML)]
    path = make_epub(tmp_path / "xxe.epub", {"OEBPS/content.opf": opf(items, ["c"]), "OEBPS/c.xhtml": evil})
    book = load_manuscript(path)
    text = " ".join(p.text for c in book.chapters for p in c.paragraphs)
    assert "TOPSECRET" not in text and "normal paragraph" in text


def test_entity_expansion_bomb_does_not_hang(tmp_path: Path) -> None:
    lol = '<!ENTITY a "lollollollollollollollollollol">' + "".join(
        f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(9)
    )
    evil = f'<?xml version="1.0"?><!DOCTYPE html [{lol}]><html xmlns="http://www.w3.org/1999/xhtml"><body><p>Safe words here. &j;</p></body></html>'
    items = [("c", "c.xhtml", XHTML)]
    path = make_epub(tmp_path / "lol.epub", {"OEBPS/content.opf": opf(items, ["c"]), "OEBPS/c.xhtml": evil})
    started = time.perf_counter()
    book = load_manuscript(path)
    assert time.perf_counter() - started < 5
    assert "lollol" not in book.chapters[0].paragraphs[0].text


def test_zip_bomb_is_refused(tmp_path: Path) -> None:
    items = [("c", "c.xhtml", XHTML)]
    path = make_epub(
        tmp_path / "bomb.epub",
        {"OEBPS/content.opf": opf(items, ["c"]), "OEBPS/c.xhtml": xhtml("<p>" + " " * 30_000_000 + "x</p>")},
    )
    assert path.stat().st_size < 200_000
    with pytest.raises(ManuscriptError, match="zip bomb"):
        load_manuscript(path)
    with pytest.raises(ManuscriptError, match="zip bomb"):
        load_manuscript(path, max_bytes=1_000_000)


def test_drm_encrypted_epub_is_refused(tmp_path: Path) -> None:
    items = [("c", "c.xhtml", XHTML)]
    enc = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
        '<enc:EncryptedData><enc:CipherData><enc:CipherReference URI="OEBPS/c.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>'
    )
    path = make_epub(
        tmp_path / "drm.epub",
        {"META-INF/encryption.xml": enc, "OEBPS/content.opf": opf(items, ["c"]), "OEBPS/c.xhtml": b"\x8f\x02garbage"},
    )
    with pytest.raises(ManuscriptError, match="DRM"):
        load_manuscript(path)


@pytest.mark.parametrize(
    "files, container, reason",
    [
        ({}, False, "container.xml and the package"),
        ({"OEBPS/other.txt": "x"}, True, "package file 'OEBPS/content.opf' is missing"),
        ({"OEBPS/content.opf": "<package><unclosed"}, True, "not valid XML"),
        ({"OEBPS/content.opf": opf([], [])}, True, "no readable documents"),
        ({"OEBPS/content.opf": opf([("c", "c.xhtml", XHTML)], ["c"])}, True, "could be read"),
        ({"OEBPS/content.opf": opf([("c", "c.xhtml", XHTML)], ["c"]), "OEBPS/c.xhtml": xhtml("<p>!!! ...</p>")}, True, "no speakable text"),
    ],
)
def test_broken_epubs(tmp_path: Path, files: dict[str, str], container: bool, reason: str) -> None:
    path = make_epub(tmp_path / "broken.epub", files, container=container)
    with pytest.raises(ManuscriptError, match=reason) as info:
        load_manuscript(path)
    assert info.value.path == str(path) and "\n" not in str(info.value)


def test_epub_without_container_but_with_opf_still_loads(tmp_path: Path) -> None:
    items = [("c", "c.xhtml", XHTML)]
    files = {"OEBPS/content.opf": opf(items, ["c"], meta="<dc:title>Lost</dc:title>"), "OEBPS/c.xhtml": xhtml(f"<p>{PROSE}</p>")}
    book = load_manuscript(make_epub(tmp_path / "nocontainer.epub", files, container=False))
    assert book.title == "Lost" and book.chapters[0].paragraphs[0].text == PROSE


def test_sloppy_xhtml_falls_back_to_html_parser(tmp_path: Path) -> None:
    items = [("c", "c.xhtml", XHTML)]
    sloppy = "<html><body><p>Caf&eacute;&nbsp;open<p>Second paragraph without closing tags</body>"
    book = load_manuscript(make_epub(tmp_path / "sloppy.epub", {"OEBPS/content.opf": opf(items, ["c"]), "OEBPS/c.xhtml": sloppy}))
    assert [p.text for p in book.chapters[0].paragraphs] == ["Caf\u00e9 open", "Second paragraph without closing tags"]


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "fake.epub"
    path.write_bytes(b"This is plainly not an archive at all.")
    with pytest.raises(ManuscriptError, match="not a valid EPUB"):
        load_manuscript(path)


def test_truncated_zip(tmp_path: Path, resources: Path) -> None:
    data = (resources / "sample.epub").read_bytes()
    path = tmp_path / "truncated.epub"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ManuscriptError):
        load_manuscript(path)


# --- the shared real EPUBs ------------------------------------------------------------------


@pytest.fixture(scope="module")
def childrens(shared_epubs: Path):  # noqa: ANN201
    return load_manuscript(shared_epubs / "childrens-literature.epub")


def test_childrens_literature_chapters_from_nav(childrens) -> None:  # noqa: ANN001
    body = [c for c in childrens.chapters if not c.front_matter]
    assert len(body) >= 10
    titles = [c.title for c in childrens.chapters]
    assert "192 THE REAL PRINCESS" in titles and "194 THE NIGHTINGALE" in titles
    assert titles.index("192 THE REAL PRINCESS") < titles.index("194 THE NIGHTINGALE")
    assert childrens.chapters[0].front_matter  # the nav document in the spine
    assert childrens.title == "Children's Literature" and childrens.language == "en"
    assert "Charles Madison Curry" in childrens.author
    princess = childrens.chapters[titles.index("192 THE REAL PRINCESS")]
    assert 500 < princess.word_count < 2000
    text = " ".join(p.text for c in childrens.chapters for p in c.paragraphs)
    assert "Page_169" not in text
    for chapter in childrens.chapters:
        for para in chapter.paragraphs:
            assert "".join(s.text + s.trailing for s in para.sentences) == para.text
            assert all(0 < len(s.text) <= 500 for s in para.sentences)


def test_sous_le_vent_is_french(shared_epubs: Path) -> None:
    book = load_manuscript(shared_epubs / "sous-le-vent.epub")
    assert book.language == "fr" and book.title == "Sous le vent"
    body = [c for c in book.chapters if not c.front_matter]
    assert body and all(p.effective_language == "fr" for c in body for p in c.paragraphs)
    assert any(c.front_matter for c in book.chapters)
    text = " ".join(p.text for c in body for p in c.paragraphs)
    assert "restait toujours" in text  # a word hyphenated across two SVG lines is rejoined


def test_wasteland_poetry(shared_epubs: Path) -> None:
    book = load_manuscript(shared_epubs / "wasteland.epub")
    titles = [c.title for c in book.chapters]
    assert titles[1:6] == [
        "I. THE BURIAL OF THE DEAD", "II. A GAME OF CHESS", "III. THE FIRE SERMON",
        "IV. DEATH BY WATER", "V. WHAT THE THUNDER SAID",
    ]
    assert book.chapters[0].front_matter
    burial = [p.text for p in book.chapters[1].paragraphs]
    assert "April is the cruellest month, breeding" in burial  # verse lines stay lines
    assert "And went on in sunlight, into the Hofgarten," in burial  # line number 10 dropped
    assert book.language == "en"
    english = sum(p.effective_language == "en" for p in book.chapters[1].paragraphs)
    assert english / len(book.chapters[1].paragraphs) > 0.9


def test_georgia_pls_ssml_loads(shared_epubs: Path) -> None:
    book = load_manuscript(shared_epubs / "georgia-pls-ssml.epub")
    assert book.title == "Georgia" and len(book.chapters) >= 5
    assert book.word_count > 5000
