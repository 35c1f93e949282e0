"""How long a chapter will play: the voice's speaking rate plus the project's pauses.

Why one function for every estimate: the tree, the inspector, the long-chapter
banner and the Render Book question used a flat 155 words per minute, which ran
20-28 % high for the bundled voice and left out the pauses export inserts. Here a
sentence that is rendered counts at its real length, one that is not is predicted
from its spoken characters (numbers spelled out,
:mod:`studio.text.spoken_length`) with a rate measured on the voice (and, once the
project has rendered some sentences, calibrated from them), and the pauses are
laid out exactly as :func:`studio.audio.assemble.iter_chapter` lays them out, with
the title split the way export splits it (:func:`title_and_body`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Protocol, TypeVar

from studio.audio.assemble import Pauses
from studio.core.types import Book
from studio.project.bookdb import heading_paragraph, normalize_space
from studio.project.direction import directions
from studio.project.pauses import pauses_after
from studio.project.store import Project
from studio.project.records import SentenceRow
from studio.text.spoken_length import spoken_chars

log = logging.getLogger(__name__)

RATES_FILE = Path(__file__).with_name("speaking_rates.json")
#: the entry used for a voice nobody measured (the bundled voice's figures)
FALLBACK = "default"
#: calibrate from the project's own audio once this much of it is rendered: fewer
#: sentences say more about their own wording than about the voice
MIN_CALIBRATION_S = 30.0
#: in the cache folder: the pace of each voice nobody measured, from its first renders (any project's)
KEPT_RATES = "voice-rates.json"



@dataclass(frozen=True)
class SpeakingRate:
    """A sentence lasts ``per_sentence + per_char * spoken characters`` seconds at
    length scale 1; both scale with the length scale (the voice stretches its
    leading and trailing silence too). ``basis`` says where the figures came from."""

    per_sentence: float
    per_char: float
    basis: str = ""

    def sentence(self, text: str, length_scale: float = 1.0) -> float:
        chars = spoken_chars(text)
        return 0.0 if chars == 0 else (self.per_sentence + self.per_char * chars) * length_scale


@lru_cache(maxsize=1)
def _rates() -> dict[str, dict[str, float]]:
    return json.loads(RATES_FILE.read_text(encoding="utf-8"))


def voice_rate(voice_id: str) -> SpeakingRate:
    """The rate measured on ``voice_id`` (bench/duration.py), else the pace kept from this voice's
    renders (:func:`keep_voice_rate`), else the fallback one."""
    table = _rates()
    row = table.get(voice_id)
    basis = f"measured on {voice_id}"
    if row is None:
        kept = _kept().get(voice_id)
        if kept is not None:
            row, basis = kept, f"{voice_id}'s pace, measured on {int(kept['sentences'])} sentences rendered before"
        else:
            row, basis = table[FALLBACK], "a typical voice's pace (not measured on this one yet)"
    return SpeakingRate(float(row["per_sentence"]), float(row["per_char"]), basis)


def _kept_path() -> Path:
    from studio.core.paths import cache_dir

    return cache_dir() / KEPT_RATES


def _kept() -> dict[str, dict[str, float]]:
    try:
        data = json.loads(_kept_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict) and {"per_sentence", "per_char", "sentences"} <= set(v)} \
        if isinstance(data, dict) else {}


def keep_voice_rate(voice_id: str, length_scale: float, rows: Iterable[Spoken]) -> SpeakingRate | None:
    """Keep the pace of a voice nobody measured, from sentences it rendered (``rows``), for every
    project after: a Kokoro or cloned voice's chapters were estimated at the bundled voice's pace
    until each project had rendered some of them, and then grew by a fifth. Returns the pace kept
    (None: a measured voice, or too little audio to say)."""
    if voice_id in _rates():
        return None
    rendered = [(r.text, float(r.duration)) for r in rows if r.state == "done" and r.duration]
    rate = calibrated(SpeakingRate(*(float(_rates()[FALLBACK][k]) for k in ("per_sentence", "per_char"))),
                      rendered, length_scale)
    if not rate.basis.startswith("calibrated"):
        return None
    kept = _kept()
    if kept.get(voice_id, {}).get("sentences", 0) >= len(rendered):
        return None  # kept from as much audio before
    kept[voice_id] = {"per_sentence": rate.per_sentence, "per_char": rate.per_char, "sentences": len(rendered)}
    path = _kept_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        spare = path.with_suffix(".tmp")
        spare.write_text(json.dumps(kept, indent=1, sort_keys=True), encoding="utf-8")
        spare.replace(path)
    except OSError as err:
        log.warning("could not keep the pace of %s: %s", voice_id, err)
        return None
    log.info("kept the pace of %s from %d rendered sentences", voice_id, len(rendered))
    return rate


def calibrated(rate: SpeakingRate, rendered: Iterable[tuple[str, float]], length_scale: float = 1.0) -> SpeakingRate:
    """``rate`` scaled so it predicts the project's rendered sentences on average.

    ``rendered``: (text, seconds) of sentences rendered with the current settings.
    Below :data:`MIN_CALIBRATION_S` of audio ``rate`` is returned as it is.
    """
    actual = predicted = 0.0
    count = 0
    for text, seconds in rendered:
        guess = rate.sentence(text, length_scale)
        if guess <= 0.0 or seconds <= 0.0:
            continue
        actual, predicted, count = actual + seconds, predicted + guess, count + 1
    if actual < MIN_CALIBRATION_S or predicted <= 0.0:
        return rate
    factor = actual / predicted
    return replace(rate, per_sentence=rate.per_sentence * factor, per_char=rate.per_char * factor,
                   basis=f"calibrated on {count} rendered sentences")


@dataclass(frozen=True)
class Timing:
    """Everything a chapter estimate needs besides the text: plain values, so it can
    travel with the GUI's snapshot."""

    rate: SpeakingRate
    length_scale: float = 1.0
    pauses: Pauses = field(default_factory=Pauses)


