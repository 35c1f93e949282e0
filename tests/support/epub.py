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


M = 'xmlns="http://www.w3.org/1998/Math/MathML"'


def technical_book(path: Path) -> Path:
    """An EPUB 3 of a first course in linear algebra: MathML (fractions, powers, roots, fences,
    a matrix, function application) with placeholder alttext, a footnote, a figure, an image
    whose alt text is a placeholder, a table and a code block."""
    ch1 = (
        "<h1>Vector Spaces</h1>"
        f'<p>When <math {M} alttext="Alternative text not available"><mi>A</mi></math> is square, both '
        f'<math {M} alttext="Alternative text not available"><mi>C</mi><mo>(</mo><mi>A</mi><mo>)</mo></math> and '
        f'<math {M}><mi>R</mi><mo>&#x2061;</mo><mo>(</mo><mi>A</mi><mo>)</mo></math> are subsets of '
        f'<math {M}><msup><mi>&#x2102;</mi><mi>n</mi></msup></math>.'
        '<a epub:type="noteref" href="#fn1">1</a></p>'
        f'<p>The half is <math {M}><mfrac><mi>a</mi><mi>b</mi></mfrac></math>, the area is '
        f'<math {M}><mi>&#x3c0;</mi><msup><mi>r</mi><mn>2</mn></msup></math>, the side is '
        f'<math {M}><msqrt><mi>x</mi></msqrt></math> and its cube root is '
        f'<math {M}><mroot><mi>y</mi><mn>3</mn></mroot></math>; the distance is '
        f'<math {M}><mrow><mo>|</mo><mi>x</mi><mo>&#x2212;</mo><mi>y</mi><mo>|</mo></mrow></math>.</p>'
        f'<p>The matrix is</p><math {M} display="block"><mi>M</mi><mo>=</mo><mrow><mo>[</mo><mtable>'
        "<mtr><mtd><mn>1</mn></mtd><mtd><mn>2</mn></mtd></mtr><mtr><mtd><mn>3</mn></mtd><mtd><mn>4</mn></mtd></mtr>"
        "</mtable><mo>]</mo></mrow></math><p>and it is invertible.</p>"
        '<figure><img src="plot.png" alt="Alternative text not available"/>'
        "<figcaption>Figure 3: The column space of M.</figcaption></figure>"
        '<p><img src="graph.png" alt="A graph with three vertices"/></p>'
        "<table><tr><th>Name</th><th>Rank</th></tr><tr><td>M</td><td>2</td></tr><tr><td>N</td><td>1</td></tr></table>"
        "<pre>rank(M) == 2</pre>"
        "<p>That is all for vector spaces.</p>"
        '<aside epub:type="footnote" id="fn1"><p>1. Subsets of the same space, that is.</p></aside>'
    )
    ch2 = "<h1>Determinants</h1><p>Every square matrix has a determinant.</p>"
    nav = xhtml('<nav epub:type="toc"><ol><li><a href="c1.xhtml">Vector Spaces</a></li>'
                '<li><a href="c2.xhtml">Determinants</a></li></ol></nav>')
    items = [("nav", "nav.xhtml", XHTML), ("c1", "c1.xhtml", XHTML), ("c2", "c2.xhtml", XHTML)]
    meta = "<dc:title>A First Course</dc:title><dc:language>en</dc:language>"
    package = opf(items, ["c1", "c2"], meta=meta).replace('href="nav.xhtml" media-type',
                                                          'href="nav.xhtml" properties="nav" media-type')
    return make_epub(path, {"OEBPS/content.opf": package, "OEBPS/nav.xhtml": nav,
                            "OEBPS/c1.xhtml": xhtml(ch1), "OEBPS/c2.xhtml": xhtml(ch2)})
