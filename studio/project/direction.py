"""Direction for one sentence (or every sentence of a paragraph): a speaking rate, a
pause before it and emphasis on chosen words (:mod:`studio.project.emphasis`), beside
the pause after it (:mod:`studio.project.pauses`).

Why the rate enters the cache key and the pauses do not: the Piper voice takes one
length scale per call, so a sentence read at 0.9x is other audio -- its key carries
its own synthesis settings (the project's with the length scale divided by the
rate), and exactly the directed sentences render again; the others keep theirs.
A pause is silence between clips: export, the estimates and the waveform lay it
out, nothing renders again.

Emphasis enters the key the same way (the stressed words are part of the sentence's
synthesis settings).

The rate is relative to the project's speed (1.0 = the project's), so a later
change of the project's speed carries the directed sentences along.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

from studio.core.errors import ProjectError
from studio.engine.base import SynthesisSettings
from studio.project.emphasis import emphases, spoken_indices, stressed_words
from studio.project.pauses import MAX_PAUSE_S

if TYPE_CHECKING:
    from studio.project.db import ProjectDb

#: relative rates a producer may give one sentence
RATE_RANGE = (0.7, 1.4)

@dataclass(frozen=True)
class Direction:
    rate: float | None = None  # relative to the project's speed
    pause_before: float | None = None
    #: stressed words, by index into the sentence's text split at white space (studio.project.emphasis)
    emphasis: tuple[int, ...] = ()

    def synthesis(self, base: SynthesisSettings, text: str = "", spoken: str = "") -> SynthesisSettings:
        """The settings this sentence is spoken with (the project's unless it has a rate or
        emphasis); ``text`` and ``spoken`` carry the stressed words over to the spoken form."""
        own = base
        if self.rate is not None and self.rate != 1.0:
            own = replace(own, length_scale=round(base.length_scale / self.rate, 4))
        if self.emphasis:
            own = replace(own, emphasis=spoken_indices(text, spoken or text, self.emphasis))
        return own

    def audible(self) -> Direction | None:
        """The part of it a sentence's audio depends on (a rate, stressed words), None when
        neither: a pause before is laid out by export, nothing renders again."""
        if self.rate in (None, 1.0) and not self.emphasis:
            return None
        return replace(self, pause_before=None)

    def words(self, text: str = "") -> str:
        """How the tree says it: "0.9x, 0.50 s before, stress: said"."""
        parts = [f"{self.rate:g}x"] if self.rate not in (None, 1.0) else []
        parts += [f"{self.pause_before:.2f} s before"] if self.pause_before else []
        if self.emphasis:
            parts.append("stress: " + (", ".join(stressed_words(text, self.emphasis)) if text
                                       else f"{len(self.emphasis)} word(s)"))
        return ", ".join(parts)


def directions(db: ProjectDb) -> dict[int, Direction]:
    """Every directed sentence (id -> its direction): rate, pause before, emphasis."""
    rows = db.read().execute("SELECT sentence_id, rate, pause_before FROM sentence_direction")
    out = {int(i): Direction(r, b) for i, r, b in rows if r is not None or b is not None}
    for sid, words in emphases(db).items():
        out[sid] = replace(out.get(sid, Direction()), emphasis=words)
    return out


_KEEP = object()


def set_direction(db: ProjectDb, sentence_ids: Iterable[int], *, rate: object = _KEEP,
                  pause_before: object = _KEEP) -> int:
    """Give these sentences a rate and/or a pause before (None clears it); returns how many."""
    ids = sorted(set(sentence_ids))
    if rate is not _KEEP and rate is not None and not RATE_RANGE[0] <= float(rate) <= RATE_RANGE[1]:  # type: ignore[arg-type]
        raise ProjectError(f"a sentence's rate must be {RATE_RANGE[0]:g}x-{RATE_RANGE[1]:g}x, got {rate}")
    if pause_before is not _KEEP and pause_before is not None and not 0.0 <= float(pause_before) <= MAX_PAUSE_S:  # type: ignore[arg-type]
        raise ProjectError(f"a pause must be between 0 and {MAX_PAUSE_S:g} seconds, got {pause_before}")
    with db.write() as conn:
        for sid in ids:
            if conn.execute("SELECT 1 FROM sentences WHERE id = ?", (sid,)).fetchone() is None:
                raise ProjectError(f"there is no sentence with id {sid}")
            conn.execute("INSERT INTO sentence_direction (sentence_id) VALUES (?) ON CONFLICT(sentence_id) DO NOTHING",
                         (sid,))
            if rate is not _KEEP:
                conn.execute("UPDATE sentence_direction SET rate = ? WHERE sentence_id = ?",
                             (None if rate is None or float(rate) == 1.0 else round(float(rate), 3), sid))  # type: ignore[arg-type]
            if pause_before is not _KEEP:
                conn.execute("UPDATE sentence_direction SET pause_before = ? WHERE sentence_id = ?",
                             (None if not pause_before else round(float(pause_before), 3), sid))  # type: ignore[arg-type]
        conn.execute("DELETE FROM sentence_direction WHERE rate IS NULL AND pause_before IS NULL")
    return len(ids)
