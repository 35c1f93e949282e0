"""Presets in plain words, for people who produce audiobooks rather than benchmark engines.

Why a table here and not in the engine: the engine names presets by what they
are (precision, runtime, device); a producer chooses by what they get (quality,
speed, which hardware). The technical name stays visible as the detail.
"""

from __future__ import annotations

PLAIN_NAMES: dict[str, str] = {
    "fp32-cpu": "Best quality",
    "fp32-torch": "Best quality (PyTorch)",
    "dynamic-int8": "Compact on CPU",
    "int8-cpu": "Fast on CPU",
    "fp16-cuda": "Fast on NVIDIA GPU",
    "tensorrt-int8": "Fastest on NVIDIA GPU",
}

#: the preset a project without one uses
DEFAULT_PRESET = "fp32-cpu"


def plain_name(preset: str) -> str:
    """``"Fast on CPU"`` for ``int8-cpu``; an unknown name is shown as it is."""
    name = preset or DEFAULT_PRESET
    return PLAIN_NAMES.get(name, name)


def preset_label(preset: str, voice_id: str = "") -> str:
    """The status bar's words: plain name, technical name as detail, and the voice."""
    name = preset or DEFAULT_PRESET
    voice = f"  \u00b7  Voice: {voice_id}" if voice_id else ""
    return f"Preset: {plain_name(name)} ({name}){voice}"
