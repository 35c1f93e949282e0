"""Hostile manuscripts: the committed small ones in ``files/`` and generated big ones.

Why generated: a zip bomb, a 10 MB line or a document nested 10,000 levels deep is a
few lines of code but megabytes of repository; and the XML-external-entity files
must point at an absolute path (a "secret" written next to them), which only exists
at test time. ``python tests/hostile/make_corpus.py OUT`` writes the generated ones
into ``OUT`` to look at by hand; ``tests/text/test_hostile_inputs.py`` imports
:func:`generate` and :data:`CASES`.

Every case says what a correct importer does with it (:class:`Expect`): refuse it with
a :class:`~studio.core.errors.ManuscriptError` whose reason matches ``error``, or
import it -- with the words in ``contains`` present, the strings in ``absent``
(the secret of the entity files) nowhere in the book -- and, where ``render`` is set,
speak its first sentence with the bundled voice. Either way within ``seconds``.
(``either`` allows both, for inputs where refusing and importing are equally right.)

Dependency-free on purpose (stdlib only), so the corpus can be rebuilt anywhere.
"""

from __future__ import annotations

import base64
import os
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
FILES = HERE / "files"
SECRET = "HOSTILE-SECRET-7f3a9c"  # written to secret.txt; must never reach a Book
PROSE = "The harbour was quiet that morning and the boats rocked gently against the wall."


@dataclass(frozen=True)
class Expect:
    """What importing one hostile file must give (see the module docstring)."""

    outcome: str  # "ok", "error" or "either"
    error: str = ""  # regex the ManuscriptError reason must match (outcome error/either)
    contains: tuple[str, ...] = ()  # must be in the imported text (outcome ok; either if imported)
    absent: tuple[str, ...] = ()  # must not be in the imported text
    render: bool = False  # speak the first sentence; the audio must not be silent
    seconds: float = 30.0


# --------------------------------------------------------------------- containers


def _xhtml(body: str, doctype: str = "") -> str:
    return (
        f'<?xml version="1.0" encoding="utf-8"?>{doctype}\n<html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>t</title></head><body>{body}</body></html>"
    )


def epub(path: Path, chapter: str | bytes, *, compress: bool = True) -> Path:
    """A minimal EPUB 3 with one chapter document ``OEBPS/c.xhtml``."""
    container = (
        '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0">'
        '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">x</dc:identifier>'
        "<dc:title>Hostile</dc:title><dc:language>en</dc:language></metadata>"
        '<manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c"/></spine></package>'
    )
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        zf.writestr("META-INF/container.xml", container)
        zf.writestr("OEBPS/content.opf", opf)
        zf.writestr("OEBPS/c.xhtml", chapter)
    return path


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx(path: Path, body: str, *, doctype: str = "", compress: bool = True) -> Path:
    """A minimal Word document whose ``w:body`` is ``body`` (raw WordprocessingML)."""
    types = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        "</Types>"
    )
    rels = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
        'Target="word/document.xml"/></Relationships>'
    )
    document = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>{doctype}<w:document xmlns:w="{_W}"><w:body>{body}</w:body></w:document>'
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as zf:
        zf.writestr("[Content_Types].xml", types)
        zf.writestr("_rels/.rels", rels)
        zf.writestr("word/document.xml", document)
    return path


def wpara(text: str) -> str:
    return f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"


