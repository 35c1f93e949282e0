"""The one long-lived model worker: render jobs and preview synthesis, never at once.

Why one thread that owns the model (Picard's single-thread pool for work that
must not overlap, Qt's mandelbrot RenderThread for the shape): a GPU or a
2-core CPU gains nothing from two syntheses at a time and an engine need not be
thread-safe. The worker plans engines exactly as ``studio render`` does
(:func:`studio.stack.build.plan_for_project`: same streams, same CUDA batches,
same model process), builds them lazily with :func:`~studio.stack.build.build_engine`
(tests lend a shared engine through the same seam) and runs jobs with the jobs
layer's ``render_project`` and its one synthesizer, which it only watches.

Between two sentences ``render_project`` asks ``should_stop``; that is where the
worker obeys pause/cancel and serves previews: a preview chunk (from
:func:`studio.engine.serving.streaming.stream_passage`) goes before the next render
sentence, so a click is heard within one sentence even during a long render, and
only the newest preview request is ever synthesized.

Everything the GUI learns comes as frozen values through signals.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Sequence

import numpy as np
from PySide6.QtCore import QThread, Signal

from studio.audio.performance import perform
from studio.engine.base import DelegatingEngine, Engine, PendingBuild, SynthesisSettings
from studio.stack.build import EngineBuilder, EnginePlan, Isolation, build_engine, effective_preset, plan_for_project
from studio.rendering.cast_render import cast_settings
from studio.rendering.render import RenderProgress, render_project
from studio.rendering.synthesizer import SynthRequest, each_synthesizer
from studio.project.direction import Direction
from studio.project.queue_state import sentence_chapters
from studio.project.duration import keep_voice_rate
from studio.project.render_speed import remember_speed
from studio.project.settings import ProjectSettings
from studio.project.store import Project
from studio.project.records import SentenceRow
from studio.desktop.jobqueue import JobQueue
from studio.desktop.messages import EngineStatus, JobState, PreviewRequest, SentenceState, StateDelta
from studio.desktop.monitor import RenderStats
from studio.desktop.tasks import describe_error

log = logging.getLogger(__name__)

#: loaded engines kept at most (the default voice plus the last other voices used)
MAX_ENGINES = 3
EMIT_EVERY_S = 0.25


class _Borrowed(DelegatingEngine):
    """Lends a worker-owned engine to ``render_project``, which closes what it is given
    (``DelegatingEngine.close`` does nothing: the worker closes the model itself).
    A pure lend: the model process's per-sentence crash handling stays in effect."""

    def synthesize_each(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list:
        return self.inner.synthesize_each(ids, settings)


def _pending_build(engine: Engine) -> PendingBuild | None:
    """The engine's one-time build, if any; a failing look is logged and the load goes on unannounced."""
    try:
        return engine.pending_build()
    except Exception:  # load() itself reports what is really wrong
        log.warning("could not tell whether loading builds a model first", exc_info=True)
        return None


class PreviewFeed:
    """What the worker needs from the player (see :class:`studio.desktop.playback.Player`)."""

    def deliver(self, request_id: int, passage: int, samples: np.ndarray, rate: int,
                span: tuple[int, int], last: bool) -> bool: ...  # pragma: no cover
    def fail(self, request_id: int, passage: int, message: str) -> None: ...  # pragma: no cover
    def wants_more(self, request_id: int) -> bool: ...  # pragma: no cover


@dataclass
class _Preview:
    request: PreviewRequest
    k: int = 0
    chunks: Iterator | None = None


class RenderWorker(QThread):
    """Runs the :class:`JobQueue` until :meth:`JobQueue.quit`; owns and closes the engines."""

    queueChanged = Signal(object)  # QueueSnapshot
    statesChanged = Signal(object)  # StateDelta
    jobFinished = Signal(object)  # JobState
    engineStatus = Signal(object)  # EngineStatus
    failed = Signal(object)  # ErrorInfo

    def __init__(self, project: Project, queue: JobQueue, stats: RenderStats, feed: PreviewFeed | None = None, *,
                 build: EngineBuilder = build_engine, isolation: Isolation | None = Isolation()) -> None:
        super().__init__()
        self.setObjectName("studio-model-worker")
        self.project = project
        self.queue = queue
        self.stats = stats
        self.build = build
        self.isolation = isolation
        self.feed = feed
        self._engines: dict[str, Engine] = {}
        self._plan: EnginePlan | None = None
        self._preview: _Preview | None = None
        self._known: dict[int, tuple] = {}
        self._touched: set[int] = set()
        self._chapter_of: dict[int, int] = {}
        self._last_emit = 0.0
        self._job_settings: ProjectSettings | None = None
        self._yielded = False
        self.after_chapter: Callable[[int], None] | None = None  # the render loop's ``on_chapter``

    # ------------------------------------------------------------ loop

    def run(self) -> None:
        try:
            while not self.queue.quitting:
                if self._service_preview():
                    continue
                job = self.queue.next_job()
                if job is not None:
                    self._run_job(job)
                    continue
                self.queue.wait(0.2 if self._preview is not None else 1.0)
        except Exception as exc:  # noqa: BLE001 - the worker must report, not vanish
            self.failed.emit(describe_error(exc, "keep the model worker running"))
        finally:
            self._close_engines()
            self.stats.set_rendering(False)

    def snapshot(self) -> None:
        self.queueChanged.emit(self.queue.snapshot(self.stats.seconds_per_sentence()))

    # ------------------------------------------------------------ jobs

    def _run_job(self, job: JobState) -> None:
        spec, job_id = job.spec, job.job_id
        self.stats.set_rendering(True)
        self.snapshot()
        status, message = "done", ""
        self._yielded = False
        try:
            settings = self._job_settings = self.project.settings()
            engine = self._engine(settings.voice_id, settings)
            assert self._plan is not None
            ids, chapters = self._scope(job)
            self._touched = set(chapters)
            result = render_project(
                self.project, engine, chapters=set(chapters), sentence_ids=ids,
                progress=lambda p: self._progress(job_id, p),
                should_stop=lambda: self._should_stop(job_id),
                engine_for=lambda vid: _Borrowed(self._engine(vid, settings)),
                make_synthesizer=self._watched_synthesizer,
                batch_size=self._plan.batch_size, on_chapter=self._chapter_done,
            )
            self._touched = set(chapters)
            message = result.summary()
            remember_speed(self.project.db, effective_preset(settings).name, settings.voice_id, result.synth_seconds,
                           result.synthesized)
            if result.synthesized:  # a voice nobody measured: its pace kept for every later estimate
                keep_voice_rate(settings.voice_id, settings.synthesis.length_scale,
                                (r for r in self.project.sentences()
                                 if not r.cast and self.project.voice_for(r.language, settings) == settings.voice_id))
            status = "cancelled" if result.stopped else "done"
            if result.stopped and self._yielded:
                status = "yielded"
        except Exception as exc:  # noqa: BLE001 - a failed job is reported and the queue goes on
            info = describe_error(exc, f"render {spec.label}")
            status, message = "failed", info.message
            self.failed.emit(info)
        finally:
            self._job_settings = None
            self._flush(force=True)
            self.stats.set_rendering(False)
            self._settle(job_id, status, message)

    def _chapter_done(self, chapter: int) -> None:
        """A chapter has nothing left to render: its states shown, then handed to proof-listening."""
        self._touched.add(chapter)
        self._flush(force=True)
        if self.after_chapter is not None:
            self.after_chapter(chapter)

    def _settle(self, job_id: int, status: str, message: str) -> None:
        """Finish the job, or (it stepped aside for an urgent one) queue it again to resume after it."""
        if status == "yielded":
            self.queue.requeue(job_id, message="waiting for an urgent re-render")
            self.snapshot()
            return
        final = self.queue.finish(job_id, status, message)
        self.snapshot()
        if final is not None:
            self.jobFinished.emit(final)

    def _scope(self, job: JobState) -> tuple[set[int] | None, list[int]]:
        """``(sentence ids or None for whole chapters, chapters touched)``; regenerate forgets audio."""
        spec = job.spec
        if spec.kind == "book":
            from studio.delivery.export import default_chapters

            chapters = default_chapters(self.project)
            self._remember(chapters)
            return None, chapters
        if spec.kind == "chapters":
            self._remember(list(spec.chapters))
            return None, list(spec.chapters)
        wanted = set(spec.sentence_ids)
        chapters = sentence_chapters(self.project.db, wanted)  # never the whole book's keys for a few sentences
        rows = [r for r in self._remember(chapters) if r.id in wanted]
        ids = {r.id for r in rows}
        if spec.kind == "regenerate":
            keys = {r.expected_key for r in rows if r.state == "done"}
            for key in keys:
                self.project.takes.keep_current(key)  # the take being replaced stays listed
                self.project.invalidate_key(key)
            if keys:  # sentences sharing the audio get the new take too
                ids |= {r.id for r in self.project.sentences(chapters) if r.expected_key in keys}
            self._flush(force=True)
        return ids, chapters

    def _remember(self, chapters: list[int]) -> list[SentenceRow]:
        rows = self.project.sentences(chapters)
        self._known.update({r.id: (r.state, r.reason, r.cache_key, r.synth_count) for r in rows})
        self._chapter_of.update({r.id: r.chapter for r in rows})
        return rows

    def _progress(self, job_id: int, p: RenderProgress) -> None:
        self.queue.update(job_id, done=p.done, total=p.total, failed=p.failed, eta=p.eta, current=p.current)
        now = time.monotonic()
        if now - self._last_emit >= EMIT_EVERY_S or p.done + p.failed >= p.total:
            self._last_emit = now
            self._flush(force=True)
            self.snapshot()

    def _should_stop(self, job_id: int) -> bool:
        """Between sentences: obey cancel/pause, serve a waiting preview first."""
        paused = False
        while True:
            control = self.queue.control(job_id)
            if control == "yield":
                self._yielded = True
                control = "stop"
            if control == "stop":
                if paused:
                    self.queue.hold(None)
                return True
            served = self._service_preview()
            if control == "run" and not served:
                if paused:
                    self.queue.hold(None)
                    self.stats.set_rendering(True)
                    self.snapshot()
                return False
            if control == "pause":
                if not paused:
                    paused = True
                    self.stats.set_rendering(False)
                    self._flush(force=True)
                    self.queue.hold(job_id)
                    self.snapshot()
                if not served:
                    self.queue.wait(0.25)

    def _flush(self, force: bool = False) -> None:
        """Send the states that changed in the chapters touched since the last flush."""
        if not self._touched:
            return
        rows = self.project.sentences(sorted(self._touched))
        self._touched.clear()
        changes = []
        for r in rows:
            sig = (r.state, r.reason, r.cache_key, r.synth_count)
            if self._known.get(r.id) != sig:
                self._known[r.id] = sig
                changes.append(SentenceState(r.id, r.state, r.reason, r.cache_key, r.duration, r.synth_count))
        if changes:
            self.statesChanged.emit(StateDelta(tuple(changes)))

    def _watched_synthesizer(self, eng: Engine, settings: SynthesisSettings):  # noqa: ANN202
        """The render loop's own synthesizer, watched: sentences show as rendering
        before they are spoken, and the readouts learn the speed."""
        inner = each_synthesizer(eng, settings)

        def run(requests: Sequence[SynthRequest]) -> list:
            ids = [r.sentence_id for r in requests]
            self.statesChanged.emit(StateDelta(tuple(SentenceState(i, "rendering") for i in ids)))
            self._touched.update(self._chapter_of[i] for i in ids if i in self._chapter_of)
            started = time.monotonic()
            out = inner(requests)
            spent = time.monotonic() - started
            good = [a for a in out if isinstance(a, np.ndarray)]
            self.stats.record(sum(a.size for a in good) / float(eng.sample_rate), spent, len(good))
            return out

        return run

    # ------------------------------------------------------------ previews

    def _service_preview(self) -> bool:
        """Synthesize one chunk of the newest preview if the player wants it; True if it did."""
        request = self.queue.take_preview()
        if request is not None:
            self._drop_preview()
            self._preview = _Preview(request)
        act = self._preview
        if act is None or self.feed is None:
            return False
        rid = act.request.request_id
        if not self.queue.preview_wanted(rid) or act.k >= len(act.request.passages):
            self._drop_preview()
            return False
        if not self.feed.wants_more(rid):
            return False
        passage = act.request.passages[act.k]
        try:
            if act.chunks is None:
                from studio.engine.serving.streaming import stream_passage

                settings = self._job_settings or self.project.settings()  # never swap engines mid-job
                engine = self._engine(passage.voice_id, settings)
                synthesis = Direction(rate=passage.rate).synthesis(settings.synthesis)  # the render's rate
                if passage.casting is not None:  # a character's sample: as the cast render speaks its parts
                    synthesis = cast_settings(synthesis, passage.casting)
                act.chunks = stream_passage(engine, passage.text, passage.language, synthesis,
                                            lexicon=self.project.lexicon.effective())
            chunk = next(act.chunks, None)
            if chunk is not None and passage.casting is not None:
                perf = passage.casting.performance
                chunk = replace(chunk, samples=perform(np.asarray(chunk.samples, np.float32), chunk.sample_rate,
                                                       pitch=perf.pitch, pace=perf.pace))
        except Exception as exc:  # noqa: BLE001 - the player says why and skips the passage
            info = describe_error(exc, "synthesize the preview")
            self.feed.fail(rid, passage.index, info.message)
            self._next_passage(act)
            return True
        if chunk is None:
            ok = self.feed.deliver(rid, passage.index, np.zeros(0, np.float32), 22050, (0, 0), True)
            last = True
        else:
            ok = self.feed.deliver(rid, passage.index, chunk.samples, chunk.sample_rate, chunk.span, chunk.is_last)
            last = chunk.is_last
        if not ok:
            self._drop_preview()
        elif last:
            self._next_passage(act)
        return True

    def _next_passage(self, act: _Preview) -> None:
        if act.chunks is not None:
            close = getattr(act.chunks, "close", None)
            if close is not None:
                close()
        act.chunks = None
        act.k += 1
        if act.k >= len(act.request.passages):
            self._preview = None

    def _drop_preview(self) -> None:
        act, self._preview = self._preview, None
        if act is not None and act.chunks is not None:
            close = getattr(act.chunks, "close", None)
            if close is not None:
                close()

    # ------------------------------------------------------------ engines

    def plan_for(self, settings: ProjectSettings) -> EnginePlan:
        """The engine plan of a job: ``studio render``'s, with this app's model-process choice."""
        return plan_for_project(settings, isolation=self.isolation)

    def _engine(self, voice_id: str, settings: ProjectSettings) -> Engine:
        plan = self.plan_for(settings)
        if plan != self._plan:
            self._close_engines()
            self._plan = plan
        engine = self._engines.pop(voice_id, None)
        if engine is None:
            from studio.engine.voice.catalog import get_voice

            label = plan.preset
            started = time.monotonic()
            engine = self.build(plan.with_voice(get_voice(voice_id)))
            need = _pending_build(engine)
            what, about = (need.what, need.about) if need is not None else ("", "")
            doing = f"Preparing {what} for voice {voice_id} ({label})" if need else f"Loading voice {voice_id} ({label})"
            self.engineStatus.emit(EngineStatus(f"{doing}\u2026", True, label, what, about))
            try:
                engine.load()
            except BaseException:
                engine.close()
                self.engineStatus.emit(EngineStatus(f"Voice {voice_id} failed to load", False, label, what, about))
                raise
            log.info("loaded voice %s (%s) in %.1f s", voice_id, label, time.monotonic() - started)
            built = f", built {what} once" if need else ""
            self.engineStatus.emit(EngineStatus(
                f"Voice {voice_id} ready ({label}, loaded in {time.monotonic() - started:.1f} s{built})", False, label,
                what, about))
            while len(self._engines) >= MAX_ENGINES:
                oldest = next(iter(self._engines))
                self._engines.pop(oldest).close()
        self._engines[voice_id] = engine  # most recently used last
        self.stats.engine = engine
        return engine

    def _close_engines(self) -> None:
        engines, self._engines = self._engines, {}
        self.stats.engine = None
        for engine in engines.values():
            try:
                engine.close()
            except Exception:  # noqa: BLE001 - closing must not mask anything
                log.exception("closing an engine failed")
