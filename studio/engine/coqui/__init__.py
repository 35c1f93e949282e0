"""The Coqui family: checkpoints saved by coqui-tts (Tacotron 2 with its vocoder, Glow-TTS,
VITS, YourTTS, XTTS v2) rendered through coqui-tts as the library.

:func:`open_engine` is what :func:`studio.engine.presets.open_preset` calls for a voice of
this family. Nothing heavy is imported here: the catalogue reads checkpoints through
:mod:`studio.engine.coqui.checkpoint` without torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from studio.engine.base import Engine
    from studio.engine.presets import Preset


def open_engine(preset: "Preset", voice: Any, *, device: str | None = None, threads: int | None = None,
                **kw: Any) -> "Engine":
    """The engine for a Coqui ``voice`` (VoiceInfo) under ``preset``, constructed, not loaded."""
    from studio.core.errors import EngineError
    from studio.engine.coqui.engine import CoquiEngine

    if kw:
        raise EngineError(f"preset {preset.name} takes no options for a Coqui voice, got {sorted(kw)}")
    precision = {"fp32-torch": "float32", "dynamic-int8": "dynamic-int8", "fp16-cuda": "float16"}[preset.name]
    return CoquiEngine(voice, device=device or preset.device, precision=precision, threads=threads)