def _lie_about_sizes(path: Path, member: str, declared: int) -> None:
    """Rewrite a member's uncompressed size (local header and central directory)."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    local = data.find(b"PK\x03\x04")
    while local != -1:
        n = int.from_bytes(data[local + 26 : local + 28], "little")
        if data[local + 30 : local + 30 + n] == name:
            data[local + 22 : local + 26] = declared.to_bytes(4, "little")
        local = data.find(b"PK\x03\x04", local + 4)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        n = int.from_bytes(data[central + 28 : central + 30], "little")
        if data[central + 46 : central + 46 + n] == name:
            data[central + 24 : central + 28] = declared.to_bytes(4, "little")
        central = data.find(b"PK\x01\x02", central + 4)
    path.write_bytes(bytes(data))


# --------------------------------------------------------------------- generated cases


def _secret(out: Path) -> Path:
    path = out / "secret.txt"
    path.write_text(SECRET + "\n", encoding="utf-8")
    return path


def _gen_xxe_html(out: Path) -> Path:
    secret = _secret(out)
    path = out / "xxe.html"
    path.write_text(
        f'<?xml version="1.0"?><!DOCTYPE html [<!ENTITY xxe SYSTEM "file://{secret}">]>'
        f"<html><body><p>Before &xxe; after, a normal paragraph.</p></body></html>",
        encoding="utf-8",
    )
    return path


def _gen_xxe_docx(out: Path) -> Path:
    secret = _secret(out)
    doctype = f'<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file://{secret}">]>'
    return docx(out / "xxe.docx", wpara("Before &xxe; after, a normal paragraph."), doctype=doctype)


def _gen_xxe_epub_parameter_entity(out: Path) -> Path:
    """External DTD and a parameter entity: neither may be fetched."""
    secret = _secret(out)
    doctype = (
        f'<!DOCTYPE html SYSTEM "file://{secret}" [<!ENTITY % p SYSTEM "file://{secret}"> %p;'
        f'<!ENTITY xxe SYSTEM "file://{secret}">]>'
    )
    return epub(out / "xxe_dtd.epub", _xhtml("<p>Before &xxe; after, a normal paragraph.</p>", doctype))


def _gen_zip_bomb_epub(out: Path) -> Path:
    return epub(out / "zip_bomb.epub", _xhtml("<p>" + " " * 30_000_000 + "x</p>"))


def _gen_zip_bomb_docx(out: Path) -> Path:
    return docx(out / "zip_bomb.docx", wpara("a" * 30_000_000))


def _gen_lying_sizes_epub(out: Path) -> Path:
    """The central directory says 100 bytes; the member inflates to 5 MB."""
    path = epub(out / "lying_sizes.epub", _xhtml("<p>" + "z" * 5_000_000 + "</p>"))
    _lie_about_sizes(path, "OEBPS/c.xhtml", 100)
    return path


def _gen_many_members_docx(out: Path) -> Path:
    """Thousands of archive members, none of them the document."""
    path = out / "many_members.docx"
    with zipfile.ZipFile(path, "w") as zf:
        for i in range(5_000):
            zf.writestr(f"junk/{i}.xml", "<x/>")
    return path


def _deep(open_tag: str, close_tag: str, levels: int, inner: str) -> str:
    return open_tag * levels + inner + close_tag * levels


def _gen_deep_html(out: Path) -> Path:
    path = out / "deep.html"
    path.write_text(f"<html><body>{_deep('<div>', '</div>', 10_000, '<p>Deep text here.</p>')}</body></html>", encoding="utf-8")
    return path


def _gen_deep_epub(out: Path) -> Path:
    return epub(out / "deep.epub", _xhtml(_deep("<div>", "</div>", 10_000, "<p>Deep text here.</p>")))


def _gen_deep_docx(out: Path) -> Path:
    """Tables in table cells, 10,000 levels deep."""
    body = _deep("<w:tbl><w:tr><w:tc>", "</w:tc></w:tr></w:tbl>", 10_000, wpara("Deep text here."))
    return docx(out / "deep.docx", body + wpara("Shallow text here."))


def _huge_value(n: int) -> str:
    # base64 of random bytes: incompressible, so the zip-bomb guard is not what stops it
    return base64.b64encode(os.urandom(n * 3 // 4)).decode("ascii")[:n]


def _gen_huge_attribute_html(out: Path) -> Path:
    path = out / "huge_attribute.html"
    path.write_text(f'<html><body><p title="{_huge_value(12_000_000)}">{PROSE}</p><p>Tail text.</p></body></html>', encoding="utf-8")
    return path


def _gen_huge_attribute_epub(out: Path) -> Path:
    body = _xhtml(f'<p class="{_huge_value(12_000_000)}">{PROSE}</p><p>Tail text.</p>')
    return epub(out / "huge_attribute.epub", body, compress=False)  # random: deflate gains nothing


def _gen_huge_attribute_docx(out: Path) -> Path:
    body = f'<w:p w:rsidR="{_huge_value(12_000_000)}"><w:r><w:t>{PROSE}</w:t></w:r></w:p>' + wpara("Tail text.")
    return docx(out / "huge_attribute.docx", body, compress=False)


def _gen_ten_mb_line_md(out: Path) -> Path:
    path = out / "ten_mb_line.md"
    words = ("alpha ", "beta ", "gamma ", "delta ")
    line = "".join(words[i % 4] for i in range(2_000_000))[:10_000_000]
    path.write_text("# One line\n\n" + line + "\n", encoding="utf-8")
    return path


def _one_line_html(path: Path, megabytes: int) -> Path:
    """Minified HTML: ``megabytes`` 1 MB paragraphs on one line, no newline anywhere.

    (Not 200,000 small paragraphs: language detection costs ~4 ms per paragraph, so
    that many take minutes to import.)
    """
    body = ("lorem ipsum dolor sit amet. " * 37_000)[:1_000_000]
    paragraphs = "".join(f"<p>Paragraph {i} says {body}</p>" for i in range(megabytes))
    path.write_text(f"<html><body>{paragraphs}</body></html>", encoding="utf-8")
    return path


def _gen_nine_mb_line_html(out: Path) -> Path:
    return _one_line_html(out / "nine_mb_line.html", 9)


def _gen_ten_mb_line_html(out: Path) -> Path:
    """libxml2 parses at most 10 MB of HTML in one piece; beyond, it used to drop the tail."""
    return _one_line_html(out / "ten_mb_line.html", 10)


def _gen_huge_text_node_html(out: Path) -> Path:
    """One paragraph of 11 MB: over libxml2's text limit, which stays on."""
    path = out / "huge_text_node.html"
    path.write_text("<html><body><p>" + "lorem ipsum dolor sit amet " * 410_000 + "</p></body></html>", encoding="utf-8")
    return path


