"""Content that is not running prose -- notes, figure captions, images' alt text, tables, code --
kept by the importer as paragraphs of a kind, so the project decides whether they are said.

Why kept and marked instead of dropped: a producer chooses (a narrator reads footnotes at
the end of the chapter or leaves them out; reads a figure's caption but not its alt text),
and a choice changed later must not need a re-import. So each note is kept twice -- in
place, after the paragraph that points at it, and at the end of its chapter, introduced
as "Note 3." -- and each table twice, row by row with its headers and summarised; the
project's choices (:data:`CHOICES`, kept in its settings) say which copy is said, the other
is left silent and listed by the audit. A change of choice needs no re-import: it renders
again only the passages it touches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from studio.core.language import language_family
from studio.text.raw import Block

PROSE = ""
NOTE = "note"  # a note at the end of the chapter that points at it (or where it stands, when nothing does)
NOTE_IN_PLACE = "note-in-place"  # the same note right after the paragraph that points at it
CAPTION = "caption"  # a figure's or a table's caption
ALT = "alt"  # an image's alternative text
TABLE = "table"  # a table's row, read with its headers
TABLE_SUMMARY = "table-summary"  # what a table holds, in one sentence
CODE = "code"  # a block of program code

#: every kind, with the words the audit and the settings use for it
KINDS: dict[str, str] = {
    NOTE: "notes (at the end of the chapter)",
    NOTE_IN_PLACE: "notes (in place)",
    CAPTION: "captions",
    ALT: "images' alt text",
    TABLE: "table rows",
    TABLE_SUMMARY: "table summaries",
    CODE: "code blocks",
}

#: setting -> its choices, the default first, with what each means
CHOICES: dict[str, dict[str, str]] = {
    "notes": {"end": "read at the end of the chapter, introduced as 'Note 3.'",
              "inline": "read in place, after the paragraph that points at them", "skip": "left out"},
    "images": {"captions": "captions read, alt text left out (listed by the audit)",
               "all": "captions and alt text read", "none": "captions and alt text left out"},
    "tables": {"rows": "read row by row with their headers", "summary": "summarised in one sentence",
               "skip": "left out"},
    "code": {"skip": "left out", "read": "read as written"},
}
DEFAULTS = {name: next(iter(choices)) for name, choices in CHOICES.items()}
_SILENT = {
    ("notes", "end"): {NOTE_IN_PLACE}, ("notes", "inline"): {NOTE},
    ("notes", "skip"): {NOTE, NOTE_IN_PLACE},
    ("images", "captions"): {ALT}, ("images", "all"): set(), ("images", "none"): {ALT, CAPTION},
    ("tables", "rows"): {TABLE_SUMMARY}, ("tables", "summary"): {TABLE},
    ("tables", "skip"): {TABLE, TABLE_SUMMARY},
    ("code", "skip"): {CODE}, ("code", "read"): set(),
}


def check(name: str, value: str) -> str | None:
    """Why ``value`` is no choice of the setting ``name`` (None when it is one)."""
    if value in CHOICES[name]:
        return None
    return f"unknown choice '{value}' for {name} (one of: {', '.join(CHOICES[name])})"


def silent_kinds(notes: str, images: str, tables: str, code: str) -> frozenset[str]:
    """The kinds of paragraph left silent by these choices: the project's (``ProjectSettings``), applied
    where a sentence's rendition is worked out (:mod:`studio.project.rendition`)."""
    chosen = {"notes": notes, "images": images, "tables": tables, "code": code}
    return frozenset().union(*(_SILENT[(name, value)] for name, value in chosen.items()))


def what_is_silent(kind: str) -> str:
    """How the audit names a silent paragraph's kind ("notes (in place)")."""
    return KINDS.get(kind, kind)


#: how a note, a table and its summary are introduced, per language family (English where none)
_WORDS: dict[str, dict[str, str]] = {
    "en": {"note": "Note {n}.", "table": "A table of {rows} rows and {cols} columns: {names}.",
           "row": "Row {n}: {cells}.", "pair": "{name}: {value}"},
    "fr": {"note": "Note {n}.", "table": "Un tableau de {rows} lignes et {cols} colonnes : {names}.",
           "row": "Ligne {n} : {cells}.", "pair": "{name} : {value}"},
    "de": {"note": "Anmerkung {n}.", "table": "Eine Tabelle mit {rows} Zeilen und {cols} Spalten: {names}.",
           "row": "Zeile {n}: {cells}.", "pair": "{name}: {value}"},
    "es": {"note": "Nota {n}.", "table": "Una tabla de {rows} filas y {cols} columnas: {names}.",
           "row": "Fila {n}: {cells}.", "pair": "{name}: {value}"},
    "it": {"note": "Nota {n}.", "table": "Una tabella di {rows} righe e {cols} colonne: {names}.",
           "row": "Riga {n}: {cells}.", "pair": "{name}: {value}"},
}
#: a note's own number or mark at its start ("1.", "[2]", "*"), said by the introduction instead
_NOTE_MARK = re.compile(r"^\s*[\[(]?(?:\d{1,4}|[a-z]|[*\u2020\u2021\u00a7])[\])]?[.:]?\s+")
_BACK = re.compile(r"\s*[\u21a9\u2191\u2934\u21b5]\ufe0e?\s*$")


