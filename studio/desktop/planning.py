"""What a render request would cover, worked out before it is queued.

Why apart from the session: the confirmation for "Render Book" and the queue's
priority rule both need plain arithmetic over the snapshot (which chapters, how
many sentences left, how long) and nothing else; kept here they are testable
without a window or a worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from studio.project.duration import book_seconds, sentence_seconds
from studio.desktop.snapshot import BookSnapshot, ChapterNode

#: a selection up to this many sentences in one paragraph counts as "one paragraph"
SMALL_SELECTION = 60


@dataclass(frozen=True)
class BookPlan:
    """The whole-book render as the confirmation shows it.

    ``to_render``: sentences not rendered yet in the included chapters; ``audio_s``:
    the book's length, its chapters' estimates as the tree shows them added up
    (:func:`studio.project.duration.book_seconds`, what ``studio inspect`` prints);
    ``left_s``: the speech still to synthesize (no pauses);
    ``estimated_s``: synthesis time for it (None when nothing was measured yet:
    no render of this project and no benchmark of the preset it renders with);
    ``excluded``: titles of the chapters the book render leaves out.
    """

    chapters: int
    sentences: int
    to_render: int
    audio_s: float
    estimated_s: float | None
    excluded: tuple[str, ...]
    basis: str = ""
    left_s: float = 0.0


def book_chapters(snapshot: BookSnapshot) -> list[ChapterNode]:
    """Chapters a book render covers: the included ones (all, if none is)."""
    return [c for c in snapshot.chapters if c.included] or list(snapshot.chapters)


def plan_book(snapshot: BookSnapshot, seconds_per_sentence: float | None,
              bench_x_real_time: float | None) -> BookPlan:
    """Count what the book render would do and estimate its time.

    The estimate prefers what this session measured (seconds per sentence), then
    the benchmark of the active preset (spoken length over its real-time factor).
    """
    body = book_chapters(snapshot)
    included = {c.index for c in body}
    left = [s for c in body for s in c.sentences if s.state != "done"]
    timing = snapshot.timing
    # what synthesis has to produce: the left sentences' predicted speech (pauses are not synthesized)
    speech = sum(sentence_seconds(s, timing) for s in left) if timing is not None else 0.0
    estimate: float | None = None
    basis = ""
    if seconds_per_sentence:
        estimate, basis = seconds_per_sentence * len(left), "at this project's measured speed"
    elif bench_x_real_time:
        estimate, basis = speech / bench_x_real_time, "from the benchmark of the preset it renders with"
    return BookPlan(
        chapters=len(body), sentences=sum(len(c.sentences) for c in body), to_render=len(left),
        audio_s=book_seconds((c.estimated_s, c.included) for c in snapshot.chapters),
        estimated_s=estimate, excluded=tuple(c.display_name for c in snapshot.chapters if c.index not in included),
        basis=basis, left_s=speech,
    )


def is_small_selection(snapshot: BookSnapshot, ids: Sequence[int]) -> bool:
    """One sentence, or sentences of one paragraph: what a producer waits to hear."""
    if not ids:
        return False
    if len(ids) == 1:
        return True
    if len(ids) > SMALL_SELECTION:
        return False
    wanted = set(ids)
    places = {(s.chapter, s.paragraph) for c in snapshot.chapters for s in c.sentences if s.id in wanted}
    return len(places) == 1