class Spoken(Protocol):
    """A sentence as estimates see it (a store row or a tree node)."""

    id: int
    paragraph: int | None
    text: str
    state: str
    duration: float | None


S = TypeVar("S", bound=Spoken)


def title_and_body(rows: Sequence[S], heading_first: bool) -> tuple[list[S], list[S]]:
    """The sentences spoken as the chapter title, and the rest, as export speaks them.

    The title is the (first) title row or -- when the chapter's first paragraph repeats
    the heading (``heading_first``, with or without its number) -- that paragraph's
    sentences, and a title row is then not spoken: a title is said once.
    """
    titles = [r for r in rows if r.paragraph is None]
    body = [r for r in rows if r.paragraph is not None]
    if heading_first and body and body[0].paragraph == 0:  # said once: the heading, not also a title row
        heading = [r for r in body if r.paragraph == 0]
        return heading, body[len(heading):]
    return titles[:1], body


def sentence_seconds(row: Spoken, timing: Timing) -> float:
    """Its real length when rendered with the current inputs, else the prediction."""
    if row.state == "done" and row.duration is not None:
        return float(row.duration)
    return timing.rate.sentence(row.text, timing.length_scale)


def chapter_seconds(rows: Sequence[Spoken], heading_first: bool, timing: Timing,
                    after: Mapping[int, float] | None = None, before: Mapping[int, float] | None = None) -> float:
    """The length of the chapter's exported file (0 when it has nothing to say).

    Mirrors :func:`studio.audio.assemble.iter_chapter`: title, title pause; each
    sentence followed by the sentence pause, or the paragraph pause after a
    paragraph's last one -- or the pause the producer set after it (``after``:
    sentence id -> seconds, :mod:`studio.project.pauses`), and a pause the producer
    put before it (``before``, :mod:`studio.project.direction`); the chapter-end pause.
    Silent sentences add no pause.
    """
    own, ahead = after or {}, before or {}
    if not rows:
        return 0.0
    pauses = timing.pauses
    title, body = title_and_body(rows, heading_first)
    total = pauses.chapter_end
    if title:
        spoken = [sentence_seconds(r, timing) for r in title]
        total += sum(spoken) + pauses.sentence * (len(spoken) - 1) + pauses.title
    paragraph: list[tuple[float, int]] = []
    current: int | None = None
    for row in [*body, None]:
        if row is None or row.paragraph != current:
            for k, (seconds, sid) in enumerate(paragraph):
                default = pauses.paragraph if k == len(paragraph) - 1 else pauses.sentence
                total += ahead.get(sid, 0.0) + seconds + own.get(sid, default)
            paragraph = []
            if row is None:
                break
            current = row.paragraph
        seconds = sentence_seconds(row, timing)
        if seconds > 0.0:
            paragraph.append((seconds, row.id))
    return total


