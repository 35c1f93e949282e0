"""Proof-listen a project's rendered sentences and store each verdict with the audio it judged.

Why chapter by chapter: the listener packs a batch's sentences into 28 s windows,
so a chapter at a time keeps windows full while progress and stopping stay fine
grained enough for the desktop's background task (it checks ``should_stop``
between batches of :data:`BATCH` sentences).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from studio.core.language import language_family
from studio.project.proofs import FLAGGED, NO_AUDIO, NOT_CHECKED, PASSED, UNCHECKED, ProofRecord, results, save_result
from studio.project.store import Project
from studio.project.records import SentenceRow
from studio.proof.check import Checker, Pending, ProofItem
from studio.proof.names import project_names

log = logging.getLogger(__name__)

BATCH = 48


@dataclass(frozen=True)
class ProofProgress:
    """Sentences checked so far out of those that needed it (a frozen value for Qt signals)."""

    done: int
    total: int
    flagged: int
    audio_seconds: float = 0.0
    stopped: bool = False
    chapter: int | None = None  # the chapter being heard (0-based)
    chapter_done: int = 0  # ... its sentences checked so far, of ``chapter_total``
    chapter_total: int = 0

    def words(self) -> str:
        """The status line: "Proof-listening chapter 3: 40 %"."""
        if self.chapter is not None and self.chapter_total:
            return f"Proof-listening chapter {self.chapter + 1}: {100 * self.chapter_done // self.chapter_total} %"
        return f"Proof-listening: {100 * self.done // max(1, self.total)} %"


def to_check(project: Project, rows: Iterable[SentenceRow], *, again: bool = False) -> list[SentenceRow]:
    """The rows whose current audio has no verdict yet (all rendered rows when ``again``)."""
    rows = list(rows)
    current = results(project.db, rows)
    return [r for r in rows if r.state == "done" and r.cache_key and (again or current[r.id].status == UNCHECKED)]


def _unheard(row: SentenceRow) -> ProofRecord | None:
    """A verdict without listening: left silent, or read through another language's rules on purpose."""
    if row.skipped:
        return ProofRecord(NO_AUDIO, note="left silent by the project's policy for unvoiced languages")
    if row.said and language_family(row.said) != language_family(row.language):
        return ProofRecord(NOT_CHECKED, note=f"read with {row.said} rules by the project's choice; "
                                             "the recogniser cannot judge it")
    return None


def check_rows(project: Project, checker: Checker, rows: list[SentenceRow], *,
               progress: Callable[[ProofProgress], None] | None = None,
               should_stop: Callable[[], bool] | None = None) -> dict[int, ProofRecord]:
    """Listen to ``rows`` (rendered ones), store and return their verdicts.

    Why each batch is begun before the one before it is judged: the next batch's first pass and
    this one's judging hold Python's lock on one core while the recogniser's workers hear windows
    on both; one batch after the other left a core idle at each batch's end (measured in
    ``docs/proof-listening-benchmark.md``).
    """
    out: dict[int, ProofRecord] = {}
    names = project_names(project)
    chapters: dict[int, list[SentenceRow]] = {}
    for row in rows:
        chapters.setdefault(row.chapter, []).append(row)
    # a batch holds one chapter's sentences, so the progress can say which chapter is heard
    batches = [(c, mine[i:i + BATCH], i + BATCH, len(mine)) for c, mine in chapters.items()
               for i in range(0, len(mine), BATCH)]
    tally = _Tally()
    waiting: _Batch | None = None
    stopped = False
    for chapter, batch, upto, of in batches:
        if should_stop is not None and should_stop():
            stopped = True
            break
        items: list[ProofItem] = []
        heard_rows: list[tuple[SentenceRow, str, list[int]]] = []
        seconds = 0.0
        for row in batch:
            entry = project.cache_entry(row.cache_key or "")
            audio = project.cache.load(entry) if entry is not None else None
            record = _unheard(row)
            if audio is None or entry is None:
                record = ProofRecord(NO_AUDIO, note="its audio is missing or damaged; render it again")
            if record is not None:
                out[row.id] = record
                if entry is not None:
                    save_result(project.db, row.id, entry.key, row.checksum or entry.checksum, record)
                continue
            first = len(items)
            items += _items(project, row, entry.key, np.asarray(audio, np.float32), entry.sample_rate, names)
            heard_rows.append((row, row.checksum or entry.checksum, list(range(first, len(items)))))
            seconds += entry.duration
        begun = _Batch(chapter, min(upto, of), of, items, heard_rows, seconds, checker.begin(items))
        if waiting is not None:
            _judge(project, checker, waiting, out, tally, len(rows), progress)
        waiting = begun
    if waiting is not None:
        _judge(project, checker, waiting, out, tally, len(rows), progress)
    if stopped:
        _emit(progress, ProofProgress(len(out), len(rows), tally.flagged, tally.seconds, stopped=True))
    return out


