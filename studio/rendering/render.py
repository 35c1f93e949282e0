"""Headless rendering: pending sentences -> audio cache, committed one by one.

Used by the command line and by the desktop's render worker thread alike, so it
takes plain callables for progress and cancellation and never prints.

Why commit per sentence: a book renders for hours, and an interrupted render
(crash, kill, Ctrl-C, closed lid) must lose at most the sentence in flight. Each
sentence's audio reaches disk atomically before its row says ``done``; a sentence
whose synthesis raises is marked ``failed`` with the reason and the job goes on.

Synthesis goes through one batch synthesizer (:mod:`studio.rendering.synthesizer`):
the engine gets ``batch_size`` sentences at a time, yet only the sentence at fault fails.

Failures and what they cost: a sentence the engine cannot speak (an error, a
sentence over :data:`~studio.engine.base.MAX_IDS_PER_SENTENCE`, or -- with the model
in a child process, :mod:`studio.stack.isolation` -- a model crash that repeats on
the retry) is marked ``failed`` with the reason and the job goes on; the next render
retries every failed sentence. A full disk is different: nothing is wrong with the
sentence, so the job stops (:class:`~studio.core.errors.DiskFull`), the sentences in
flight go back to ``pending`` and everything finished stays.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from studio.core.errors import DiskFull, ProjectError, StudioError
from studio.core.language import language_family
from studio.engine.base import Engine, SynthesisSettings
from studio.rendering.cast_render import speak_parts
from studio.rendering.prep import clean_stale_temp_files, prepare_voices, render_lock, verify_present
from studio.rendering.stressed_words import warn_unheard
from studio.rendering.synthesizer import (
    BatchSynthesizer, SynthesizerFactory, SynthRequest, describe_error, each_synthesizer,
)
from studio.project.cast import voiced
from studio.project.settings import ProjectSettings
from studio.project.store import Project
from studio.project.records import SentenceRow
from studio.text.segment import is_speakable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RenderProgress:
    """A snapshot of a render, handed to the progress callback after every step.

    ``done``/``total`` count sentences of the selected chapters (titles included;
    ``done`` includes those finished by earlier runs). ``failed`` counts failures in
    this run. ``audio_seconds`` is audio synthesized in this run, ``rtf`` its
    real-time factor (wall seconds since the start, model loading included, per
    audio second; < 1 is faster than real time) and ``eta`` the estimated seconds
    left (None until there is a measurement). ``synthesized``/``reused`` split this
    run's work into sentences spoken and sentences found in the cache;
    ``synth_seconds`` is the time spent inside synthesis alone.
    """

    done: int
    total: int
    failed: int
    audio_seconds: float
    elapsed: float
    rtf: float
    eta: float | None
    synthesized: int = 0
    reused: int = 0
    stopped: bool = False
    current: str = ""
    synth_seconds: float = 0.0

    @property
    def fraction(self) -> float:
        return (self.done + self.failed) / self.total if self.total else 1.0

    @property
    def x_real_time(self) -> float:
        """How many times faster than real time (``1 / rtf``); 0 when unknown."""
        return 1.0 / self.rtf if self.rtf > 0 else 0.0

    def summary(self) -> str:
        """``"172 sentences: 44 synthesized, 128 from the cache, 0 failed"`` (a job's last word):
        "44 synthesized" alone read as if the rest were missing. ``done`` counts the audio a
        resumed chapter already held, which this run neither spoke nor looked up."""
        cached = self.done - self.synthesized
        left = self.total - self.done - self.failed
        return (f"{self.total} sentences: {self.synthesized} synthesized, {cached} from the cache, "
                f"{self.failed} failed" + (f", {left} not reached" if left else ""))


#: voice id -> engine for that voice (constructed; render_project loads it)
EngineFactory = Callable[[str], Engine]


def _check_audio(audio: Any) -> np.ndarray:
    arr = np.asarray(audio, dtype=np.float32).reshape(-1)
    if arr.size == 0:
        raise ValueError("the engine returned no audio")
    if not np.all(np.isfinite(arr)):
        raise ValueError("the engine returned NaN/inf samples")
    return arr


def render_project(
    project: Project,
    engine: Engine,
    *,
    chapters: set[int] | None = None,
    progress: Callable[[RenderProgress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    engine_for: EngineFactory | None = None,
    make_synthesizer: SynthesizerFactory | None = None,
    batch_size: int = 1,
    voice_lookup: Callable[[str], Any] | None = None,
    sentence_ids: Iterable[int] | None = None,
    on_chapter: Callable[[int], None] | None = None,
) -> RenderProgress:
    """Render every pending sentence of ``chapters`` (0-based; None = all) into the cache.

    ``sentence_ids`` narrows the job to those sentences (a selection, one edited
    sentence); progress ``total`` then counts only them.

    ``engine`` speaks the project's default voice; sentences mapped to another voice
    get ``engine_for(voice_id)`` (those engines are closed at the end) or fail when
    no factory is given. Sentences whose audio is already cached are marked done
    without synthesis. ``make_synthesizer`` None is :func:`each_synthesizer`. ``on_chapter(index)`` is
    called in the loop once a chapter has nothing left to render (chapters go one after another, so
    proof-listening can hear a chapter while the next renders). Returns the final progress
    (``stopped`` if ``should_stop`` ended it early). A failed sentence is recorded and
    the job goes on; :class:`~studio.core.errors.DiskFull` and KeyboardInterrupt stop
    it (sentences in flight go back to ``pending``); everything finished is kept.
    """
    with render_lock(project):
        clean_stale_temp_files(project)
        if project.reset_interrupted():
            log.info("resuming an interrupted render")
        settings = project.settings()
        wanted = None if sentence_ids is None else set(sentence_ids)

        def select() -> list[SentenceRow]:
            rows = project.sentences(chapters)
            return rows if wanted is None else [r for r in rows if r.id in wanted]

        rows = select()
        needed = {project.voice_for(r.language, settings) for r in rows} | {settings.voice_id}
        cast_voices = {c.voice_id for c in project.cast.castings().values() if c.voice_id} \
            if project.cast.enabled() else set()  # the characters' own voices enter their lines' keys too
        prepare_voices(project, needed | cast_voices, voice_lookup)
        rows = select()  # keys now carry the current fingerprints
        if verify_present(project, rows):
            rows = select()
        renderer = _Renderer(project, engine, settings, engine_for, make_synthesizer or each_synthesizer, progress)
        return renderer.run(rows, should_stop, max(1, batch_size), on_chapter)


class _Renderer:
    """The loop of :func:`render_project` with its counters (kept out of the signature)."""

    def __init__(
        self,
        project: Project,
        engine: Engine,
        settings: ProjectSettings,
        engine_for: EngineFactory | None,
        make_synthesizer: SynthesizerFactory,
        progress: Callable[[RenderProgress], None] | None,
    ) -> None:
        self.project = project
        self.settings = settings
        self.engine_for = engine_for
        self.make_synthesizer = make_synthesizer
        self.progress_cb = progress
        self.engines: dict[str, Engine] = {settings.voice_id: engine}
        self.owned: list[Engine] = []
        self.loaded: set[str] = set()
        self.synths: dict[tuple[str, SynthesisSettings], BatchSynthesizer] = {}
        self.done = self.total = self.failed = self.synthesized = self.reused = 0
        self.audio_seconds = 0.0
        self.synth_chars = 0
        self.synth_time = 0.0
        self.batch_size = 1
        self.remaining_chars = 0
        self.t0 = time.monotonic()

    def run(self, rows: list[SentenceRow], should_stop: Callable[[], bool] | None, batch_size: int,
            on_chapter: Callable[[int], None] | None = None) -> RenderProgress:
        self.batch_size = batch_size
        pending = [r for r in rows if r.state != "done"]
        self.total = len(rows)
        self.done = self.total - len(pending)
        self.remaining_chars = sum(len(r.text) for r in pending)
        stopped = False
        self._emit("")
        by_chapter: dict[int, list[SentenceRow]] = {r.chapter: [] for r in rows}  # what is left, per chapter
        for r in pending:
            by_chapter[r.chapter].append(r)
        left = {c: len(rs) for c, rs in by_chapter.items()}
        work = [w for rs in by_chapter.values() for w in self._work(rs, batch_size)]
        on_chapter = on_chapter or (lambda _chapter: None)
        try:
            for chapter in [c for c, n in left.items() if n == 0]:  # nothing to render: heard first
                on_chapter(chapter)
            for batch, speak in work:
                if should_stop is not None and should_stop():
                    stopped = True
                    break
                speak(batch)
                chapter = batch[-1].chapter
                left[chapter] -= len(batch)
                if left[chapter] == 0:
                    on_chapter(chapter)
        except BaseException as exc:
            self._release_in_flight("stopped: disk full" if isinstance(exc, DiskFull) else "interrupted")
            raise
        finally:
            for eng in self.owned:
                try:
                    eng.close()
                except Exception:  # noqa: BLE001 - closing must not mask the result
                    log.exception("closing engine failed")
        return self._emit("", stopped=stopped)

    def _work(self, pending: list[SentenceRow], batch_size: int) -> list[tuple[list[SentenceRow], Callable]]:
        """One chapter's batches: its plain sentences, then its cast lines (batched by voice apart)."""
        cast = [r for r in pending if voiced(r.cast)]  # a character's voice in them
        plain = [r for r in pending if not voiced(r.cast)]
        step = max(8, batch_size)
        work: list[tuple[list[SentenceRow], Callable]] = [(b, self._render_batch) for b in self._batches(plain, batch_size)]
        return work + [(cast[i:i + step], self._render_cast) for i in range(0, len(cast), step)]

    def _release_in_flight(self, reason: str) -> None:
        """The job is stopping on an error: sentences marked ``rendering`` go back to
        ``pending`` now (best effort -- on a full disk this write may fail too, and the
        next render resets them anyway)."""
        try:
            n = self.project.reset_interrupted(reason)
        except (StudioError, OSError) as err:
            log.debug("could not reset sentences in flight (%s); the next render will", err)
            return
        if n:
            log.info("%d sentence(s) in flight back to pending (%s)", n, reason)

    def _batches(self, pending: list[SentenceRow], size: int) -> Iterator[list[SentenceRow]]:
        """Consecutive runs of the same voice and settings (a directed rate is its own call: the
        voice takes one length scale per call), at most ``size`` long, in reading order."""
        batch: list[SentenceRow] = []
        voice = None
        for row in pending:
            v = (self.project.voice_for(row.language, self.settings), row.synthesis)
            if batch and (v != voice or len(batch) >= size):
                yield batch
                batch = []
            batch.append(row)
            voice = v
        if batch:
            yield batch

    def _engine(self, voice_id: str) -> Engine | None:
        """The loaded engine for a voice (loading lazily: a fully cached render loads nothing)."""
        if voice_id not in self.engines:
            if self.engine_for is None:
                return None
            eng = self.engine_for(voice_id)
            self.owned.append(eng)
            self.engines[voice_id] = eng
        eng = self.engines[voice_id]
        if voice_id not in self.loaded:
            eng.load()
            self.loaded.add(voice_id)
        return eng

    def _render_cast(self, batch: list[SentenceRow]) -> None:
        """Sentences with a character's voice in them (:mod:`studio.rendering.cast_render`)."""
        todo = self._reuse(batch)
        if not todo:
            self._emit(batch[-1].text)
            return
        self.project.mark_rendering(r.id for r in todo)
        started = time.monotonic()
        for narrator in dict.fromkeys(self.project.voice_for(r.language, self.settings) for r in todo):
            rows = [r for r in todo if self.project.voice_for(r.language, self.settings) == narrator]
            engine = self._engine(narrator)
            if engine is None:
                for row in rows:
                    self._fail(row, f"no engine available for voice {narrator}")
                continue
            results = speak_parts(rows, narrator, lambda r: r.synthesis or self.settings.synthesis,
                                  self._engine, self._speak_jobs, engine.sample_rate, self.batch_size)
            for row, result in zip(rows, results):
                if isinstance(result, BaseException):
                    self._store(row, result, engine.sample_rate, 0)
                    continue
                self._store(row, result.audio, engine.sample_rate, 0)
                if any(language_family(p.language) != language_family(row.language) for p in result.parts):
                    self.project.cache.store_parts(row.expected_key, result.audio.size,
                                                   [asdict(p) for p in result.parts])
        self.synth_time += time.monotonic() - started
        self._emit(todo[-1].text)

    def _speak_jobs(self, engine: Engine, settings: SynthesisSettings, jobs: list) -> list[np.ndarray | Exception]:
        synth = self.synths.get((f"{id(engine)}", settings))
        if synth is None:
            synth = self.synths[(f"{id(engine)}", settings)] = self.make_synthesizer(engine, settings)
        return synth([SynthRequest(0, j.spoken, j.language, j.lexicon) for j in jobs])

    def _store(self, row: SentenceRow, result: Any, rate: int, take: int) -> None:
        """Keep one sentence's audio (or its failure) and count it."""
        try:
            if isinstance(result, BaseException):
                raise result
            audio = _check_audio(result)
        except Exception as exc:  # noqa: BLE001 - a failed sentence must not stop the job
            self._fail(row, describe_error(exc))
            return
        entry = self.project.cache.store(row.expected_key, audio, rate)
        self.project.mark_done(row.id, entry, synthesized=True, seed=take)
        log.debug("synthesized sentence %d key %s (%.2f s)", row.id, row.expected_key, entry.duration)
        self.synthesized += 1
        self.audio_seconds += entry.duration
        self.synth_chars += len(row.text)
        self._count_done(row, reused=False)

    def _reuse(self, batch: list[SentenceRow]) -> list[SentenceRow]:
        """Mark done what the cache already holds (or what has nothing to say); the rest is to speak."""
        project = self.project
        todo: list[SentenceRow] = []
        for row in batch:
            entry = project.cache_entry(row.expected_key)
            if entry is not None and project.cache.looks_present(entry):
                project.mark_done(row.id, entry, synthesized=False)
                self._count_done(row, reused=True)
            elif row.skipped or not is_speakable(row.text):  # nothing to say, or left silent by the policy
                rate = self._rate(row)
                entry = project.cache.store(row.expected_key, np.zeros(0, np.float32), rate)
                project.mark_done(row.id, entry, synthesized=False)
                self._count_done(row, reused=True)
            else:
                todo.append(row)
        return todo

    def _render_batch(self, batch: list[SentenceRow]) -> None:
        project = self.project
        todo = self._reuse(batch)
        if not todo:
            self._emit(batch[-1].text)
            return
        voice_id = project.voice_for(todo[0].language, self.settings)
        engine = self._engine(voice_id)
        if engine is None:
            for row in todo:
                self._fail(row, f"no engine available for voice {voice_id}")
            self._emit(todo[-1].text)
            return
        project.mark_rendering(r.id for r in todo)
        own = todo[0].synthesis or self.settings.synthesis  # one batch, one voice, one set of settings
        warn_unheard(self.settings, own, len(todo))
        synth = self.synths.get((voice_id, own))
        if synth is None:
            synth = self.synths[(voice_id, own)] = self.make_synthesizer(engine, own)
        started = time.monotonic()
        requests = [SynthRequest(r.id, r.spoken or r.text, r.said or r.language, r.lexicon,
                                 project.takes.next_take(r.expected_key)) for r in todo]
        results = synth(requests)
        self.synth_time += time.monotonic() - started
        if len(results) != len(todo):
            raise ProjectError(f"synthesizer returned {len(results)} results for {len(todo)} sentences")
        for row, request, result in zip(todo, requests, results):
            self._store(row, result, engine.sample_rate, request.take)
        self._emit(todo[-1].text)

    def _rate(self, row: SentenceRow) -> int:
        engine = self.engines.get(self.project.voice_for(row.language, self.settings))
        return engine.sample_rate if engine is not None else 22050

    def _count_done(self, row: SentenceRow, *, reused: bool) -> None:
        self.done += 1
        self.reused += int(reused)
        self.remaining_chars -= len(row.text)

    def _fail(self, row: SentenceRow, reason: str) -> None:
        log.warning("sentence %d failed: %s", row.id, reason)
        self.project.mark_failed(row.id, reason)
        self.failed += 1
        self.remaining_chars -= len(row.text)

    def _emit(self, current: str, *, stopped: bool = False) -> RenderProgress:
        elapsed = time.monotonic() - self.t0
        eta = None
        if self.synth_chars:
            eta = max(0.0, self.remaining_chars) * self.synth_time / self.synth_chars
        elif self.remaining_chars <= 0:
            eta = 0.0
        snap = RenderProgress(
            done=self.done, total=self.total, failed=self.failed, audio_seconds=self.audio_seconds,
            elapsed=elapsed, rtf=(elapsed / self.audio_seconds) if self.audio_seconds else 0.0, eta=eta,
            synthesized=self.synthesized, reused=self.reused, stopped=stopped, current=current,
            synth_seconds=self.synth_time,
        )
        if self.progress_cb is not None:
            self.progress_cb(snap)
        return snap
