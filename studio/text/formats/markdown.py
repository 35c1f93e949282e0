"""Markdown (``.md``, ``.markdown``): headings as chapters, YAML front matter, inline syntax dropped.

Why Markdown is only lightly parsed: the goal is speech, not rendering. We need
headings (chapters), paragraphs, and the *words* - so emphasis markers, link
targets, code fences and HTML comments are removed, and everything else is kept
as written. All patterns are bounded so a pathological line cannot make a regex
backtrack for minutes.
"""

from __future__ import annotations

import re
from pathlib import Path

from studio.text.content import ALT, CODE, meaningful
from studio.text.decode import read_text
from studio.text.mathematics.latex import spoken_pieces
from studio.text.raw import Block, RawBook, Reader, text_book, title_from_name
from studio.text.structure import build_chapters

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_THEMATIC_BREAK = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-+*]|\d{1,9}[.)])\s+")
_BLOCKQUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")
_LINK_DEF = re.compile(r"^\s{0,3}\[[^\]\n]{1,200}\]:\s*\S")
_IMAGE = re.compile(r"!\[([^\]\n]{0,300})\]\([^)\n]{0,500}\)")
_LINK = re.compile(r"\[([^\]\n]{0,300})\]\([^)\n]{0,500}\)")
_REF_LINK = re.compile(r"\[([^\]\n]{0,300})\]\[[^\]\n]{0,100}\]")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]{1,500})>")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]{0,30}(?:\s[^<>\n]{0,300})?/?>")
_HTML_COMMENT = re.compile(r"<!--.{0,2000}?-->", re.DOTALL)
_EMPHASIS = re.compile(r"(?<![\w\\])[*_]{1,3}(?=\S)|(?<=\S)(?<!\\)[*_]{1,3}(?!\w)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>~|])")


def read_markdown(path: Path, max_bytes: int) -> RawBook:
    """Read a Markdown manuscript into raw chapters (``max_bytes``: checked by the importer already)."""
    text, encoding = read_text(path)
    text, meta = _front_matter(text)
    chapters, found_title = build_chapters(_markdown_blocks(text, meta.get("language", "")),
                                           fallback_title=meta.get("title") or title_from_name(path))
    extra = {k: v for k, v in meta.items() if k in ("rights", "publisher", "date")}  # the credits read them
    return text_book(path, chapters, found_title, meta, {"format": "markdown", "encoding": encoding, **extra})


READER = Reader("Markdown", (".md", ".markdown"), read_markdown)


def _front_matter(text: str) -> tuple[str, dict[str, str]]:
    """Strip YAML front matter (``---`` ... ``---``) and read title/author/language."""
    stripped = text.lstrip("\ufeff")
    if not stripped.startswith("---\n"):
        return text, {}
    lines = stripped.split("\n", 200)
    end = next((i for i in range(1, min(len(lines), 200)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return text, {}
    meta: dict[str, str] = {}
    key = ""
    for line in lines[1:end]:
        if line.startswith((" ", "\t", "-")) and key and line.strip().startswith("- "):
            item = _yaml_scalar(line.strip()[2:])
            meta[key] = f"{meta[key]}, {item}" if meta.get(key) else item
            continue
        if ":" in line and not line.startswith((" ", "\t")):
            raw_key, _, value = line.partition(":")
            key = {"lang": "language", "authors": "author", "creator": "author", "copyright": "rights",
                   "license": "rights", "licence": "rights"}.get(
                raw_key.strip().lower(), raw_key.strip().lower()
            )
            meta[key] = _yaml_scalar(value.strip())
    body = "\n".join(lines[end + 1 :])
    return body, {k: v for k, v in meta.items() if k in ("title", "author", "language", "rights", "publisher", "date")
                  and v}


def _yaml_scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _markdown_blocks(text: str, language: str = "") -> list[Block]:
    """Markdown -> blocks with heading levels (ATX ``#`` and setext underlines); code fences
    are blocks of code (:mod:`studio.text.content`), LaTeX mathematics is said in words
    (``language``: the one it is said in), a display equation as a block of its own."""
    text = _HTML_COMMENT.sub("", text)
    blocks: list[Block] = []
    current: list[str] = []
    code: list[str] = []
    in_fence = False

    def flush() -> None:
        whole = "\n".join(current).strip()
        if whole and not _IMAGE.sub("", whole).strip():  # a paragraph of images: their alt text
            blocks.extend(Block(m.group(1), kind=ALT) for m in _IMAGE.finditer(whole)
                          if meaningful(m.group(1), language))
            current.clear()
        if current:
            for piece, display in spoken_pieces("\n".join(current), language):
                cleaned = piece if display else clean_inline(piece)
                if cleaned.strip():
                    blocks.append(Block(cleaned))
            current.clear()

    for line in text.split("\n"):
        if _FENCE.match(line):
            flush()
            if in_fence and any(c.strip() for c in code):
                blocks.append(Block("\n".join(code), kind=CODE))
            code.clear()
            in_fence = not in_fence
            continue
        if in_fence:
            code.append(line)
            continue
        if not line.strip() or _LINK_DEF.match(line):
            flush()
            continue
        heading = _atx_heading(line)
        if heading:
            flush()
            level, title = heading
            blocks.append(Block(clean_inline(title), level=level))
            continue
        setext = _SETEXT.match(line)
        if setext and len(current) == 1 and not _LIST_ITEM.match(current[0]):
            level = 1 if setext.group(1)[0] == "=" else 2
            title = clean_inline(current[0])
            current.clear()
            blocks.append(Block(title, level=level))
            continue
        if _THEMATIC_BREAK.match(line):
            flush()  # scene break: a paragraph boundary, nothing to say
            continue
        line = _BLOCKQUOTE.sub("", line, count=1)
        item = _LIST_ITEM.match(line)
        if item:
            flush()
            line = line[item.end() :]
        current.append(line)
    flush()
    return blocks


def _atx_heading(line: str) -> tuple[int, str] | None:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith("#"):
        return None
    level = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[level:]
    if level > 6 or (rest and not rest[0].isspace()):
        return None
    title = rest.strip()
    body = title.rstrip("#")
    if body != title and (not body or body[-1].isspace()):
        title = body.strip()  # closing hashes: "## Title ##"
    return (level, title) if title else None


def clean_inline(text: str) -> str:
    """Remove Markdown inline syntax, keeping the words (and escaped characters)."""
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    text = text.replace("`", "")
    text = _EMPHASIS.sub("", text)
    return _ESCAPE.sub(r"\1", text)