def project_timing(voice_id: str, length_scale: float, pauses: Pauses, rows: Iterable[Spoken]) -> Timing:
    """The project's timing: the voice's rate, calibrated from ``rows`` that are rendered."""
    rendered = ((r.text, float(r.duration)) for r in rows if r.state == "done" and r.duration)
    return Timing(calibrated(voice_rate(voice_id), rendered, length_scale), length_scale, pauses)


@dataclass(frozen=True)
class _Unrendered:
    """A manuscript's sentence as an estimate sees it (nothing rendered yet)."""

    paragraph: int | None
    text: str
    state: str = "pending"
    duration: float | None = None
    id: int = -1


def book_estimates(book: Book, voice_id: str, length_scale: float = 1.0, pauses: Pauses | None = None) -> list[float]:
    """Every chapter's file length as a new project of ``book`` would estimate it:
    the same rows the project would hold (a title row unless the first paragraph is
    the heading, :func:`studio.project.bookdb.insert_book`), the voice's measured rate,
    the default pauses. What ``studio inspect`` prints for a manuscript."""
    timing = Timing(voice_rate(voice_id), length_scale, pauses or Pauses())
    out = []
    for chapter in book.chapters:
        heading = heading_paragraph(chapter)
        title = normalize_space(chapter.title)
        rows = [_Unrendered(None, title)] if title and not heading else []
        rows += [_Unrendered(pi, s.text) for pi, p in enumerate(chapter.paragraphs) for s in p.sentences]
        out.append(chapter_seconds(rows, heading, timing))
    return out


def book_seconds(chapters: Iterable[tuple[float, bool]]) -> float:
    """The book's length: ``(chapter_seconds, included)`` of every chapter, added up over the
    chapters the book reads (its render and its export: the included ones, every one when none is).

    Why one function: the Render Book question added the unrendered sentences' speech
    (no pauses), the tree showed each chapter's file with its pauses and ``studio inspect``
    added every chapter, front matter too: three figures for one book."""
    pairs = list(chapters)
    read = [seconds for seconds, included in pairs if included] or [seconds for seconds, _ in pairs]
    return float(sum(read))


def chapter_estimates(project: Project) -> list[float]:
    """Every chapter's estimated file length, straight from the project (for the CLI
    and benchmarks; the GUI gets the same numbers through its snapshot)."""
    rows = project.sentences()
    settings = project.settings()
    timing = project_timing(settings.voice_id, settings.synthesis.length_scale, settings.pauses, rows)
    by_chapter: dict[int, list[SentenceRow]] = {}
    for r in rows:
        by_chapter.setdefault(r.chapter, []).append(r)
    after, before = pauses_after(project.db), {i: d.pause_before or 0.0 for i, d in directions(project.db).items()}
    return [chapter_seconds(by_chapter.get(i, []), heading_paragraph(c), timing, after, before)
            for i, c in enumerate(project.book().chapters)]
