"""Hostile-input guards shared by the EPUB, DOCX and HTML readers.

Why: manuscripts come from anywhere. An EPUB/DOCX is a ZIP of XML, which brings two
classic attacks - XML external entities (reading local files or the network into
the "text") and zip bombs (a few KB that inflate to gigabytes). XML here is parsed
with entity resolution, DTD loading and network access all off, and archive
members are size-checked from the central directory *and* while streaming.
"""

from __future__ import annotations

import logging
import zipfile
import zlib
from pathlib import Path

from lxml import etree

from studio.core.errors import ManuscriptError

log = logging.getLogger(__name__)

#: members that inflate more than this (and are big) are treated as bombs
MAX_COMPRESSION_RATIO = 200
_RATIO_MIN_SIZE = 1_000_000
_CHUNK = 1 << 16


def xml_parser() -> etree.XMLParser:
    """An lxml parser that never resolves entities, loads DTDs or touches the network."""
    return etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


class ParserLimit(ValueError):
    """A document hit one of libxml2's safety limits (nesting depth, a huge text or
    attribute). Those limits stay on (``huge_tree=False``: they are what keeps a
    hostile file from eating memory), but the lenient HTML parser only *logs* hitting
    them and drops the rest of the document -- which would import a book with text
    silently missing, or end in a misleading "no speakable text". So the log is
    checked, and this is raised instead; the importer turns it into a
    ManuscriptError carrying ``str(self)``.
    """


def parser_limit_reason(message: str) -> str | None:
    """The user-facing reason for a libxml2 limit message, or None if it is not one."""
    if "Excessive depth" in message:
        return "the document is nested too deeply (more than 256 levels of elements) to import safely"
    if "Resource limit exceeded" in message or "XML_PARSE_HUGE" in message:
        return ("the document is over the parser's 10 MB safety limit (an HTML file, or one text or "
                "attribute, that large cannot be imported safely); split it into smaller files")
    return None


def check_parser_limits(parser: etree._FeedParser) -> None:
    """Raise :class:`ParserLimit` when the last parse with ``parser`` hit a limit."""
    for entry in parser.error_log:
        reason = parser_limit_reason(entry.message)
        if reason:
            raise ParserLimit(reason)


def html_parser() -> etree.HTMLParser:
    """lxml's HTML parser, also without network access."""
    return etree.HTMLParser(no_network=True, remove_comments=True, remove_pis=True, huge_tree=False)


def parse_xml(data: bytes, path: str | Path, what: str) -> etree._Element:
    """Parse XML safely or raise ManuscriptError naming ``what`` was broken."""
    try:
        root = etree.fromstring(data, xml_parser())
    except etree.XMLSyntaxError as exc:
        raise ManuscriptError(path, f"{what} is not valid XML ({_first_line(exc)})") from None
    if root is None:
        raise ManuscriptError(path, f"{what} is empty")
    return root


def parse_markup(data: bytes) -> etree._Element | None:
    """Parse an (X)HTML document: strict safe XML first, lenient HTML if that fails.

    EPUB content should be XHTML, but real files carry ``&nbsp;`` without a DTD,
    unclosed tags and the like; the HTML parser copes and also resolves nothing
    external. Returns ``None`` for a document with nothing in it.
    """
    try:
        return etree.fromstring(data, xml_parser())
    except etree.XMLSyntaxError:
        pass
    text = data.decode("utf-8", errors="replace")
    if text.lstrip().startswith("<?xml"):
        text = text[text.find("?>") + 2 :]
    parser = html_parser()
    try:
        root = etree.fromstring(text, parser)
    except (etree.XMLSyntaxError, etree.ParserError, ValueError):
        check_parser_limits(parser)
        return None
    check_parser_limits(parser)  # raises ParserLimit rather than lose text silently
    return root


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


class SafeZip:
    """A read-only ZIP that refuses bombs and oversized members.

    ``max_member`` caps any member we read, ``max_total`` the sum of all declared
    uncompressed sizes (checked on open, before anything is inflated).
    """

    def __init__(self, path: str | Path, *, max_member: int, max_total: int, kind: str) -> None:
        self.path = path
        self.kind = kind
        self.max_member = max_member
        try:
            self.zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, EOFError, RuntimeError, zlib.error):
            raise ManuscriptError(path, f"this is not a valid {kind} file (not a ZIP archive, or damaged)") from None
        except OSError as exc:
            raise ManuscriptError(path, f"cannot read the {kind} file ({exc.strerror or exc})") from None
        total = 0
        for info in self.zf.infolist():
            total += info.file_size
            ratio = info.file_size / max(1, info.compress_size)
            if info.file_size > _RATIO_MIN_SIZE and ratio > MAX_COMPRESSION_RATIO:
                self.close()
                raise ManuscriptError(path, f"refusing a suspicious {kind}: {info.filename!r} inflates {ratio:.0f}x (zip bomb?)")
        if total > max_total:
            self.close()
            raise ManuscriptError(
                path, f"refusing this {kind}: it unpacks to {total / 1e6:.0f} MB (limit {max_total / 1e6:.0f} MB; zip bomb?)"
            )
        self._names = {info.filename for info in self.zf.infolist()}

    def __enter__(self) -> "SafeZip":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.zf.close()

    def has(self, name: str) -> bool:
        return name in self._names

    def names(self) -> list[str]:
        return [i.filename for i in self.zf.infolist()]

    def read(self, name: str) -> bytes:
        """Read one member, never inflating more than ``max_member`` bytes."""
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise ManuscriptError(self.path, f"the {self.kind} is missing {name!r}") from None
        if info.flag_bits & 0x1:
            raise ManuscriptError(self.path, f"the {self.kind} is encrypted ({name!r}); it cannot be imported")
        if info.file_size > self.max_member:
            raise ManuscriptError(self.path, f"{name!r} is too large ({info.file_size / 1e6:.0f} MB)")
        chunks = []
        size = 0
        try:
            with self.zf.open(info) as fh:
                while True:
                    chunk = fh.read(_CHUNK)
                    if not chunk:
                        break
                    size += len(chunk)
                    if size > self.max_member:
                        raise ManuscriptError(self.path, f"{name!r} inflates beyond its declared size (zip bomb?)")
                    chunks.append(chunk)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError, NotImplementedError) as exc:
            raise ManuscriptError(self.path, f"the {self.kind} is damaged: cannot read {name!r} ({exc})") from None
        return b"".join(chunks)