_FILE_NAME = re.compile(r"^\S+\.(?:png|jpe?g|gif|svg|webp|bmp|tiff?)$", re.IGNORECASE)


def meaningful(alt: str, language: str) -> bool:
    """Whether an alt text says something: not a placeholder ("Alternative text not available",
    "image", "equation"; the reading table of ``language`` lists them, and English's), not a file name."""
    from studio.text.mathematics.speech import rules  # the reading tables list the placeholders

    said = " ".join(re.sub(r"[^\w\s/]", " ", alt.casefold()).split())
    if not said or _FILE_NAME.match(alt.strip()):
        return False
    placeholders = set(rules(language)["placeholders"]) | set(rules("en")["placeholders"])
    return said not in placeholders and "not available" not in said and "unavailable" not in said


def words(language: str) -> dict[str, str]:
    return _WORDS.get(language_family(language) or "en", _WORDS["en"])


def place_notes(chapters: Sequence[list[Block]], labels: dict[str, str], language: str) -> list[list[Block]]:
    """Each chapter's blocks with its notes moved: a copy in place after the first block that points
    at the note (``refs``), and one at the end of that chapter; a note nothing points at stays
    where it is, once as each. ``labels``: a note's id -> the mark the text points at it with."""
    notes: dict[str, list[Block]] = {}
    for blocks in chapters:
        for b in blocks:
            if b.kind == NOTE and b.note:
                notes.setdefault(b.note, []).append(b)
    referenced = {r for blocks in chapters for b in blocks if b.kind != NOTE for r in b.refs if r in notes}
    intro = words(language)["note"]
    out: list[list[Block]] = []
    placed: set[str] = set()
    for blocks in chapters:
        kept: list[Block] = []
        ends: list[Block] = []
        count = 0
        for b in blocks:
            if b.kind == NOTE and b.note in referenced:
                continue  # said where it is pointed at
            if b.kind == NOTE:
                count += 1
                said = _introduced(notes.get(b.note, [b]), b, labels.get(b.note, ""), count, intro)
                kept.extend([_as(said, NOTE_IN_PLACE), said])
                continue
            kept.append(b)
            for ref in b.refs:
                if ref in referenced and ref not in placed:
                    placed.add(ref)
                    count += 1
                    body = notes[ref]
                    for n, part in enumerate(body):
                        said = _introduced(body, part, labels.get(ref, ""), count, intro) if n == 0 else part
                        kept.append(_as(said, NOTE_IN_PLACE))
                        ends.append(said)
        out.append(kept + ends)
    return out


def _introduced(body: list[Block], part: Block, label: str, count: int, intro: str) -> Block:
    """The note's block with "Note 3." before it (only its first block has it)."""
    if body and part is not body[0]:
        return part
    mark = label.strip() if label.strip().isalnum() else str(count)
    text = _BACK.sub("", _NOTE_MARK.sub("", part.text, count=1))
    return Block(f"{intro.format(n=mark)} {text}", part.level, part.ids, part.types, NOTE, note=part.note)


def _as(block: Block, kind: str) -> Block:
    return Block(block.text, block.level, (), block.types, kind, note=block.note)


def table_blocks(rows: list[list[str]], header_rows: int, language: str) -> list[Block]:
    """A table said row by row with its headers ("Row 1: Name: Ada; Age: 36."), and summarised."""
    w = words(language)
    body = [r for r in rows[header_rows:] if any(c.strip() for c in r)]
    names = [c for c in rows[header_rows - 1]] if header_rows else []
    cols = max((len(r) for r in rows), default=0)
    out = []
    for n, row in enumerate(body, 1):
        cells = [w["pair"].format(name=names[i], value=c) if i < len(names) and names[i].strip() else c
                 for i, c in enumerate(row) if c.strip()]
        out.append(Block(w["row"].format(n=n, cells="; ".join(cells)), kind=TABLE))
    summary = w["table"].format(rows=len(body), cols=cols, names=", ".join(n for n in names if n.strip()))
    summary = summary.replace(": .", ".").replace(" : .", ".")
    out.append(Block(summary, kind=TABLE_SUMMARY))
    return out
