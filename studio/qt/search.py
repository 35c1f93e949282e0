"""Text search over the book, answered off the GUI thread from an index built once.

Why: filtering a 200k-word book by asking every tree row for its text froze the
window for seconds on the first search. The index holds every chapter title,
paragraph and sentence lowered once; a search is one pass over plain strings in
a task thread, and the tree then only looks its rows up in the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.qt.snapshot import BookSnapshot

#: row keys: ("c", chapter), ("p", chapter, paragraph index or None), ("s", sentence id)
RowKey = tuple


@dataclass(frozen=True)
class SearchResult:
    needle: str
    rows: frozenset[RowKey]


class SearchIndex:
    """Lowered texts of one version of the book."""

    def __init__(self, snapshot: BookSnapshot) -> None:
        self.entries: list[tuple[RowKey, str]] = []
        for c in snapshot.chapters:
            self.entries.append((("c", c.index), c.display_name.lower()))
            for p in c.paragraphs:
                self.entries.append((("p", c.index, p.index), p.text.lower()))
                self.entries.extend((("s", s.id), s.text.lower()) for s in p.sentences)

    def find(self, needle: str) -> SearchResult:
        wanted = needle.strip().lower()
        return SearchResult(needle, frozenset(k for k, text in self.entries if wanted in text))
