"""Hand-built EPUB files for the import tests (no tests in here)."""

from __future__ import annotations

import zipfile
from pathlib import Path

PROSE = (
    "The harbour was quiet that morning and the boats rocked gently against the wall. "
    "Nobody in the village could remember a calmer sea at this time of the year."
)


CONTAINER = """<?xml version="1.0"?>
<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""


def xhtml(body: str, title: str = "t") -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" '
        f'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>{title}</title></head><body>{body}</body></html>'
    )


def make_epub(path: Path, files: dict[str, str | bytes], *, container: bool = True) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        if container:
            zf.writestr("META-INF/container.xml", CONTAINER)
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def opf(items: list[tuple[str, str, str]], spine: list[str], *, version: str = "3.0", meta: str = "", toc: str = "ncx") -> str:
    manifest = "".join(f'<item id="{i}" href="{h}" media-type="{m}"/>' for i, h, m in items)
    refs = "".join(f'<itemref idref="{s}"/>' if not s.startswith("!") else f'<itemref idref="{s[1:]}" linear="no"/>' for s in spine)
    return (
        f'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" xmlns:opf="http://www.idpf.org/2007/opf" '
        f'version="{version}" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="id">x</dc:identifier>{meta}</metadata><manifest>{manifest}</manifest>'
        f'<spine toc="{toc}">{refs}</spine></package>'
    )


XHTML = "application/xhtml+xml"


def epub3_single_file(path: Path) -> Path:
    """EPUB 3: nav with fragment links into one file, front matter before the first anchor."""
    nav = xhtml(
        '<nav epub:type="toc"><h1>Contents</h1><ol>'
        '<li><a href="book.xhtml#p1">Part One</a><ol><li><a href="book.xhtml#c1">One</a></li>'
        '<li><a href="book.xhtml#c2">Two</a></li></ol></li></ol></nav>'
        '<nav epub:type="landmarks" hidden=""><ol><li><a href="book.xhtml#c1">Start</a></li></ol></nav>'
    )
    body = (
        '<section epub:type="titlepage"><h1>One File</h1><p>By Someone Else</p></section>'
        '<section id="p1"><h1>Part One</h1>'
        f'<section id="c1"><h2>One</h2><p>{PROSE}</p><p>Page<span epub:type="pagebreak" id="pg7">7</span> break.</p></section>'
        f'<section id="c2"><h2>Two</h2><aside epub:type="footnote">A footnote.</aside><p>{PROSE}</p></section></section>'
    )
    items = [("nav", "nav.xhtml", XHTML), ("book", "book.xhtml", XHTML)]
    package = opf(items, ["nav", "book"], meta="<dc:title>One File</dc:title><dc:language>en-GB</dc:language>").replace(
        'href="nav.xhtml" media-type', 'href="nav.xhtml" properties="nav" media-type'
    )
    return make_epub(path, {"OEBPS/content.opf": package, "OEBPS/nav.xhtml": nav, "OEBPS/book.xhtml": xhtml(body)})


def novel(path: Path, rights: str, author: str = "Herman Melville") -> Path:
    """A two-chapter EPUB 3 with ``rights`` as its dc:rights."""
    body = "<p>Call me Ishmael. Some years ago I went to sea.</p><p>It is a way I have of driving off the spleen.</p>"
    items = [("c1", "c1.xhtml", XHTML), ("c2", "c2.xhtml", XHTML)]
    meta = (f"<dc:title>The Whale</dc:title><dc:creator>{author}</dc:creator><dc:language>en</dc:language>"
            f"<dc:date>1851</dc:date><dc:rights>{rights}</dc:rights>")
    return make_epub(path, {"OEBPS/content.opf": opf(items, ["c1", "c2"], meta=meta),
                            "OEBPS/c1.xhtml": xhtml(f"<h1>Loomings</h1>{body}"),
                            "OEBPS/c2.xhtml": xhtml(f"<h1>The Carpet-Bag</h1>{body}")})
