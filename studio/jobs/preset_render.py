"""Rendering under a preset: which engine a render gets, and how it is fed.

Why a module of its own: the preset decides more than the engine class. On a CPU
the fast path is several single-thread sessions fed from one queue
(:class:`~studio.engine.cpu_streams.MultiStreamSynthesizer`, measured 1.2-1.35x one
two-thread session on 2 cores); on CUDA it is length-bucketed batches
(:class:`~studio.engine.batching.BatchedEngine`); the torch CPU presets speak one
sentence at a time. This module turns a project's settings into that engine plus
the batch size the render loop should hand it, in this process or -- with
:class:`~studio.jobs.session.Isolation` -- in a child process.

Presets and the project (what enters the audio cache key):

* ``--preset NAME`` is stored in the project settings (``preset``, with ``backend``
  = the preset's engine family, ``onnx`` or ``torch``); both enter every cache key
  (:attr:`~studio.project.settings.ProjectSettings.engine_token`), so sentences
  rendered under another preset are other cache entries and switching back reuses
  them.
* A project without a preset (made before presets, by the GUI, or with ``--engine``
  alone) renders as its backend's FP32 preset (``onnx`` -> ``fp32-cpu``, ``torch``
  -> ``fp32-torch``): the same model and settings, so its keys are left as they are
  and nothing renders again. Once such a project has no audio yet, it adopts that
  preset by name.
* Asking for the preset a project already renders with changes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from studio.core.errors import PresetUnavailable, StudioError
from studio.engine.base import Engine, SynthesisSettings
from studio.engine.presets import DEFAULT_PRESET, Preset, availability, get_preset
from studio.jobs.isolation import EngineSpec, IsolatedEngine
from studio.project.settings import ProjectSettings
from studio.project.store import Project

log = logging.getLogger(__name__)

#: presets rendered by N single-thread sessions (one per physical core)
STREAM_PRESETS = frozenset({"fp32-cpu", "int8-cpu"})
#: presets rendered in length-bucketed batches on the GPU
BATCHED_PRESETS = frozenset({"fp16-cuda", "tensorrt-int8"})
#: sentences per stream handed to the streams at once (longest first inside a batch)
SENTENCES_PER_STREAM = 4
#: sentences per render batch on CUDA (BatchedEngine's measured default batch size)
CUDA_BATCH = 32
#: what a project without a preset renders as
BACKEND_PRESETS = {"onnx": "fp32-cpu", "torch": "fp32-torch"}


def backend_for(preset: str | Preset) -> str:
    """The project-settings backend of a preset: ``onnx`` or ``torch`` (TensorRT builds on torch)."""
    return "onnx" if get_preset(preset).engine == "onnx" else "torch"


def effective_preset(settings: ProjectSettings) -> str:
    """The preset a project renders with (its own, else its backend's FP32 preset)."""
    return settings.preset or BACKEND_PRESETS.get(settings.backend, DEFAULT_PRESET)


def require_available(name: str) -> Preset:
    """The preset, or PresetUnavailable with one line saying why it cannot run here."""
    preset = get_preset(name)  # unknown name: PresetUnavailable listing the choices
    ok, reason = availability(preset)
    if not ok:
        raise PresetUnavailable(f"preset {preset.name} is unavailable: {reason}")
    return preset


def check_choice(preset: str | None, engine: str | None, streams: int | None = None) -> None:
    """Validate ``--preset`` / ``--engine`` / ``--streams`` before a project is touched."""
    if streams is not None and streams < 1:
        raise StudioError(f"--streams {streams} must be 1 or more")
    if not preset:
        return
    p = require_available(preset)
    if engine and engine != backend_for(p):
        raise StudioError(
            f"--engine {engine} does not fit preset {p.name} (it runs on {p.engine}); leave out --engine"
        )


def choose_preset(
    project: Project, settings: ProjectSettings, preset: str | None = None, engine: str | None = None
) -> ProjectSettings:
    """Apply ``--preset`` / ``--engine`` to the project's settings (see the module doc).

    Call after :func:`~studio.jobs.session.apply_choices` (which applies ``--engine``
    and ``--voice``). Raises PresetUnavailable when the resulting preset cannot run
    here (e.g. a project rendered on a GPU machine, opened on a laptop).
    """
    changes: dict[str, str] = {}
    if preset:
        p = get_preset(preset)
        if effective_preset(settings) != p.name:
            changes = {"preset": p.name, "backend": backend_for(p)}
    elif engine and settings.preset and backend_for(settings.preset) != engine:
        changes = {"preset": ""}  # --engine alone: that backend's default preset
    wanted = settings.with_changes(**changes) if changes else settings
    if not wanted.preset and not _has_audio(project):
        wanted = wanted.with_changes(preset=effective_preset(wanted))  # nothing cached yet: name the preset
    if wanted != settings:
        settings = wanted
        project.update_settings(settings)
        log.info("project preset: %s", settings.preset or f"{settings.backend} default")
    require_available(effective_preset(settings))
    return settings


def _has_audio(project: Project) -> bool:
    if any(r.cache_key for r in project.sentences()):
        return True
    return any(True for _ in project.cache.root.glob("*/*.wav"))


# --------------------------------------------------------------------- engines


class MultiStreamEngine(Engine):
    """``streams`` single-thread engines of a preset behind the Engine interface.

    :meth:`synthesize_batch` hands the whole batch to a
    :class:`~studio.engine.cpu_streams.MultiStreamSynthesizer` (longest first, one
    queue, every core busy) and returns the audio in input order.
    """

    def __init__(self, preset: str, voice=None, streams: int | None = None) -> None:
        from studio.engine.cpu_streams import MultiStreamSynthesizer
        from studio.engine.presets import open_preset
        from studio.engine.voices import get_voice

        self.preset_name = get_preset(preset).name
        self.voice = get_voice(voice) if voice is None or isinstance(voice, str) else voice
        self.synth = MultiStreamSynthesizer(
            lambda: open_preset(self.preset_name, self.voice, threads=1), streams=streams
        )
        self.streams = self.synth.streams
        self.name = f"{self.preset_name}x{self.streams}"

    @property
    def sample_rate(self) -> int:
        return self.synth.sample_rate

    def load(self) -> None:
        self.synth.load()

    def text_to_ids(self, text: str, language: str) -> list[int]:
        return self.synth.text_to_ids(text, language)

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        if not ids:
            return []
        return self.synth.synthesize_all(ids, settings)

    def describe(self) -> str:
        self.load()
        first = self.synth.engines[0]
        inner = first.describe() if callable(getattr(first, "describe", None)) else self.preset_name
        return f"{self.streams} stream(s) x 1 thread, longest sentence first; each: {inner}"

    def close(self) -> None:
        self.synth.close()


def _batched(engine: Engine) -> Engine:
    from studio.engine.batching import BatchedEngine

    return BatchedEngine(engine, device="cuda")


def build_preset_engine(preset: str, voice=None, streams: int | None = None) -> Engine:
    """A constructed (not loaded) engine for rendering under ``preset`` in this process."""
    from studio.engine.presets import open_preset

    name = get_preset(preset).name
    if name in STREAM_PRESETS:
        return MultiStreamEngine(name, voice, streams)
    engine = open_preset(name, voice)
    return _batched(engine) if name in BATCHED_PRESETS else engine


@dataclass(frozen=True)
class PresetSpec(EngineSpec):
    """:class:`~studio.jobs.isolation.EngineSpec` that builds the render engine of a
    preset (streams, batching) in the model process."""

    streams: int | None = None

    def build(self) -> Engine:
        from studio.engine.voices import get_voice

        voice = self.voice if self.voice is not None else get_voice(None)
        return build_preset_engine(self.preset or DEFAULT_PRESET, voice, self.streams)


def render_batch_size(preset: str, streams: int | None = None) -> int:
    """Sentences the render loop should hand the engine at once under ``preset``."""
    from studio.engine.cpu_streams import physical_cores

    name = get_preset(preset).name
    if name in STREAM_PRESETS:
        return SENTENCES_PER_STREAM * (streams or physical_cores())
    if name in BATCHED_PRESETS:
        return CUDA_BATCH
    return 1


def make_preset_engine(voice_id: str | None, preset: str, *, streams: int | None = None, isolation=None) -> Engine:
    """The render engine for a voice under ``preset``: in this process, or -- with
    ``isolation`` (:class:`~studio.jobs.session.Isolation`) -- in a child process."""
    from studio.engine.voices import get_voice

    voice = get_voice(voice_id)
    if isolation is None:
        return build_preset_engine(preset, voice, streams)
    spec = PresetSpec(voice=voice, backend=backend_for(preset), preset=get_preset(preset).name,
                      cuda_alloc_conf=isolation.cuda_alloc_conf, streams=streams)
    return IsolatedEngine(spec, recycle_after=isolation.recycle_after or None)


@dataclass(frozen=True)
class PresetEngines:
    """What a render under a preset needs: the default voice's engine, a factory for
    other voices' engines, the batch size, and a one-line description."""

    engine: Engine
    engine_for: object
    batch_size: int
    label: str


def preset_engines(settings: ProjectSettings, *, streams: int | None = None, isolation=None) -> PresetEngines:
    """Engines for rendering a project under its (effective) preset."""
    preset = effective_preset(settings)

    def engine_for(voice_id: str) -> Engine:
        return make_preset_engine(voice_id, preset, streams=streams, isolation=isolation)

    engine = engine_for(settings.voice_id)
    batch = render_batch_size(preset, streams)
    if preset in STREAM_PRESETS:
        from studio.engine.cpu_streams import physical_cores

        how = f"{streams or physical_cores()} stream(s) x 1 thread, {batch} sentences at a time"
    elif preset in BATCHED_PRESETS:
        how = f"batches of up to {batch}"
    else:
        how = "one sentence at a time"
    where = "model in a child process" if isolation is not None else "model in this process"
    stored = "" if settings.preset else f" (project has no preset: {settings.backend} default)"
    return PresetEngines(engine, engine_for, batch, f"preset {preset}{stored}: {how}, {where}")


__all__ = [
    "BACKEND_PRESETS",
    "MultiStreamEngine",
    "PresetEngines",
    "PresetSpec",
    "backend_for",
    "build_preset_engine",
    "check_choice",
    "choose_preset",
    "effective_preset",
    "make_preset_engine",
    "preset_engines",
    "render_batch_size",
    "require_available",
]