@dataclass
class _Tally:
    flagged: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class _Batch:
    """One batch's sentences on their way: being heard, to be judged and stored."""

    chapter: int
    upto: int
    of: int
    items: list[ProofItem]
    rows: list[tuple[SentenceRow, str, list[int]]]  # each row, its audio's checksum, its items
    seconds: float  # of audio
    pending: Pending


def _judge(project: Project, checker: Checker, batch: _Batch, out: dict[int, ProofRecord], tally: _Tally,
           total: int, progress: Callable[[ProofProgress], None] | None) -> None:
    """A batch's verdicts, each sentence judged as soon as its hearing is final, stored and counted."""
    records: dict[int, ProofRecord] = {}

    def judge(indices: list[int], heard: list) -> None:
        for i, record in zip(indices, checker.verdicts([batch.items[i] for i in indices], heard)):
            records[i] = record

    batch.pending.heard(judge)
    for row, checksum, mine in batch.rows:
        record = records[mine[0]] if len(mine) == 1 else joined([records[i] for i in mine],
                                                              [batch.items[i].language for i in mine])
        save_result(project.db, row.id, row.cache_key or "", checksum, record)
        out[row.id] = record
        tally.flagged += record.needs_listening
    tally.seconds += batch.seconds
    _emit(progress, ProofProgress(len(out), total, tally.flagged, tally.seconds, chapter=batch.chapter,
                                  chapter_done=batch.upto, chapter_total=batch.of))


def _items(project: Project, row: SentenceRow, key: str, audio: np.ndarray, rate: int,
           names: frozenset[str]) -> list[ProofItem]:
    """What to listen to for one sentence: the whole of it, or -- a cast sentence with a
    character voiced in another language -- each part in the language it was said in."""
    parts = project.cache.parts_of(key, audio.size) if row.cast else None
    if not parts:
        return [ProofItem(audio, rate, row.text, row.language, row.lexicon, spoken=row.spoken or row.text,
                          names=names)]
    # cut in the middle of each join's pause: a part cut at its faded edge would sound cut short
    cuts = [0] + [(a["end"] + b["start"]) // 2 for a, b in zip(parts, parts[1:])] + [audio.size]
    return [ProofItem(audio[cuts[i]:cuts[i + 1]], rate, p["printed"], p["language"], row.lexicon, spoken=p["spoken"],
                      names=names) for i, p in enumerate(parts)]


def joined(records: list[ProofRecord], languages: list[str]) -> ProofRecord:
    """One sentence's verdict from its parts' (heard one by one, each in its language):
    flagged if a part is, not checked if a part could not be, else passed."""
    flags = tuple(f for r in records for f in r.flags)
    statuses = {r.status for r in records}
    status = FLAGGED if FLAGGED in statuses else NOT_CHECKED if NOT_CHECKED in statuses else PASSED
    heard = [r for r in records if r.status in (FLAGGED, PASSED)]
    notes = [r.note for r in records if r.note and r.note != "nothing to say"]
    said = ", ".join(dict.fromkeys(languages))
    return ProofRecord(status, max((r.severity for r in records), default=0), min((r.score for r in heard), default=0.0),
                       " / ".join(r.heard for r in records if r.heard), flags,
                       "; ".join(notes) or f"heard part by part ({said})", records[0].model)


def _emit(progress: Callable[[ProofProgress], None] | None, value: ProofProgress) -> None:
    if progress is not None:
        progress(value)
