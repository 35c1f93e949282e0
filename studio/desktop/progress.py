"""The book's progress at a glance: sentences rendered and remaining per chapter and
in total, with the rendering time left.

Why computed from the tree's counts and not from the project: the tree already
keeps every sentence's state current (render deltas, edits, takes), so the
figures cost one pass over cached per-chapter counts and never touch SQLite on
the GUI thread. The time left is the remaining sentences times the measured
synthesis seconds per sentence -- the same figure the queue's overall ETA uses,
so the two never disagree.

Proof-listening is a later job kind; ``proofed`` is its hook: given, it counts a
chapter's proofed sentences and the view shows the column.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from studio.desktop.snapshot import BookSnapshot


@dataclass(frozen=True)
class ChapterProgress:
    index: int
    label: str
    included: bool
    sentences: int
    rendered: int
    failed: int
    proofed: int | None
    time_left: float | None  # seconds of rendering left; None until a speed is measured

    @property
    def remaining(self) -> int:
        return self.sentences - self.rendered


@dataclass(frozen=True)
class BookProgress:
    chapters: tuple[ChapterProgress, ...]
    sentences: int  # the book's: included chapters only
    rendered: int
    failed: int
    proofed: int | None
    time_left: float | None

    @property
    def remaining(self) -> int:
        return self.sentences - self.rendered

    @property
    def fraction(self) -> float:
        return self.rendered / self.sentences if self.sentences else 1.0


def book_progress(snapshot: BookSnapshot, counts: Callable[[int], Mapping[str, int]],
                  seconds_per_sentence: float | None, proofed: Callable[[int], int] | None = None) -> BookProgress:
    """Per-chapter and total figures; ``counts(chapter)`` gives sentence counts per state."""
    rows = []
    for c in snapshot.chapters:
        n = counts(c.index)
        total = sum(n.values())
        done = n.get("done", 0)
        left = None if seconds_per_sentence is None else (total - done) * seconds_per_sentence
        rows.append(ChapterProgress(c.index, c.label, c.included, total, done, n.get("failed", 0),
                                    proofed(c.index) if proofed is not None else None, left))
    book = [r for r in rows if r.included] or rows
    known = [r.time_left for r in book]
    return BookProgress(
        tuple(rows), sum(r.sentences for r in book), sum(r.rendered for r in book), sum(r.failed for r in book),
        None if proofed is None else sum(r.proofed or 0 for r in book),
        None if any(t is None for t in known) else sum(t or 0.0 for t in known),
    )
