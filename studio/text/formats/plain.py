"""Plain text (``.txt``): blank-line paragraphs, heading lines as chapters, Gutenberg-style header fields.

Why so little parsing: a plain manuscript marks chapters only by lines that read
like headings ("Chapter 3", "III."), and hard-wraps its paragraphs; both are
recognised, everything else is kept as written.
"""

from __future__ import annotations

import re
from pathlib import Path

from studio.text.decode import read_text
from studio.text.mathematics.latex import spoken_pieces
from studio.text.raw import Block, RawBook, Reader, text_book, title_from_name
from studio.text.structure import build_chapters, is_chapter_heading

_HEADER_FIELD = re.compile(r"^(title|author|language)\s*:\s*(\S.{0,200})$", re.IGNORECASE)


def read_plain(path: Path, max_bytes: int) -> RawBook:
    """Read a .txt manuscript into raw chapters (``max_bytes``: checked by the importer already)."""
    text, encoding = read_text(path)
    meta = _header_fields(text)
    chapters, found_title = build_chapters(_said(_text_blocks(text), meta.get("language", "")),
                                           fallback_title=meta.get("title") or title_from_name(path))
    return text_book(path, chapters, found_title, meta, {"format": "text", "encoding": encoding})


READER = Reader("plain text", (".txt",), read_plain)


def _header_fields(text: str) -> dict[str, str]:
    """``Title:``/``Author:``/``Language:`` lines near the top (Project Gutenberg style)."""
    meta: dict[str, str] = {}
    for line in text[:20_000].split("\n")[:80]:
        m = _HEADER_FIELD.match(line.strip())
        if m:
            meta.setdefault(m.group(1).lower(), m.group(2).strip())
    return meta


def _text_blocks(text: str) -> list[Block]:
    """Blank-line separated blocks; chapter-heading lines become blocks of their own.

    Lines are joined into one paragraph (hard-wrapped text), unless a third or
    more of them are longer than any wrapped line would be (150+ characters):
    then each line is a paragraph, the way word processors export text.
    """
    blocks: list[Block] = []
    for group in _groups(text.split("\n")):
        long_lines = sum(1 for line in group if len(line) > 150)
        one_per_line = len(group) > 1 and long_lines * 3 >= len(group)
        current: list[str] = []
        for line in group:
            if len(group) > 1 and is_chapter_heading(line):
                if current:
                    blocks.append(Block("\n".join(current)))
                    current = []
                blocks.append(Block(line.strip()))
            elif one_per_line:
                blocks.append(Block(line))
            else:
                current.append(line)
        if current:
            blocks.append(Block("\n".join(current)))
    return blocks


def _said(blocks: list[Block], language: str) -> list[Block]:
    """The blocks with their LaTeX mathematics said (:mod:`studio.text.mathematics.latex`),
    a display equation a block of its own."""
    return [Block(piece, b.level) for b in blocks for piece, _display in spoken_pieces(b.text, language)]


def _groups(lines: list[str]) -> list[list[str]]:
    groups: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line)
        elif current:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups
