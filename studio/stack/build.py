"""The one way to build an engine stack: (voice, preset, device, streams/batch, isolation).

Why one builder: the render command, the desktop app's worker and preview, the
benchmark and the soak must run a preset the same way, or a producer who picks
``int8-cpu`` in the app gets something other than what ``studio render --preset
int8-cpu`` measured. A render is described by an :class:`EnginePlan` (frozen, so
the desktop and CLI paths can be compared value by value) and built by
:func:`build_engine` into:

* the preset's backend engine (:func:`studio.engine.presets.open_preset`);
* around it, on a CPU preset with several streams, a
  :class:`~studio.engine.serving.streams.MultiStreamEngine` of single-thread engines
  (measured 1.2-1.35x one two-thread session on 2 cores); on CUDA a
  :class:`~studio.engine.serving.batched.BatchedEngine` of length-bucketed batches;
* around that, with :class:`Isolation`, an
  :class:`~studio.stack.isolation.engine.IsolatedEngine` whose child process builds the same
  plan in-process, so a native crash costs one sentence, not the job;
* or, when the plan names Triton servers (``EnginePlan.triton``, from the project's
  settings), a :class:`~studio.engine.triton.client.TritonEngine` that sends the
  preset's synthesis to them: no local model, so no streams and no model process;
  the render loop hands it ``batch x in_flight`` sentences per call so that several
  requests are in flight at once.

The plan also fixes how many sentences the render loop hands the engine at once
(``batch_size``), so the loop and the engine agree.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from studio.engine.base import CUDA_BATCH, Engine
from studio.engine.presets import DEFAULT_PRESET, Preset, get_preset, preset_for_backend
from studio.stack.isolation.memory import SERVING_BOUNDS, WINDOWED_TORCH_ONEDNN_CACHE_CAPACITY, HeapBounds
from studio.stack.isolation.spec import DEFAULT_CUDA_ALLOC_CONF, DEFAULT_RECYCLE_AFTER, EngineSpec

if TYPE_CHECKING:
    from studio.core.triton_target import TritonTarget
    from studio.engine.voice.info import VoiceInfo
    from studio.project.settings import ProjectSettings

log = logging.getLogger(__name__)

#: sentences per stream handed to the streams at once (longest first inside a batch)
SENTENCES_PER_STREAM = 4


@dataclass(frozen=True)
class Isolation:
    """How to run the model in a child process (:mod:`studio.stack.isolation`).

    ``recycle_after``: start a fresh model process after this many sentences (0 or
    None: never) -- a new process is the only sure way to give back memory a long
    run has fragmented. ``cuda_alloc_conf`` becomes ``PYTORCH_CUDA_ALLOC_CONF`` in
    the model process (None: inherit this process's environment).
    """

    recycle_after: int | None = DEFAULT_RECYCLE_AFTER
    cuda_alloc_conf: str | None = DEFAULT_CUDA_ALLOC_CONF


@dataclass(frozen=True)
class EnginePlan:
    """Everything that decides which engine stack a render gets; picklable.

    ``voice`` None is the bundled voice (resolved where the engine is built).
    ``streams`` > 1 runs that many single-thread engines; ``batch_size`` is how many
    sentences the render loop hands the engine per call (and the CUDA batcher's
    largest batch). ``options`` are extra keywords for the preset's engine
    (``cache_dir``, ``calibration_sentences`` for the INT8 presets). ``triton``: render
    on these Triton servers instead of a local model.
    """

    preset: str
    voice: "VoiceInfo | None" = None
    device: str = "cpu"
    streams: int = 1
    batch_size: int = 1
    threads: int | None = None
    isolation: Isolation | None = None
    options: tuple[tuple[str, Any], ...] = ()
    triton: "TritonTarget | None" = None

    @property
    def batched(self) -> bool:
        return self.device.startswith("cuda") and self.batch_size > 1

    def with_voice(self, voice: "VoiceInfo") -> "EnginePlan":
        return replace(self, voice=voice)

    def in_process(self) -> "EnginePlan":
        """The same stack without the model process (what that process builds)."""
        return replace(self, isolation=None)

    def describe(self) -> str:
        """How the plan renders, in one line (the engine's own line comes from describe())."""
        if self.triton is not None:
            return (f"preset {self.preset} on Triton ({', '.join(self.triton.servers)}): "
                    f"{self.batch_size} sentences at a time, {self.triton.in_flight} request(s) in flight")
        if self.streams > 1:
            how = f"{self.streams} stream(s) x 1 thread, {self.batch_size} sentences at a time"
        elif self.batched:
            how = f"batches of up to {self.batch_size} on {self.device}"
        else:
            how = "one sentence at a time"
        where = "model in a child process" if self.isolation is not None else "model in this process"
        return f"preset {self.preset}: {how}, {where}"


def plan_engine(
    preset: str | Preset | None = None,
    voice: "VoiceInfo | None" = None,
    *,
    device: str | None = None,
    streams: int | None = None,
    batch_size: int | None = None,
    threads: int | None = None,
    isolation: Isolation | None = None,
    options: tuple[tuple[str, Any], ...] = (),
    triton: "TritonTarget | None" = None,
) -> EnginePlan:
    """The plan for ``preset`` with the measured defaults filled in.

    CPU stream presets get one single-thread stream per physical core and
    :data:`SENTENCES_PER_STREAM` sentences per stream per call; CUDA presets get
    batches of :data:`CUDA_BATCH`; the rest speak one sentence at a time.
    ``streams``/``batch_size`` override the defaults. With ``triton`` the model runs
    on the servers: one "stream", ``batch x in_flight`` sentences per call, no
    model process.
    """
    p = get_preset(preset or DEFAULT_PRESET)
    device = device or p.device
    if triton is not None:
        return EnginePlan(p.name, voice, device, 1, batch_size or triton.batch * triton.in_flight, threads, None,
                          options, triton)
    if p.cpu_streams:
        from studio.engine.serving.streams import physical_cores

        n = streams or physical_cores()
        return EnginePlan(p.name, voice, device, n, batch_size or SENTENCES_PER_STREAM * n,
                          1 if threads is None else threads, isolation, options)
    batch = batch_size or (CUDA_BATCH if device.startswith("cuda") else 1)
    return EnginePlan(p.name, voice, device, 1, batch, threads, isolation, options)


def heap_bounds_for(preset: Preset) -> HeapBounds:
    """The bounds measured for a preset's way of running: windowed CPU streams keep their
    buffers in the heap (and the torch one its oneDNN kernels cached); the rest as they are."""
    if not preset.cpu_streams:
        return HeapBounds()
    if preset.engine == "torch":
        return replace(SERVING_BOUNDS, onednn_cache=WINDOWED_TORCH_ONEDNN_CACHE_CAPACITY)
    return SERVING_BOUNDS


def effective_preset(settings: "ProjectSettings", voice: "VoiceInfo | None" = None) -> Preset:
    """The preset a project renders with (its own, else its backend's FP32 preset, or with
    ``voice`` given, the first of the voice's presets when it cannot run that one)."""
    if settings.preset:
        return get_preset(settings.preset)
    if voice is not None:
        from studio.engine.presets import preset_for_voice

        return preset_for_voice(voice, settings.backend)
    return preset_for_backend(settings.backend)


def plan_for_project(
    settings: "ProjectSettings", *, streams: int | None = None, isolation: Isolation | None = None
) -> EnginePlan:
    """The plan a project's default voice renders with; the CLI and the desktop app
    both call this, with the user's streams and isolation choices."""
    from studio.engine.voice.catalog import get_voice

    voice = get_voice(settings.voice_id)
    return plan_engine(effective_preset(settings, voice), voice, streams=streams, isolation=isolation,
                       triton=settings.triton)


def build_engine(plan: EnginePlan) -> Engine:
    """The engine stack for ``plan``, constructed and not yet loaded."""
    if plan.triton is not None:
        return _triton_engine(plan)
    if plan.isolation is not None:
        from studio.stack.isolation.engine import IsolatedEngine

        return IsolatedEngine(engine_spec(plan), recycle_after=plan.isolation.recycle_after or None)
    from studio.engine.presets import open_preset
    from studio.engine.voice.catalog import get_voice

    voice = plan.voice if plan.voice is not None else get_voice(None)
    options = dict(plan.options)
    if plan.streams > 1:
        from studio.engine.serving.streams import MultiStreamEngine

        return MultiStreamEngine(lambda: open_preset(plan.preset, voice, device=plan.device, threads=1, **options),
                                 plan.streams, label=plan.preset)
    engine = open_preset(plan.preset, voice, device=plan.device, threads=plan.threads, **options)
    if plan.batched:
        return batch_engine(engine, plan.batch_size, plan.device, close_engine=True)
    return engine


def engine_spec(plan: EnginePlan) -> EngineSpec:
    """What a model process for ``plan`` is handed: this module's builder and the in-process plan.

    The builder is passed in (not imported by :mod:`studio.stack.isolation`), so the
    isolation package and this one do not import each other. The heap bounds are
    the ones measured for the preset's kind of engine; a torch stack is not probed
    in the parent for one-time builds (it has none, and probing would import torch).
    """

    preset = get_preset(plan.preset)
    isolation = plan.isolation or Isolation()
    return EngineSpec(plan=plan.in_process(), builder=build_engine, label=plan.preset,
                      probe_builds=preset.engine != "torch", cuda_alloc_conf=isolation.cuda_alloc_conf,
                      heap=heap_bounds_for(preset))


def _triton_engine(plan: EnginePlan) -> Engine:
    """The plan's voice on its Triton servers (model name: the target's, else the exported one)."""
    from studio.engine.triton.client import TritonEngine
    from studio.engine.triton.export import model_name_for
    from studio.engine.voice.catalog import get_voice

    assert plan.triton is not None
    voice = plan.voice if plan.voice is not None else get_voice(None)
    if not voice.abilities.triton:
        from studio.core.errors import EngineError

        raise EngineError(f"voice {voice.id} cannot render on Triton servers (its model has no Triton export)")
    return TritonEngine(voice.config_path, plan.triton, plan.triton.model or model_name_for(voice.id, plan.preset))


def batch_engine(engine: Engine, max_batch_size: int, device: str, *, close_engine: bool = False,
                 max_batch_tokens: int | None = None, bucket_ratio: float | None = None) -> Engine:
    """The CUDA render path's batching layer around an engine :func:`build_engine` made.

    :func:`build_engine` wraps CUDA plans in exactly this; measurements call it to
    compare batch sizes (or batched with unbatched output) on *one* loaded model
    instead of loading one per batch size. ``close_engine`` False: the wrapper's
    ``close`` leaves the inner engine open. ``max_batch_tokens`` None keeps the
    device's measured default, and so does ``bucket_ratio`` None (``inf``: no length
    buckets, every call's items go out in batches of ``max_batch_size``).
    """
    from studio.engine.serving.batched import BatchedEngine

    return BatchedEngine(engine, max_batch_size=max_batch_size, device=device, close_engine=close_engine,
                         max_batch_tokens=max_batch_tokens, bucket_ratio=bucket_ratio)


#: plan -> constructed engine; :func:`build_engine`, or a test's shared engine
EngineBuilder = Callable[[EnginePlan], Engine]


def voice_engines(plan: EnginePlan, build: EngineBuilder = build_engine) -> Callable[[str], Engine]:
    """voice id -> an engine built like ``plan`` for that voice (passages in other languages)."""
    from studio.engine.voice.catalog import get_voice

    def make(voice_id: str) -> Engine:
        return build(plan.with_voice(get_voice(voice_id)))

    return make


class EarlyStart:
    """An engine stack built from a plan guessed before the project is open, loading
    in the background meanwhile.

    Why: a one-sentence ``studio render`` used to open the project (text import,
    language detection: about a second of Python) and only then start the model
    (process spawn, imports, sessions: about as long again). On two or more cores
    the two can overlap. :meth:`take` hands the engine over when the real plan
    equals the guess, else closes it (the render then builds its own, as before).
    """

    def __init__(self, plan: EnginePlan, build: EngineBuilder = build_engine) -> None:
        import threading

        self.plan = plan
        self.engine: Engine | None = build(plan)
        self._thread = threading.Thread(target=self._load, name="studio-early-load", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        try:
            assert self.engine is not None
            self.engine.load()
        except Exception as exc:  # the render's own load() raises it again, with its context
            log.info("early model start failed (%s); the render will retry", exc)

    def take(self, plan: EnginePlan) -> Engine | None:
        """The early engine if ``plan`` is the one guessed (the caller owns it then), else None."""
        engine, self.engine = self.engine, None
        if engine is None:
            return None
        if plan == self.plan:
            return engine
        log.info("plan changed after the project opened (%s); the early engine is dropped", plan.describe())
        self._thread.join()
        engine.close()
        return None

    def close(self) -> None:
        """Drop the engine if nobody took it."""
        engine, self.engine = self.engine, None
        if engine is not None:
            self._thread.join()
            engine.close()
