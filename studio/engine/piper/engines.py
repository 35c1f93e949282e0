"""Which engine runs a Piper voice under each preset.

Why here and the engines elsewhere: a Piper voice runs on three backends (ONNX Runtime,
torch, TensorRT), each its own package that never imports the others; this family
package is the one place that picks among them, by preset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from studio.core.errors import EngineError, PresetUnavailable

if TYPE_CHECKING:
    from studio.engine.base import Engine
    from studio.engine.voice.info import VoiceInfo


def _fp32_cpu(voice: VoiceInfo, device: str | None, threads: int | None, **kw: Any) -> Engine:
    from studio.engine.onnx.piper import OnnxPiperEngine

    if kw:
        raise EngineError(f"fp32-cpu takes only threads, got {sorted(kw)}")
    return OnnxPiperEngine(voice.model_path, voice.config_path, threads=threads, decoder_4d=True)


def _int8_cpu(voice: VoiceInfo, device: str | None, threads: int | None, **kw: Any) -> Engine:
    from studio.engine.onnx.int8 import Int8OnnxEngine

    return Int8OnnxEngine(voice.model_path, voice.config_path, threads=threads, **kw)


def _fp32_torch(voice: VoiceInfo, device: str | None, threads: int | None, **kw: Any) -> Engine:
    from studio.engine.torchvits.engine import TorchVitsEngine

    if kw:
        raise EngineError(f"fp32-torch takes only device and threads, got {sorted(kw)}")
    return TorchVitsEngine(voice, device=device or "cpu", threads=threads)


def _dynamic_int8(voice: VoiceInfo, device: str | None, threads: int | None, **kw: Any) -> Engine:
    from studio.engine.torchvits.dynamic_quant import DynamicQuantTorchEngine

    return DynamicQuantTorchEngine(voice, threads=threads, **kw)


def _bf16_cpu(voice: VoiceInfo, device: str | None, threads: int | None, **kw: Any) -> Engine:
    from studio.engine.onnx.piper import OnnxPiperEngine
    from studio.engine.serving.split_engine import SplitEngine
    from studio.engine.torchvits.script_decoder import ScriptWindowDecoder

    # windows of 384 frames: torch's BF16 activations for 768-frame windows took the
    # process from 1.2 to 1.9 GB at its peak for no speed (1.39x vs 1.40x the piper CLI)
    encoder = OnnxPiperEngine(voice.model_path, voice.config_path, threads=threads, encode_only=True,
                              window_frames=384)
    return SplitEngine(encoder, ScriptWindowDecoder(voice, "bfloat16", threads=threads, **kw), "onnx+torch-bf16")


def _fp16_cuda(voice: VoiceInfo, device: str | None, threads: int | None, **kw: Any) -> Engine:
    from studio.engine.torchvits.engine import TorchVitsEngine

    return TorchVitsEngine(voice, device=device or "cuda", dtype="float16", threads=threads, **kw)


def _tensorrt_int8(voice: VoiceInfo, device: str | None, threads: int | None, **kw: Any) -> Engine:
    from studio.engine.tensorrt.engine import TensorRTEngine

    return TensorRTEngine(voice, device=device or "cuda", precision="int8", threads=threads, **kw)


#: preset name -> the engine it opens for a Piper voice
OPENERS: dict[str, Callable[..., Engine]] = {
    "fp32-cpu": _fp32_cpu,
    "fp32-torch": _fp32_torch,
    "dynamic-int8": _dynamic_int8,
    "int8-cpu": _int8_cpu,
    "bf16-cpu": _bf16_cpu,
    "fp16-cuda": _fp16_cuda,
    "tensorrt-int8": _tensorrt_int8,
}


def open_engine(preset_name: str, voice: VoiceInfo, device: str | None, threads: int | None, **kw: Any) -> Engine:
    """The engine for a Piper ``voice`` under ``preset_name``, constructed, not loaded."""
    opener = OPENERS.get(preset_name)
    if opener is None:  # pragma: no cover - PIPER_PRESETS and OPENERS list the same names
        raise PresetUnavailable(f"preset {preset_name} has no engine for a Piper voice")
    try:
        return opener(voice, device, threads, **kw)
    except TypeError as exc:  # an engine rejected a keyword
        raise EngineError(f"preset {preset_name}: {exc}") from exc
