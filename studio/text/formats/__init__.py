"""Manuscript formats: one module per format, each with a :class:`~studio.text.raw.Reader`.

Why a registry instead of a chain of suffix tests in the importer: a format is
added or changed in its own module (its suffixes, its reader) and the importer,
the desktop's file dialog and the empty window's hint all learn of it from
:data:`READERS`. The readers are independent of each other (an import-linter
contract); what they share -- XHTML blocks, chapter building, decoding, archive
safety -- lives beside them in :mod:`studio.text`. Every reader here imports light
(pdfminer and python-docx are imported when a file of theirs is read).
"""

from __future__ import annotations

from studio.text.formats import docx, epub, html, markdown, pdf, plain
from studio.text.raw import Reader

#: every format the importer reads, in the order a file dialog lists them
READERS: tuple[Reader, ...] = (plain.READER, markdown.READER, html.READER, epub.READER, docx.READER, pdf.READER)

#: ``".epub"`` -> its reader (suffixes lower-case, with the dot)
BY_SUFFIX: dict[str, Reader] = {suffix: reader for reader in READERS for suffix in reader.suffixes}
