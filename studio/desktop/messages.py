"""Frozen values that travel between threads (and in Qt signals).

Why frozen dataclasses and nothing else: a signal emitted in the render thread is
delivered later on the GUI thread; if it carried a mutable object (or a widget, a
tensor, an ndarray) either side could change it underneath the other. Values are
cheap to copy and impossible to corrupt. Audio never travels in a signal: the
player pulls it from the project cache or receives it through its own
thread-safe feed (see :mod:`studio.desktop.playback`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from studio.project.cast import Casting

JobKind = Literal["book", "chapters", "sentences", "regenerate"]
JobStatus = Literal["queued", "running", "pausing", "paused", "done", "failed", "cancelled"]
PlayerState = Literal["idle", "buffering", "playing", "paused", "finished", "error"]

#: job states after which a job never changes again
FINISHED: tuple[str, ...] = ("done", "failed", "cancelled")


@dataclass(frozen=True)
class JobSpec:
    """What the user asked to render.

    ``book``: every chapter but front matter; ``chapters``: the listed chapters
    (0-based); ``sentences``: just the listed sentence ids (a selection, an edited
    sentence); ``regenerate``: the listed sentences synthesized again even though
    they have audio (a new take). ``sentences_hint`` is how many sentences the job
    covers as the GUI counted them, used for the overall ETA before it starts.

    ``urgent``: a small re-render the producer is waiting to hear (one edited
    sentence, one paragraph). It goes before waiting chapter jobs, and a running
    chapter job steps aside for it after its sentence in flight, then carries on.
    """

    kind: JobKind
    label: str
    chapters: tuple[int, ...] = ()
    sentence_ids: tuple[int, ...] = ()
    sentences_hint: int = 0
    urgent: bool = False


@dataclass(frozen=True)
class JobState:
    """One job in the queue as the GUI shows it."""

    job_id: int
    spec: JobSpec
    status: JobStatus = "queued"
    done: int = 0
    total: int = 0
    failed: int = 0
    eta: float | None = None
    message: str = ""
    current: str = ""
    #: ``time.monotonic()`` when it started running (the first sentences' time is shown as they are spoken)
    started: float | None = None
    #: where ``eta`` comes from when not from this job's own speed ("from this voice's earlier renders")
    eta_basis: str = ""

    @property
    def fraction(self) -> float:
        return (self.done + self.failed) / self.total if self.total else (1.0 if self.finished else 0.0)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


@dataclass(frozen=True)
class QueueSnapshot:
    """The whole queue: running job first, then waiting ones, then finished ones.

    ``overall_eta`` adds the running job's estimate to the waiting jobs' sentence
    counts times the measured seconds per sentence (None until measured).
    """

    jobs: tuple[JobState, ...] = ()
    paused: bool = False
    overall_done: int = 0
    overall_total: int = 0
    overall_eta: float | None = None

    @property
    def active(self) -> tuple[JobState, ...]:
        return tuple(j for j in self.jobs if not j.finished)

    def job(self, job_id: int) -> JobState | None:
        return next((j for j in self.jobs if j.job_id == job_id), None)


@dataclass(frozen=True)
class SentenceState:
    """A sentence's render state after a change (``rendering``, ``done``, ...)."""

    sentence_id: int
    state: str
    reason: str | None = None
    cache_key: str | None = None
    duration: float | None = None
    synth_count: int = 0


@dataclass(frozen=True)
class StateDelta:
    """Sentences whose state changed since the last delta (only those)."""

    changes: tuple[SentenceState, ...]


@dataclass(frozen=True)
class Readout:
    """Live figures, sampled about once a second.

    ``x_real_time``: seconds of audio made per second of synthesis over the last
    ``window_s`` (0 when nothing was made); ``rtf`` is its inverse. Memory is the
    studio's own RSS plus its child processes' (a model in an isolated process).
    VRAM fields are None without CUDA.
    """

    at: float
    rendering: bool
    x_real_time: float
    rtf: float
    sentences_per_s: float
    rss_bytes: int
    children: int
    cpu_percent: float
    vram_used: int | None = None
    vram_peak: int | None = None
    device: str = "CPU"
    window_s: float = 30.0
    ui_stall_ms: float = 0.0


