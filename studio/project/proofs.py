"""Proof-listening verdicts stored per sentence, tied to the audio they judged.

Why tied to the cache key *and* the checksum: a verdict is about one recording.
A re-render (new key: edited text, other voice or settings) or a new take (same
key, other checksum) makes the old verdict stale, so that sentence reads
"unchecked" until it is listened to again. "Mark as fine" is stored on the
verdict row: the producer vouched for *that* audio, so it survives reopening the
project but not a new take.

The verdicts themselves are made by :mod:`studio.proof` (a layer above); this
module only owns the table, so it holds plain values (flags as small dicts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from studio.core.errors import ProjectError

if TYPE_CHECKING:
    from studio.project.db import ProjectDb
    from studio.project.store import Project
    from studio.project.records import SentenceRow

PASSED, FLAGGED, NOT_CHECKED, NO_AUDIO, UNCHECKED = "passed", "flagged", "not checked", "no audio", "unchecked"

@dataclass(frozen=True)
class ProofFlag:
    """One thing to listen to: ``kind`` (missing, added, repeated, substituted, garbled, cut,
    silence, clipping, noise), ``severity`` 1 (worth a listen) .. 3 (certainly wrong)."""

    kind: str
    severity: int
    reason: str
    expected: str = ""
    heard: str = ""
    start: float | None = None
    end: float | None = None

    def to_dict(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


@dataclass(frozen=True)
class ProofRecord:
    """A sentence's verdict. ``status``: passed, flagged, not checked (``note`` says why),
    no audio; ``fine``: the producer marked a flagged sentence as fine."""

    status: str
    severity: int = 0
    score: float = 0.0
    heard: str = ""
    flags: tuple[ProofFlag, ...] = field(default_factory=tuple)
    note: str = ""
    model: str = ""
    fine: bool = False
    cache_key: str = ""
    checksum: str = ""

    @property
    def needs_listening(self) -> bool:
        return self.status == FLAGGED and not self.fine

    @property
    def reasons(self) -> list[str]:
        return [f.reason for f in self.flags]


def save_result(db: ProjectDb, sentence_id: int, cache_key: str, checksum: str, record: ProofRecord) -> None:
    """Store (replace) a sentence's verdict for the audio ``cache_key``/``checksum``."""
    flags = json.dumps([f.to_dict() for f in record.flags], ensure_ascii=False)
    with db.write() as conn:
        conn.execute(
            "INSERT INTO proof_results (sentence_id, cache_key, checksum, status, severity, score, heard, flags,"
            " note, model, fine, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, datetime('now'))"
            " ON CONFLICT(sentence_id) DO UPDATE SET cache_key = excluded.cache_key, checksum = excluded.checksum,"
            " status = excluded.status, severity = excluded.severity, score = excluded.score, heard = excluded.heard,"
            " flags = excluded.flags, note = excluded.note, model = excluded.model, fine = 0,"
            " checked_at = excluded.checked_at",
            (sentence_id, cache_key, checksum, record.status, record.severity, record.score, record.heard, flags,
             record.note, record.model))


def _record(row: tuple) -> ProofRecord:
    flags = tuple(ProofFlag(**f) for f in json.loads(row[6] or "[]"))
    return ProofRecord(status=row[2], severity=int(row[3]), score=float(row[4]), heard=row[5], flags=flags,
                       note=row[7], model=row[8], fine=bool(row[9]), cache_key=row[0], checksum=row[1])


def results(db: ProjectDb, rows: Iterable[SentenceRow]) -> dict[int, ProofRecord]:
    """Each sentence's *current* verdict: one for the audio it has now, else ``unchecked`` or ``no audio``."""
    stored = {r[0]: r[1:] for r in db.read().execute(
        "SELECT sentence_id, cache_key, checksum, status, severity, score, heard, flags, note, model, fine"
        " FROM proof_results")}
    out: dict[int, ProofRecord] = {}
    for row in rows:
        if row.state != "done" or not row.cache_key:
            out[row.id] = ProofRecord(NO_AUDIO, note=row.reason or row.state)
            continue
        got = stored.get(row.id)
        if got is None or got[0] != row.cache_key or got[1] != row.checksum:
            out[row.id] = ProofRecord(UNCHECKED)
        else:
            out[row.id] = _record(got)
    return out


def mark_fine(db: ProjectDb, sentence_id: int, fine: bool = True) -> None:
    """The producer listened and vouches for the sentence's current audio (or takes that back)."""
    with db.write() as conn:
        cur = conn.execute("UPDATE proof_results SET fine = ? WHERE sentence_id = ?", (int(fine), sentence_id))
        if cur.rowcount != 1:
            raise ProjectError(f"sentence {sentence_id} has not been proof-listened yet")


@dataclass(frozen=True)
class ProofSummary:
    """A chapter's (or the book's) proof state, as the tree, the CLI and the export show it."""

    sentences: int = 0
    passed: int = 0
    to_review: int = 0
    fine: int = 0
    unchecked: int = 0
    not_checked: int = 0
    no_audio: int = 0

    @property
    def share_passed(self) -> float:
        """Passed (or marked fine) out of the sentences that have been checked."""
        checked = self.passed + self.fine + self.to_review
        return (self.passed + self.fine) / checked if checked else 0.0

    @property
    def resolved(self) -> bool:
        return self.to_review == 0

    def line(self) -> str:
        if self.passed + self.fine + self.to_review == 0:
            return "not proof-listened"
        text = f"{100 * self.share_passed:.1f} % passed, {self.to_review} to review"
        extra = [f"{n} {what}" for n, what in ((self.unchecked, "unchecked"), (self.not_checked, "not checked"),
                                               (self.no_audio, "without audio")) if n]
        return text + (f" ({', '.join(extra)})" if extra else "")

    def to_dict(self) -> dict[str, object]:
        return {**self.__dict__, "share_passed": round(self.share_passed, 4)}


def summarize(records: Iterable[ProofRecord]) -> ProofSummary:
    counts = dict.fromkeys(("sentences", "passed", "to_review", "fine", "unchecked", "not_checked", "no_audio"), 0)
    for rec in records:
        counts["sentences"] += 1
        if rec.status == FLAGGED:
            counts["fine" if rec.fine else "to_review"] += 1
        else:
            key = {PASSED: "passed", UNCHECKED: "unchecked", NOT_CHECKED: "not_checked"}.get(rec.status, "no_audio")
            counts[key] += 1
    return ProofSummary(**counts)


def chapter_summaries(project: Project, chapters: Iterable[int] | None = None) -> dict[int, ProofSummary]:
    """Per chapter (0-based index): its proof summary."""
    rows = project.sentences(chapters)
    recs = results(project.db, rows)
    by: dict[int, list[ProofRecord]] = {}
    for row in rows:
        if row.skipped:
            continue
        by.setdefault(row.chapter, []).append(recs[row.id])
    return {ch: summarize(rs) for ch, rs in sorted(by.items())}
