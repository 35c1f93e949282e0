"""Which kinds of content a project reads aloud: notes, images, tables, code (the producer's choice).

Why here: the importer keeps every note, caption, alt text, table and code block as
paragraphs of a kind (:mod:`studio.text.content`), a note twice (in place and at the end of
its chapter) and a table twice (its rows and its summary); these settings decide which of
them the voice says, the rest left silent and listed by the audit. It is computed where a
sentence's rendition is (:mod:`studio.project.rendition`), so a change re-renders exactly
the sentences it touches and needs no re-import.
"""

from __future__ import annotations

from studio.text import content

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
    ("notes", "end"): {content.NOTE_IN_PLACE}, ("notes", "inline"): {content.NOTE},
    ("notes", "skip"): {content.NOTE, content.NOTE_IN_PLACE},
    ("images", "captions"): {content.ALT}, ("images", "all"): set(), ("images", "none"): {content.ALT, content.CAPTION},
    ("tables", "rows"): {content.TABLE_SUMMARY}, ("tables", "summary"): {content.TABLE},
    ("tables", "skip"): {content.TABLE, content.TABLE_SUMMARY},
    ("code", "skip"): {content.CODE}, ("code", "read"): set(),
}


def check(name: str, value: str) -> str | None:
    """Why ``value`` is no choice of the setting ``name`` (None when it is one)."""
    if value in CHOICES[name]:
        return None
    return f"unknown choice '{value}' for {name} (one of: {', '.join(CHOICES[name])})"


def silent_kinds(notes: str, images: str, tables: str, code: str) -> frozenset[str]:
    """The kinds of paragraph left silent by these choices (:mod:`studio.text.content`)."""
    chosen = {"notes": notes, "images": images, "tables": tables, "code": code}
    return frozenset().union(*(_SILENT[(name, value)] for name, value in chosen.items()))


def what_is_silent(kind: str) -> str:
    """How the audit names a silent paragraph's kind ("notes (in place)")."""
    return content.KINDS.get(kind, kind)
