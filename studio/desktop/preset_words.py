"""Presets in plain words, for people who produce audiobooks rather than benchmark engines.

Why a table here and not in the engine: the engine names presets by what they
are (precision, runtime, device) and says why one cannot run in the words of the
library that refused (``torch.cuda.is_available() is False``); a producer chooses
by what they get (quality, speed, which hardware) and needs to know what is
missing in words they can act on: the engine names that as a code
(:class:`~studio.engine.presets.Missing`), never matched here by its wording. The
technical name and the raw reason stay visible as the detail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from studio.engine.presets import DEFAULT_PRESET, Missing, preset_for_backend

if TYPE_CHECKING:
    from studio.project.settings import ProjectSettings

PLAIN_NAMES: dict[str, str] = {
    "fp32-cpu": "Best quality",
    "fp32-torch": "Best quality, on PyTorch",
    "dynamic-int8": "PyTorch with 8-bit layers",
    "int8-cpu": "Fast on CPU",
    "bf16-cpu": "Near-lossless 16-bit (speed: measure it here)",
    "fp16-cuda": "Fast on NVIDIA GPU",
    "tensorrt-int8": "Fastest on NVIDIA GPU (TensorRT)",
}

#: what is missing (:class:`studio.engine.presets.Missing`) -> the sentence a producer reads
PLAIN_REASONS: dict[Missing, str] = {
    Missing.TENSORRT: "TensorRT is not installed.",
    Missing.TENSORRT_BROKEN: "TensorRT is installed but cannot start (a library it needs is missing).",
    Missing.TORCH_NO_CUDA: "This PyTorch was built without NVIDIA GPU support.",
    Missing.NO_GPU: "No NVIDIA GPU was found on this computer.",
    Missing.TORCH: "PyTorch is not installed.",
    Missing.COQUI: "The PyTorch voice engine (coqui-tts) is not installed.",
    Missing.COQUI_BROKEN: "The PyTorch voice engine (coqui-tts) is installed but cannot start.",
    Missing.QUANTIZED_KERNELS: "This PyTorch has no 8-bit CPU support.",
    Missing.ONNX_INT8: "This ONNX Runtime cannot build 8-bit models.",
    Missing.ONNXRUNTIME: "ONNX Runtime is not installed.",
    Missing.BF16_CPU: "This computer's processor cannot do the fast 16-bit maths it needs "
                      "(it needs a recent AMD or Intel server CPU).",
    Missing.NEEDS_GPU: "It needs an NVIDIA GPU.",
    Missing.CPU_ONLY: "It runs on the CPU only.",
    Missing.DEVICE: "It cannot run on the device asked for.",
    Missing.UNKNOWN_PRESET: "This version of the studio does not know it.",
}
UNKNOWN_REASON = "It cannot run on this computer (the details say why)."


def plain_name(preset: str) -> str:
    """``"Fast on CPU"`` for ``int8-cpu``; an unknown name is shown as it is."""
    name = preset or DEFAULT_PRESET
    return PLAIN_NAMES.get(name, name)


def plain_reason(missing: str | None) -> str:
    """Why a preset cannot run here, from what is missing (``Availability.missing``), as a sentence
    a producer can act on; the library's own words stay the detail."""
    return PLAIN_REASONS.get(missing, UNKNOWN_REASON) if missing else UNKNOWN_REASON


def preset_label(preset: str, voice_id: str = "", backend: str = "") -> str:
    """The status bar's words: plain name, technical name as detail, and the voice.

    A project without a preset renders with its backend's default, which *is* a
    preset (:func:`studio.stack.build.effective_preset`); the words name it and
    say it is the engine default, as the Voices & Presets dialog's row does
    (:func:`default_row_name`), so the two never disagree.
    """
    name = preset or engine_default_name(backend, voice_id)
    voice = f"  \u00b7  Voice: {voice_id}" if voice_id else ""
    default = "" if preset else ", engine default"
    return f"Preset: {plain_name(name)} ({name}{default}){voice}"


def engine_default_name(backend: str, voice_id: str | None = None) -> str:
    """The preset a project without one renders with: its backend's FP32 preset, or the first of
    the voice's own presets when the voice cannot run that (:func:`studio.engine.presets.preset_for_voice`)."""
    if voice_id:
        from studio.core.errors import StudioError
        from studio.engine.presets import preset_for_voice
        from studio.engine.voice.catalog import get_voice

        try:
            return preset_for_voice(get_voice(voice_id), backend).name
        except StudioError:  # not installed here: the backend's default, as before
            pass
    return preset_for_backend(backend).name


def default_row_name(backend: str) -> tuple[str, str]:
    """The presets table's row for "no preset": what the project really renders with."""
    name = engine_default_name(backend)
    return f"{plain_name(name)} \u2014 engine default", f"({name}, no preset)"


def emphasis_note(settings: ProjectSettings | None) -> str:
    """What the direction dialog says about stressed words in this project: heard, or
    rendered plainly, by what, and on which presets they are heard."""
    from studio.engine.emphasis import HEARD_ON
    from studio.rendering.stressed_words import unheard

    what = unheard(settings) if settings is not None else None
    if what is None:
        return "Checked words are said longer and louder."
    return f"Checked words are said longer and louder on {', '.join(HEARD_ON)}; with {what} they are rendered plainly."
