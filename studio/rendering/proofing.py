"""Proof-listening a project, with automatic new takes for synthesis glitches.

Why retries live here and not in :mod:`studio.proof`: a new take is a render
(:func:`studio.rendering.render.render_project`, the one render loop) of the sentences
whose audio was forgotten, exactly what the desktop's "Regenerate (new take)"
does: the take being replaced is kept (:mod:`studio.project.takes`), the new one
is listened to, and the better-scoring of the two stays chosen. Only glitches a
new synthesis can fix are retried (garbled, cut, repeated, noise ...); a word
substituted or a name mispronounced is the text's or the lexicon's business, and
the producer decides.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from studio.engine.base import Engine
from studio.project.proofs import FLAGGED, ProofRecord, ProofSummary, chapter_summaries, results, save_result
from studio.project.store import Project
from studio.proof.check import Checker
from studio.proof.judge import GLITCH_KINDS
from studio.proof.sentences import ProofProgress, check_rows, to_check

log = logging.getLogger(__name__)

#: at most this many new takes per glitchy sentence
MAX_RETRIES = 2


@dataclass(frozen=True)
class ProofRun:
    """What a proof job did: sentences checked, new takes made and kept, per-chapter summaries."""

    checked: int
    retried: int
    improved: int
    summaries: dict[int, ProofSummary] = field(default_factory=dict)
    stopped: bool = False


def is_glitch(record: ProofRecord) -> bool:
    """Flagged only for faults a new synthesis can fix (not a substituted word)."""
    return record.status == FLAGGED and bool(record.flags) and all(f.kind in GLITCH_KINDS for f in record.flags)


def _better(new: ProofRecord, old: ProofRecord) -> bool:
    return (new.needs_listening, new.severity, -new.score) < (old.needs_listening, old.severity, -old.score)


def proof_project(project: Project, checker: Checker, *, chapters: set[int] | None = None, again: bool = False,
                  retry: int = MAX_RETRIES, engine: Engine | None = None, engine_for: Any = None,
                  batch_size: int = 1, progress: Callable[[ProofProgress], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> ProofRun:
    """Listen to every rendered sentence of ``chapters`` without a current verdict (all when ``again``).

    With an ``engine`` and ``retry`` > 0, glitchy sentences get up to ``retry`` new takes.
    """
    rows = to_check(project, project.sentences(chapters), again=again)
    verdicts = check_rows(project, checker, rows, progress=progress, should_stop=should_stop)
    stopped = len(verdicts) < len(rows)
    retried = improved = 0
    if engine is not None and not stopped:
        retried, improved = retry_glitches(project, checker, verdicts, engine, retry=retry, engine_for=engine_for,
                                           batch_size=batch_size, should_stop=should_stop)
    return ProofRun(len(verdicts), retried, improved, chapter_summaries(project, chapters), stopped)


def retry_glitches(project: Project, checker: Checker, verdicts: dict[int, ProofRecord], engine: Engine, *,
                   retry: int = MAX_RETRIES, engine_for: Any = None, batch_size: int = 1,
                   should_stop: Callable[[], bool] | None = None) -> tuple[int, int]:
    """Up to ``retry`` new takes of each glitchy sentence in ``verdicts`` (updated): ``(retried, improved)``."""
    retried = improved = 0
    for _ in range(max(0, min(retry, MAX_RETRIES))):
        glitchy = [sid for sid, rec in verdicts.items() if is_glitch(rec)]
        if not glitchy or (should_stop is not None and should_stop()):
            break
        retried += len(glitchy)
        improved += _new_takes(project, checker, glitchy, verdicts, engine, engine_for, batch_size)
    return retried, improved


@dataclass(frozen=True)
class ChapterHeard:
    """A chapter heard back while the book renders: its summary and how many sentences were listened to."""

    chapter: int
    summary: ProofSummary | None
    checked: int


def overlaps(device: str) -> bool:
    """Whether a chapter is heard while the next renders: with the recogniser on a GPU or four cores
    and more. On two cores both would only slow each other down, so the chapter is heard first."""
    return device == "cuda" or (os.cpu_count() or 1) >= 4


class ChapterProofer:
    """Hears each chapter back as soon as its render ends (the render loop's ``on_chapter``).

    Why at most one chapter behind: the next chapter's render is not reported finished before the
    chapter before it has its verdicts, so a producer reads a chapter's proof minutes after its
    render, never only after the book. With ``overlap`` the chapter is heard on a thread of its own
    while the next one renders; without, before the next one starts.
    """

    def __init__(self, project: Project, checker: Callable[[], Checker], *, overlap: bool,
                 heard: Callable[[ChapterHeard], None] | None = None,
                 rendered: Callable[[int], None] | None = None,
                 should_stop: Callable[[], bool] | None = None,
                 progress: Callable[[ProofProgress], None] | None = None) -> None:
        self.project = project
        self.checker = checker  # loads the recogniser on first use (a chapter with nothing rendered needs none)
        self.overlap = overlap
        self.heard = heard
        self.rendered = rendered  # told once a chapter counts as rendered (the one before it heard)
        self.should_stop = should_stop
        self.progress = progress  # each batch of the chapter being heard ("Proof-listening chapter 3: 40 %")
        self.verdicts: dict[int, ProofRecord] = {}
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._closed = False

    def _stopping(self) -> bool:
        return self._closed or (self.should_stop is not None and self.should_stop())

    def close(self) -> None:
        """Stop hearing at the next batch and wait for it (the render failed or was interrupted)."""
        self._closed = True
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._error = None

    def __call__(self, chapter: int) -> None:
        self.wait()
        if self.rendered is not None:
            self.rendered(chapter)
        if not self.overlap:
            self._hear(chapter)
        else:
            self._thread = threading.Thread(target=self._hear, args=(chapter,), name=f"proof-chapter-{chapter}",
                                            daemon=True)
            self._thread.start()
        self._raise()

    def wait(self) -> None:
        """Until the chapter being heard has its verdicts (its error raised here)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._raise()

    def _raise(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _hear(self, chapter: int) -> None:
        try:
            rows = to_check(self.project, self.project.sentences({chapter}))
            if self.progress is not None and rows:  # said before the recogniser loads (seconds, the first time)
                self.progress(ProofProgress(0, len(rows), 0, chapter=chapter, chapter_total=len(rows)))
            found = check_rows(self.project, self.checker(), rows, should_stop=self._stopping,
                               progress=self.progress) if rows else {}
            self.verdicts.update(found)
            if self.heard is not None:
                summary = chapter_summaries(self.project, {chapter}).get(chapter)
                self.heard(ChapterHeard(chapter, summary, len(found)))
        except BaseException as exc:  # noqa: BLE001 - raised in the render's thread at the next chapter
            self._error = exc


def _new_takes(project: Project, checker: Checker, ids: list[int], verdicts: dict[int, ProofRecord],
               engine: Engine, engine_for: Any, batch_size: int) -> int:
    """One new take of each sentence; keep whichever take scores better. Returns how many improved."""
    from studio.rendering.render import render_project

    before = {r.id: r for r in project.sentences() if r.id in set(ids)}
    old_takes: dict[int, int | None] = {}
    for sid, row in before.items():
        if row.state != "done" or not row.cache_key:
            continue
        old_takes[sid] = project.takes.keep_current(row.cache_key)
        project.invalidate_key(row.cache_key)
    render_project(project, engine, sentence_ids=list(old_takes), engine_for=engine_for, batch_size=batch_size)
    rows = [r for r in project.sentences() if r.id in old_takes and r.state == "done"]
    fresh = check_rows(project, checker, rows)
    improved = 0
    for row in rows:
        new, old = fresh[row.id], verdicts[row.id]
        if _better(new, old):
            verdicts[row.id] = new
            improved += 1
            log.info("sentence %d: the new take is better (%s -> %s)", row.id, old.reasons, new.reasons or "passed")
            continue
        take = old_takes.get(row.id)
        if take is None:
            verdicts[row.id] = new
            continue
        chosen = project.takes.choose(row.id, take)  # back to the old take; the new one stays listed
        save_result(project.db, row.id, chosen.key, chosen.checksum, old)
        log.info("sentence %d: the new take is no better; the previous one stays chosen", row.id)
    return improved


def flagged_rows(project: Project, chapters: set[int] | None = None) -> list[tuple[Any, ProofRecord]]:
    """``(sentence row, verdict)`` of every sentence that needs listening, worst first."""
    rows = project.sentences(chapters)
    current = results(project.db, rows)
    out = [(r, current[r.id]) for r in rows if current[r.id].needs_listening]
    out.sort(key=lambda pair: (-pair[1].severity, pair[1].score, pair[0].order))
    return out
