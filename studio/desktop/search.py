"""Text search over the book, answered off the GUI thread from an index built once.

Why: filtering a 200k-word book by asking every tree row for its text froze the
window for seconds on the first search. The index holds every chapter title,
paragraph and sentence lowered once; a search is one pass over plain strings in
a task thread, and the tree then only looks its rows up in the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.desktop.snapshot import BookSnapshot

#: row keys: ("c", chapter), ("p", chapter, paragraph index or None), ("s", sentence id)
RowKey = tuple


@dataclass(frozen=True)
class SearchResult:
    """``rows``: the rows whose text contains the needle; ``shown``: those and the rows
    above them (a sentence's paragraph and chapter), so the tree can show the answer
    without searching every chapter's children for a match on the GUI thread."""

    needle: str
    rows: frozenset[RowKey]
    shown: frozenset[RowKey] = frozenset()
    #: the rows with a match under them (their expander is all the tree needs to know)
    above: frozenset[RowKey] = frozenset()


class SearchIndex:
    """Lowered texts of one version of the book, each with the rows above it."""

    def __init__(self, snapshot: BookSnapshot) -> None:
        self.entries: list[tuple[RowKey, tuple[RowKey, ...], str]] = []
        for c in snapshot.chapters:
            chapter = ("c", c.index)
            self.entries.append((chapter, (), c.display_name.lower()))
            for p in c.paragraphs:
                para = ("p", c.index, p.index)
                self.entries.append((para, (chapter,), p.text.lower()))
                # a sentence is found by what it says too: its spoken form ("Doctor" for "Dr.")
                self.entries.extend((("s", s.id), (chapter, para),
                                     (s.text if s.spoken in ("", s.text) else f"{s.text}\n{s.spoken}").lower())
                                    for s in p.sentences)

    def find(self, needle: str) -> SearchResult:
        wanted = needle.strip().lower()
        rows: set[RowKey] = set()
        above: set[RowKey] = set()
        for key, parents, text in self.entries:
            if wanted in text:
                rows.add(key)
                above.update(parents)
        return SearchResult(needle, frozenset(rows), frozenset(rows | above), frozenset(above))