def _gen_heading_storm_md(out: Path) -> Path:
    """500 chapters of one short line each. (Kept small: every short paragraph costs
    a language detection of ~4 ms, so 20,000 such chapters take minutes.)"""
    path = out / "heading_storm.md"
    path.write_text("".join(f"## H{i}\n\nWord {i}.\n\n" for i in range(500)), encoding="utf-8")
    return path


def _gen_truncated_docx(out: Path) -> Path:
    path = docx(out / "truncated.docx", "".join(wpara(PROSE) for _ in range(200)))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _gen_nul_in_docx(out: Path) -> Path:
    """A NUL character inside the XML: not well-formed."""
    return docx(out / "nul_in_xml.docx", wpara("Hello\x00 world."))


GENERATORS: dict[str, Callable[[Path], Path]] = {
    "xxe.html": _gen_xxe_html,
    "xxe.docx": _gen_xxe_docx,
    "xxe_dtd.epub": _gen_xxe_epub_parameter_entity,
    "zip_bomb.epub": _gen_zip_bomb_epub,
    "zip_bomb.docx": _gen_zip_bomb_docx,
    "lying_sizes.epub": _gen_lying_sizes_epub,
    "many_members.docx": _gen_many_members_docx,
    "deep.html": _gen_deep_html,
    "deep.epub": _gen_deep_epub,
    "deep.docx": _gen_deep_docx,
    "huge_attribute.html": _gen_huge_attribute_html,
    "huge_attribute.epub": _gen_huge_attribute_epub,
    "huge_attribute.docx": _gen_huge_attribute_docx,
    "ten_mb_line.md": _gen_ten_mb_line_md,
    "nine_mb_line.html": _gen_nine_mb_line_html,
    "ten_mb_line.html": _gen_ten_mb_line_html,
    "huge_text_node.html": _gen_huge_text_node_html,
    "heading_storm.md": _gen_heading_storm_md,
    "truncated.docx": _gen_truncated_docx,
    "nul_in_xml.docx": _gen_nul_in_docx,
}

_NO_SECRET = (SECRET,)
_TOO_DEEP = "nested too deeply"
_TOO_BIG = "10 MB safety limit"

