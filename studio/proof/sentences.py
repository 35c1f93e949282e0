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
from studio.project.proofs import NO_AUDIO, NOT_CHECKED, UNCHECKED, ProofRecord, results, save_result
from studio.project.store import Project
from studio.project.records import SentenceRow
from studio.proof.check import Checker, ProofItem
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
    """Listen to ``rows`` (rendered ones), store and return their verdicts."""
    out: dict[int, ProofRecord] = {}
    names = project_names(project)
    flagged = 0
    seconds = 0.0
    for start in range(0, len(rows), BATCH):
        if should_stop is not None and should_stop():
            _emit(progress, ProofProgress(len(out), len(rows), flagged, seconds, stopped=True))
            return out
        batch = rows[start:start + BATCH]
        items: list[ProofItem] = []
        heard_rows: list[tuple[SentenceRow, str]] = []
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
            items.append(ProofItem(np.asarray(audio, np.float32), entry.sample_rate, row.text, row.language,
                                   row.lexicon, spoken=row.spoken or row.text, names=names))
            heard_rows.append((row, row.checksum or entry.checksum))
            seconds += entry.duration
        for (row, checksum), record in zip(heard_rows, checker.check(items)):
            save_result(project.db, row.id, row.cache_key or "", checksum, record)
            out[row.id] = record
            flagged += record.needs_listening
        _emit(progress, ProofProgress(len(out), len(rows), flagged, seconds))
    return out


def _emit(progress: Callable[[ProofProgress], None] | None, value: ProofProgress) -> None:
    if progress is not None:
        progress(value)