@dataclass(frozen=True)
class ListeningState:
    """What proof-listening is hearing now, for the render queue, the readouts and the status bar.

    ``chapter``: the chapter a render job handed over (None: the sentences still unheard after a job);
    ``done`` of ``total`` sentences heard. Filled from the proof step's own progress
    (:class:`studio.proof.sentences.ProofProgress`), whatever listens."""

    chapter: int | None
    done: int
    total: int

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    def words(self) -> str:
        """``"Proof-listening chapter 3: 40 %"`` (the chapter's one number), or the unheard sentences'."""
        from studio.project.numbering import chapter_number

        if self.chapter is None:
            return f"Proof-listening: {self.done} of {self.total} sentences"
        return f"Proof-listening chapter {chapter_number(self.chapter)}: {self.percent} %"


@dataclass(frozen=True)
class ErrorInfo:
    """An error a person should read: one line, optional detail (a traceback)."""

    message: str
    title: str = "Error"
    detail: str = ""
    at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class EngineStatus:
    """What the model worker is doing with the model (loading, ready, failed).

    ``build`` names the one-time build a load runs first (the engine said so before
    loading: :meth:`~studio.engine.base.Engine.pending_build`), ``build_about`` how
    long it takes in words: set on the busy status when the build starts and on the
    status that ends it, empty on an ordinary load.
    """

    text: str
    busy: bool = False
    engine: str = ""
    build: str = ""
    build_about: str = ""


@dataclass(frozen=True)
class PreviewPassage:
    """Text the model worker must synthesize for a preview (not in the cache yet).
    ``rate``: the sentences' own speaking rate (their direction, relative to the
    project's speed; None: the project's), so the preview sounds as the render will."""

    index: int
    text: str
    language: str
    voice_id: str
    rate: float | None = None
    #: a character's speaker and performance (the Cast dock's samples); None: the voice as it is
    casting: Casting | None = None


@dataclass(frozen=True)
class PreviewRequest:
    """A preview's passages to synthesize; a newer request replaces an older one."""

    request_id: int
    passages: tuple[PreviewPassage, ...]


@dataclass(frozen=True)
class PlaybackPosition:
    """Where playback is: which request, which sentence is being heard, how far."""

    request_id: int = 0
    state: PlayerState = "idle"
    sentence_id: int | None = None
    played_s: float = 0.0
    label: str = ""
    message: str = ""


@dataclass(frozen=True)
class TaskResult:
    """A background task's outcome, delivered on the GUI thread."""

    task_id: int
    value: object = None
    error: ErrorInfo | None = None
    progress: bool = False


@dataclass(frozen=True)
class ExportProgress:
    """Export of chapter files: ``done`` of ``total`` written so far, counted in ``unit``.

    Why the unit travels with the counts: a publish-ready export masters parts (the chapters, a
    long chapter's pieces, the credits), a plain one writes chapters; the bar said "1/3 chapters"
    for the parts, then "2/2" for the files when it finished."""

    done: int
    total: int
    current: str = ""
    files: tuple[str, ...] = ()
    seconds: float = 0.0
    unit: str = "chapters"

    @property
    def words(self) -> str:
        """``"2/3 chapters"``: the progress bar's text."""
        return f"{self.done}/{self.total} {self.unit}"



@dataclass(frozen=True)
class PackageChoices:
    """What the export dialog asks of a publish-ready export beyond format and chapters:
    cover (""= the EPUB's) and its fit ("" / "pad" / "crop"), credits and their wording
    ("" = the default), the retail sample and its chapter (None = the first prose one), the
    recording's producer, and the ``--require-proof`` refusal."""

    cover: str = ""
    cover_fit: str = ""
    credits: bool = True
    opening: str = ""
    closing: str = ""
    sample: bool = True
    sample_chapter: int | None = None
    producer: str = ""  # the recording's copyright holder ("": the project's setting)
    require_proof: bool = False  # refuse unless every chapter is proof-listened and resolved
