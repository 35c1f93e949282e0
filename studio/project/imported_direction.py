"""The direction an EPUB 3 gives in CSS Speech (:mod:`studio.text.formats.epub_speech`), put on
the project's sentences at import.

Why matched by paragraph text, in reading order: the speech pass and the importer
walk the same blocks, so a directed block's normalized text is the text of one
imported paragraph (or of a chapter's spoken title); the next paragraph with that
text after the last one matched is the one (a repeated "* * *" keeps its place).
A block that matches nothing is logged and skipped. Sentences the producer already
directed keep their direction (a re-import never overrides the producer), as the
book's pronunciations do not override the project's lexicon.

Per block: its rate on every sentence, the pause before on the first, the pause
after on the last, stressed words on the sentences that hold them (word indices of
the paragraph carried to the sentences by counting words: the segmenter cuts at
white space only).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Sequence

from studio.project.direction import RATE_RANGE, directions, set_direction
from studio.project.emphasis import set_emphasis
from studio.project.pauses import MAX_PAUSE_S, pauses_after, set_pause_after

if TYPE_CHECKING:
    from studio.project.store import Project
    from studio.project.records import SentenceRow
    from studio.text.raw import BlockSpeech

log = logging.getLogger(__name__)


def _paragraphs(project: Project) -> list[tuple[str, list[SentenceRow]]]:
    """Every paragraph (and spoken title) in reading order, with its text and sentences."""
    out: list[tuple[str, list[SentenceRow]]] = []
    where: tuple[int, int | None] | None = None
    for row in project.sentences():
        if (row.chapter, row.paragraph) != where or row.paragraph is None:
            out.append(("", []))
            where = (row.chapter, row.paragraph)
        out[-1][1].append(row)
    return [("".join(r.text + r.trailing for r in rows).strip(), rows) for _, rows in out]


def apply_speech(project: Project, marks: Sequence[BlockSpeech]) -> int:
    """Put ``marks`` on the matching paragraphs' sentences (see the module notes)."""
    paragraphs = _paragraphs(project)
    taken = set(directions(project.db)) | set(pauses_after(project.db))
    rates: dict[float, list[int]] = defaultdict(list)
    before: dict[float, list[int]] = defaultdict(list)
    after: dict[int, float] = {}
    stressed: dict[int, tuple[int, ...]] = {}
    at, missed = 0, 0
    for mark in marks:
        found = next((k for k in range(at, len(paragraphs)) if paragraphs[k][0] == mark.text), None)
        if found is None:
            missed += 1
            log.info("CSS Speech on %r: no such paragraph in the project; skipped", mark.text[:60])
            continue
        at = found + 1
        rows = [r for r in paragraphs[found][1] if r.id not in taken]
        if not rows:
            continue
        if mark.rate is not None:
            rates[round(min(max(mark.rate, RATE_RANGE[0]), RATE_RANGE[1]), 3)].extend(r.id for r in rows)
        if mark.pause_before and rows[0] is paragraphs[found][1][0]:
            before[min(mark.pause_before, MAX_PAUSE_S)].append(rows[0].id)
        if mark.pause_after is not None and rows[-1] is paragraphs[found][1][-1]:
            after[rows[-1].id] = min(mark.pause_after, MAX_PAUSE_S)
        stressed.update(_stressed(paragraphs[found][1], mark.stressed, taken))
    for value, ids in rates.items():
        set_direction(project.db, ids, rate=value)
    for value, ids in before.items():
        set_direction(project.db, ids, pause_before=value)
    for sid, value in after.items():
        set_pause_after(project.db, sid, value)
    if stressed:
        set_emphasis(project.db, stressed, stressed)
    touched = {i for ids in rates.values() for i in ids} | {i for ids in before.values() for i in ids}
    touched |= set(after) | set(stressed)
    log.info("CSS Speech: direction on %d sentence(s)%s", len(touched),
             f"; {missed} directed paragraph(s) not found" if missed else "")
    return len(touched)


def _stressed(rows: Sequence[SentenceRow], words: Sequence[int], taken: set[int]) -> dict[int, tuple[int, ...]]:
    """Paragraph word indices -> each sentence's own word indices."""
    out: dict[int, list[int]] = {}
    offset = 0
    wanted = set(words)
    for row in rows:
        count = len(row.text.split())
        mine = [w - offset for w in range(offset, offset + count) if w in wanted]
        if mine and row.id not in taken:
            out[row.id] = mine
        offset += count
    return {i: tuple(w) for i, w in out.items()}
