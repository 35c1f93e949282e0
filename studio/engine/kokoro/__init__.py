"""The Kokoro voice family (Kokoro-82M v1.0, Apache-2.0) on ONNX Runtime, without torch.

Modules: ``model`` (the offline parts joined and checked, the user's own files, the
fast CPU build), ``widen`` (that build's graph rewrite), ``packs`` (voice packs and
blends), ``frontend`` (espeak-ng phonemes to Kokoro's symbols), ``engine`` (the
Engine). Nothing here is imported by listing voices except ``packs``, and nothing
imports ONNX Runtime until an engine loads.
"""

from __future__ import annotations

from typing import Any

def open_engine(preset: Any, voice: Any, *, device: str | None = None, threads: int | None = None, **kw: Any):
    """The engine for ``voice`` (a catalog VoiceInfo of the Kokoro family) under ``preset``."""
    from studio.core.errors import PresetUnavailable
    from studio.engine.kokoro.engine import KokoroEngine
    from studio.engine.kokoro.model import model_for
    from studio.engine.kokoro.packs import PRESETS, USER_FOLDER, load_pack
    from studio.engine.voice.catalog import default_voices_dir

    if preset.name not in PRESETS:
        raise PresetUnavailable(f"Kokoro voices run on {', '.join(PRESETS)}, not {preset.name}")
    if kw:
        raise PresetUnavailable(f"preset {preset.name} with a Kokoro voice takes only threads, got {sorted(kw)}")
    choice = model_for(preset.precision, default_voices_dir() / USER_FOLDER)
    name = voice.id.split(":", 1)[1]
    return KokoroEngine(choice, None, voice.language, threads=threads, label=f"{voice.id}",
                        pack_loader=lambda: load_pack(voice.model_path, name), device=device or preset.device)