#: file name -> what importing it must give
CASES: dict[str, Expect] = {
    # committed, files/
    "only_punctuation.txt": Expect("error", "no speakable text"),
    "only_punctuation.html": Expect("error", "no speakable text"),
    "only_numbers.txt": Expect("ok", contains=("42", "3.14 1,000 2024"), render=True),
    "only_numbers.md": Expect("ok", contains=("2 4 6 8 10.", "100, 200, 300!"), render=True),
    "mixed_scripts.txt": Expect(
        "ok", contains=("\u043c\u0438\u0440", "\u5e73\u548c", "\u0395\u03bb\u03bb\u03ac\u03b4\u03b1", "\U0001f600"), render=True
    ),
    # three NULs in 50 bytes: binary by the documented rule (a stray one or two are dropped)
    "nul_bytes.txt": Expect("error", "NUL bytes"),
    "nul_bytes.html": Expect("ok", contains=("Hello world, this paragraph has a NUL.",), absent=("\x00",)),
    "invalid_utf8.md": Expect("error", "not valid UTF-8"),
    "latin1.txt": Expect("ok", contains=("Caf\u00e9 d\u00e9j\u00e0 vu", "M\u00fcller")),
    "utf16_bom.txt": Expect("ok", contains=("UTF sixteen with a byte order mark.",)),
    "utf16_no_bom.txt": Expect("ok", contains=("UTF sixteen without a byte order mark.",)),
    "bogus_charset.html": Expect("ok", contains=("The charset is made up",)),
    "wrong_charset.html": Expect("ok", contains=("Declared UTF-8, saved as Latin-1: caf\u00e9 cr\u00e8me",)),
    "billion_laughs.html": Expect("ok", contains=("Safe words here.",), absent=("lollollol",), seconds=10),
    "unclosed_tags.html": Expect("ok", contains=("First paragraph never closed", "Second paragraph")),
    # generated: external entities are never resolved
    "xxe.html": Expect("ok", contains=("after, a normal paragraph",), absent=_NO_SECRET),
    "xxe.docx": Expect("error", "declares a DTD"),
    "xxe_dtd.epub": Expect("ok", contains=("Before after, a normal paragraph",), absent=_NO_SECRET),
    # archives that lie or explode
    "zip_bomb.epub": Expect("error", "zip bomb", seconds=15),
    "zip_bomb.docx": Expect("error", "zip bomb", seconds=15),
    "lying_sizes.epub": Expect("error", "zip bomb|damaged", seconds=15),
    "many_members.docx": Expect("error", "not a valid Word document"),
    "truncated.docx": Expect("error", "not a valid Word document"),
    "nul_in_xml.docx": Expect("error", "not a valid Word document"),
    # parser limits stay on and are reported, never a silently shortened book
    "deep.html": Expect("error", _TOO_DEEP),
    "deep.epub": Expect("error", _TOO_DEEP),
    "deep.docx": Expect("error", _TOO_DEEP),
    "huge_attribute.html": Expect("error", _TOO_BIG),
    "huge_attribute.epub": Expect("error", _TOO_BIG),
    "huge_attribute.docx": Expect("error", _TOO_BIG),
    "huge_text_node.html": Expect("error", _TOO_BIG),
    "ten_mb_line.html": Expect("error", _TOO_BIG),  # libxml2 parses at most 10 MB of HTML at once
    # big but legitimate
    "ten_mb_line.md": Expect("ok", contains=("alpha beta gamma delta",)),
    "nine_mb_line.html": Expect("ok", contains=("Paragraph 0 says lorem", "Paragraph 8 says lorem")),
    "heading_storm.md": Expect("ok", contains=("Word 0.", "Word 499.")),
}


def generate(out: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Write the generated cases (all, or ``names``) into ``out``; name -> path."""
    out.mkdir(parents=True, exist_ok=True)
    return {name: GENERATORS[name](out) for name in (names or list(GENERATORS))}


def case_path(name: str, generated: Path) -> Path:
    """Where case ``name`` lives: ``files/`` (committed) or ``generated`` (after :func:`generate`)."""
    return FILES / name if (FILES / name).is_file() else generated / name


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/hostile/make_corpus.py OUT_DIR")
    for name, path in generate(Path(sys.argv[1])).items():
        print(f"{path.stat().st_size:>12,d}  {path}")
