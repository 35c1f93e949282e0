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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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
    """A chapter's (or the book's) proof state as counts; :meth:`words` and :func:`book_words`
    say it, the same words in the Proof dock, ``studio proof``, the export report and the manifest."""

    sentences: int = 0
    passed: int = 0
    to_review: int = 0
    fine: int = 0
    unchecked: int = 0
    not_checked: int = 0
    no_audio: int = 0

    @property
    def heard(self) -> int:
        """Sentences whose current audio the recogniser heard (passed, flagged or marked fine)."""
        return self.passed + self.fine + self.to_review

    @property
    def resolved(self) -> bool:
        return self.to_review == 0

    @property
    def all_passed(self) -> bool:
        """Every sentence has audio, was heard, and nothing is left to review: the only "100 % passed"."""
        return self.sentences > 0 and self.heard == self.sentences and not self.to_review

    def words(self) -> str:
        """The chapter in a few words: "100 % passed" only when :attr:`all_passed`; otherwise what was
        heard and what was not ("4 to review; 21 of 80 heard and passed; 55 of 80 sentences have no audio yet")."""
        if self.all_passed:
            return "100 % passed"
        n = self.sentences
        no_audio = ("no audio yet" if self.no_audio == n else
                    f"{self.no_audio} of {n} {_plural(n, 'sentence')} {'has' if self.no_audio == 1 else 'have'} "
                    "no audio yet") if self.no_audio else ""
        if self.heard == 0:
            return "; ".join(p for p in ("not listened yet" if self.no_audio < n else "", no_audio) if p)
        parts = [f"{self.to_review} to review"] if self.to_review else []
        parts.append(f"{self.passed + self.fine} of {n} heard and passed")
        parts += [f"{k} not listened yet" for k in (self.unchecked,) if k]
        parts += [f"{k} could not be checked" for k in (self.not_checked,) if k]
        return "; ".join(parts + ([no_audio] if no_audio else []))

    def to_dict(self) -> dict[str, object]:
        """The counts as numbers, for ``manifest.json`` (no share that reads as clean while audio is missing)."""
        return {**self.__dict__, "heard": self.heard, "all_passed": self.all_passed}


def _plural(n: int, word: str) -> str:
    return word if n == 1 else f"{word}s"


def book_words(summaries: Mapping[int, ProofSummary]) -> str:
    """The book in one line: "184 to review in 6 chapters; 135 chapters not listened yet"; "100 % passed"
    only when every sentence of every chapter has audio and was heard, nothing left to review."""
    values = list(summaries.values())
    if not values:
        return "Not proof-listened yet"
    if all(s.all_passed for s in values):
        return f"All {sum(s.sentences for s in values)} sentences heard: 100 % passed"
    review = [s.to_review for s in values if s.to_review]
    unheard = sum(1 for s in values if s.heard == 0)
    partial = sum(1 for s in values if 0 < s.heard < s.sentences)
    no_audio = sum(s.no_audio for s in values)
    parts = [f"{sum(review)} to review in {len(review)} {_plural(len(review), 'chapter')}" if review
             else "nothing to review" if any(s.heard for s in values) else ""]
    if unheard:
        parts.append(f"{unheard} {_plural(unheard, 'chapter')} not listened yet")
    if partial:
        parts.append(f"{partial} {_plural(partial, 'chapter')} partly heard")
    if no_audio:
        parts.append(f"{no_audio} {_plural(no_audio, 'sentence')} {'has' if no_audio == 1 else 'have'} no audio yet")
    return "; ".join(p for p in parts if p)


def book_total(summaries: Iterable[ProofSummary]) -> ProofSummary:
    """Chapter summaries added up."""
    total = dict.fromkeys(ProofSummary.__dataclass_fields__, 0)
    for s in summaries:
        for key in total:
            total[key] += getattr(s, key)
    return ProofSummary(**total)


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
