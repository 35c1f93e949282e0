"""Which preset a project renders with: the user's choice applied to its settings.

How a preset is then run (streams, batches, the model process) is
:mod:`studio.stack.build`'s business.

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
from typing import TYPE_CHECKING

from studio.core.errors import PresetUnavailable, StudioError
from studio.engine.presets import Preset, availability, get_preset
from studio.stack.build import effective_preset
from studio.stack.preset_speed import default_preset

if TYPE_CHECKING:  # a render checks its preset before the project store is imported (start-up)
    from studio.engine.voice.info import VoiceInfo
    from studio.project.settings import ProjectSettings
    from studio.project.store import Project

log = logging.getLogger(__name__)


def require_available(name: str) -> Preset:
    """The preset, or PresetUnavailable with one line saying why it cannot run here."""
    preset = get_preset(name)  # unknown name: PresetUnavailable listing the choices
    ok, reason, _missing = availability(preset)
    if not ok:
        raise PresetUnavailable(f"preset {preset.name} is unavailable: {reason}")
    return preset


def check_choice(preset: str | None, engine: str | None, streams: int | None = None, *, remote: bool = False) -> None:
    """Validate ``--preset`` / ``--engine`` / ``--streams`` before a project is touched
    (``remote``: the preset runs on Triton servers, so this machine need not run it)."""
    if streams is not None and streams < 1:
        raise StudioError(f"--streams {streams} must be 1 or more")
    if not preset:
        return
    p = get_preset(preset) if remote else require_available(preset)
    if engine and engine != p.backend:
        raise StudioError(
            f"--engine {engine} does not fit preset {p.name} (it runs on {p.engine}); leave out --engine"
        )


def choose_preset(
    project: Project, settings: ProjectSettings, preset: str | None = None, engine: str | None = None
) -> ProjectSettings:
    # A project rendering on Triton servers (settings.triton) runs its preset there:
    # this machine need not be able to run it.
    """Apply ``--preset`` / ``--engine`` to the project's settings (see the module doc).

    Call after :func:`~studio.project.opening.apply_choices` (which applies ``--engine``
    and ``--voice``). Raises PresetUnavailable when the resulting preset cannot run
    here (e.g. a project rendered on a GPU machine, opened on a laptop).
    """
    from studio.engine.voice.catalog import get_voice

    voice = get_voice(settings.voice_id)
    wanted = settings
    if preset:
        p = get_preset(preset)
        if p.name not in voice.abilities.presets:
            raise PresetUnavailable(f"voice {voice.id} cannot run preset {p.name} "
                                    f"(its presets: {', '.join(voice.abilities.presets) or 'none'})")
        if effective_preset(settings, voice) != p or (not settings.preset and not _has_audio(project)):
            # named even where it is the backend's default: a preset asked for is never replaced by
            # the one measured fastest here (with_default_preset names that only where none is asked)
            wanted = settings.with_changes(preset=p.name, backend=p.backend)
    else:
        if engine and settings.preset and get_preset(settings.preset).backend != engine:
            wanted = settings.with_changes(preset="")  # --engine alone: that backend's default preset
        wanted = with_default_preset(project, wanted, voice)
    if wanted != settings:
        settings = wanted
        project.update_settings(settings)
        log.info("project preset: %s", settings.preset or f"{settings.backend} default")
    if settings.triton is None:
        require_available(effective_preset(settings, voice).name)
    return settings


def with_default_preset(project: Project, settings: ProjectSettings, voice: VoiceInfo | None = None, *,
                        new_voice: bool = False) -> ProjectSettings:
    """``settings`` naming the voice's default preset here (:func:`~studio.stack.preset_speed.default_preset`:
    the one measured fastest on this machine, read from the cache, never measured here) where they name
    none the voice runs, and naming one renders nothing again: the project has no audio yet, or
    ``new_voice`` (its voice was just changed, so every sentence renders again anyway). Not stored.
    The command line's render and the desktop (a new project, a voice chosen) both call this."""
    if voice is None:
        from studio.engine.voice.catalog import get_voice

        voice = get_voice(settings.voice_id)
    if settings.preset and settings.preset not in voice.abilities.presets:
        settings = settings.with_changes(preset="")  # chosen for another voice: this voice's own default
    if not settings.preset and (new_voice or not _has_audio(project)):
        named = default_preset(voice, settings.backend)
        settings = settings.with_changes(preset=named.name, backend=named.backend)
    return settings


def _has_audio(project: Project) -> bool:
    if any(r.cache_key for r in project.sentences()):
        return True
    return any(True for _ in project.cache.root.glob("*/*.wav"))
