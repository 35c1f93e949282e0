#!/usr/bin/env python3
"""Build ``resources/sample.epub`` from ``resources/sample.md``.

Why a script (and why by hand with zipfile): the EPUB must hold exactly the same
book as the Markdown so tests can compare the two imports, and it must be
reproducible byte for byte, so it is generated - with fixed timestamps - rather
than edited. It deliberately does *not* use the studio's own Markdown reader, so
a bug there cannot hide by being copied into the fixture.

It is an EPUB 3 with both a nav document and an EPUB 2 NCX, one XHTML file per
chapter. Run: ``python resources/make_sample_epub.py``.
"""

from __future__ import annotations

import html
import logging
import re
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "sample.md"
TARGET = HERE / "sample.epub"
FIXED_TIME = (2024, 1, 1, 0, 0, 0)
log = logging.getLogger("make_sample_epub")
BOOK_ID = "urn:uuid:6b1f3c2e-4d5a-4e8b-9c7d-2f0e1a3b5c6d"


def parse(md: str) -> tuple[dict[str, str], list[tuple[str, list[str]]]]:
    """Front matter, then ``## `` chapters made of blank-line separated paragraphs."""
    meta: dict[str, str] = {}
    _, front, body = md.split("---\n", 2)
    for line in front.splitlines():
        key, _, value = line.partition(":")
        meta[key.strip()] = value.strip()
    chapters: list[tuple[str, list[str]]] = []
    for block in re.split(r"\n\s*\n", body):
        block = " ".join(block.split())
        if not block or block.startswith("# "):
            continue
        if block.startswith("## "):
            chapters.append((block[3:].strip(), []))
        else:
            chapters[-1][1].append(block)
    return meta, chapters


def inline(text: str) -> str:
    """Escape, and turn Markdown ``*emphasis*`` into ``<em>``."""
    return re.sub(r"\*([^*]+)\*", r"<em>\1</em>", html.escape(text, quote=False))


def chapter_xhtml(lang: str, title: str, paragraphs: list[str]) -> str:
    body = "\n".join(f"    <p>{inline(p)}</p>" for p in paragraphs)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="{lang}" lang="{lang}">
<head>
  <meta charset="utf-8"/>
  <title>{html.escape(title)}</title>
</head>
<body>
  <section epub:type="chapter">
    <h2>{html.escape(title)}</h2>
{body}
  </section>
</body>
</html>
"""


def build(meta: dict[str, str], chapters: list[tuple[str, list[str]]]) -> dict[str, str]:
    title, author, lang = (html.escape(meta[k]) for k in ("title", "author", "language"))
    files = {f"EPUB/chapter{i}.xhtml": chapter_xhtml(lang, t, ps) for i, (t, ps) in enumerate(chapters, 1)}
    items = "\n".join(
        f'    <item id="chapter{i}" href="chapter{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(1, len(chapters) + 1)
    )
    spine = "\n".join(f'    <itemref idref="chapter{i}"/>' for i in range(1, len(chapters) + 1))
    files["EPUB/package.opf"] = f"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="bookid" xml:lang="{lang}">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="bookid">{BOOK_ID}</dc:identifier>
    <dc:title id="title">{title}</dc:title>
    <meta refines="#title" property="title-type">main</meta>
    <dc:creator id="author">{author}</dc:creator>
    <meta refines="#author" property="role" scheme="marc:relators">aut</meta>
    <dc:language>{lang}</dc:language>
    <meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
{items}
  </manifest>
  <spine toc="ncx">
{spine}
  </spine>
</package>
"""
    links = "\n".join(
        f'        <li><a href="chapter{i}.xhtml">{html.escape(t)}</a></li>' for i, (t, _) in enumerate(chapters, 1)
    )
    files["EPUB/nav.xhtml"] = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="{lang}" lang="{lang}">
<head>
  <meta charset="utf-8"/>
  <title>Contents</title>
</head>
<body>
  <nav epub:type="toc" id="toc">
    <h1>Contents</h1>
    <ol>
{links}
    </ol>
  </nav>
</body>
</html>
"""
    points = "\n".join(
        f"""    <navPoint id="np{i}" playOrder="{i}">
      <navLabel><text>{html.escape(t)}</text></navLabel>
      <content src="chapter{i}.xhtml"/>
    </navPoint>"""
        for i, (t, _) in enumerate(chapters, 1)
    )
    files["EPUB/toc.ncx"] = f"""<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
  <head>
    <meta name="dtb:uid" content="{BOOK_ID}"/>
    <meta name="dtb:depth" content="1"/>
  </head>
  <docTitle><text>{title}</text></docTitle>
  <navMap>
{points}
  </navMap>
</ncx>
"""
    return files


def write_epub(target: Path, files: dict[str, str]) -> None:
    """``mimetype`` first and stored, as the OCF spec requires; fixed timestamps."""
    container = """<?xml version="1.0" encoding="UTF-8"?>
<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0">
  <rootfiles>
    <rootfile full-path="EPUB/package.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"""
    entries = [("mimetype", "application/epub+zip", zipfile.ZIP_STORED), ("META-INF/container.xml", container, zipfile.ZIP_DEFLATED)]
    entries += [(name, files[name], zipfile.ZIP_DEFLATED) for name in sorted(files)]
    with zipfile.ZipFile(target, "w") as zf:
        for name, text, method in entries:
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = method
            info.external_attr = 0o644 << 16
            zf.writestr(info, text.encode("utf-8"))


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    target = Path(argv[1]) if len(argv) > 1 else TARGET
    meta, chapters = parse(SOURCE.read_text(encoding="utf-8"))
    write_epub(target, build(meta, chapters))
    log.info("wrote %s (%d chapters)", target, len(chapters))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
