"""Presets: named, honest combinations of engine, device and precision.

A preset is data (:class:`Preset`); whether it can run *here* is checked for real
(:func:`availability`: imports torch / tensorrt, asks ``torch.cuda.is_available()``)
and opening one (:func:`open_preset`) either returns an engine or raises
:class:`~studio.core.errors.PresetUnavailable` with the reason a person can act on.

Every engine :func:`open_preset` returns has ``describe()``, which says what the
preset actually did on *this* voice (e.g. dynamic quantization counts the layers it
quantized: zero on a VITS voice, which is all convolutions), and a ``preset``
attribute naming the :class:`Preset`.

Presets:

=================  =========  ======  ============  =========================================
name               engine     device  precision     what it changes
=================  =========  ======  ============  =========================================
``fp32-cpu``       onnx       cpu     fp32          default: the voice's ONNX on ONNX Runtime
``fp32-torch``     torch      cpu*    fp32          coqui Vits on PyTorch (``device="cuda"`` ok)
``dynamic-int8``   torch      cpu     dynamic-int8  quantize_dynamic on Linear/LSTM/GRU
``int8-cpu``       onnx       cpu     int8          ORT static INT8 (calibrated Conv layers)
``fp16-cuda``      torch      cuda    fp16          the torch model in half precision on CUDA
``tensorrt-int8``  tensorrt   cuda    int8          TensorRT INT8 + FP16 engine, calibrated
=================  =========  ======  ============  =========================================
"""

from __future__ import annotations

import importlib
import logging
import types
from dataclasses import dataclass
from typing import Any, Literal

from studio.core.errors import EngineError, PresetUnavailable, StudioError
from studio.engine.base import Engine

_LOGGER = logging.getLogger(__name__)

EngineKind = Literal["onnx", "torch", "tensorrt"]
Device = Literal["cpu", "cuda"]
Precision = Literal["fp32", "fp16", "int8", "dynamic-int8"]


@dataclass(frozen=True)
class Preset:
    """One preset. ``device`` is the default device (``fp32-torch`` also takes ``cuda``)."""

    name: str
    engine: EngineKind
    device: Device
    precision: Precision
    summary: str

    def __post_init__(self) -> None:
        if self.engine not in ("onnx", "torch", "tensorrt"):
            raise ValueError(f"preset {self.name}: unknown engine {self.engine!r}")
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"preset {self.name}: unknown device {self.device!r}")
        if self.precision not in ("fp32", "fp16", "int8", "dynamic-int8"):
            raise ValueError(f"preset {self.name}: unknown precision {self.precision!r}")


DEFAULT_PRESET = "fp32-cpu"

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "fp32-cpu", "onnx", "cpu", "fp32",
            "The voice's own ONNX graph on ONNX Runtime, CPU, float32. The reference: "
            "nothing is changed.",
        ),
        Preset(
            "fp32-torch", "torch", "cpu", "fp32",
            "The same weights as a coqui-tts Vits model on PyTorch, float32, on CPU or "
            "CUDA. Same audio as fp32-cpu with noise off; the base of the other torch presets.",
        ),
        Preset(
            "dynamic-int8", "torch", "cpu", "dynamic-int8",
            "torch.ao.quantization.quantize_dynamic: int8 weights for Linear/LSTM/GRU layers, "
            "activations quantized on the fly, CPU only. Speeds up LSTM/attention models "
            "(Tacotron 2); a VITS voice has none of these layers, so there it runs as FP32.",
        ),
        Preset(
            "int8-cpu", "onnx", "cpu", "int8",
            "ONNX Runtime static INT8: calibrated on real sentences, only the Conv layers "
            "where INT8 does not hurt (flow, early decoder stages); durations stay FP32.",
        ),
        Preset(
            "fp16-cuda", "torch", "cuda", "fp16",
            "The torch model in half precision on an NVIDIA GPU: weights and activations "
            "float16, about half the VRAM, tensor cores; batch sentences for throughput.",
        ),
        Preset(
            "tensorrt-int8", "tensorrt", "cuda", "int8",
            "A TensorRT engine built on this GPU: INT8 (entropy-calibrated on real sentences) "
            "+ FP16 kernels, encoder/durations kept FP32, profile shaped by the project's "
            "sentence lengths; cached on disk after the first build.",
        ),
    )
}


def get_preset(name: str | Preset) -> Preset:
    """The preset called ``name``; PresetUnavailable listing the choices otherwise."""
    if isinstance(name, Preset):
        return name
    try:
        return PRESETS[name]
    except KeyError:
        raise PresetUnavailable(
            f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}"
        ) from None


# ------------------------------------------------------------------ availability


def _import(name: str):
    return importlib.import_module(name)


def _check_torch() -> tuple[bool, str, Any]:
    try:
        torch = _import("torch")
    except ImportError as exc:
        return False, f"torch is not installed (pip install 'studio[torch]'): {exc}", None
    return True, f"torch {torch.__version__}", torch


def _check_coqui() -> tuple[bool, str]:
    try:
        _import("TTS.tts.models.vits")
    except ImportError as exc:
        return False, f"coqui-tts is not installed (pip install 'studio[torch]'): {exc}"
    except Exception as exc:  # a broken install raises all sorts of things
        return False, f"coqui-tts cannot be imported: {type(exc).__name__}: {exc}"
    return True, "coqui-tts"


def _check_cuda(torch) -> tuple[bool, str]:
    if getattr(torch.version, "cuda", None) is None:
        return False, (
            f"this torch build ({torch.__version__}) has no CUDA support "
            "(torch.version.cuda is None); install a CUDA build of torch"
        )
    try:
        ok = torch.cuda.is_available()
    except Exception as exc:  # pragma: no cover - broken driver
        return False, f"no CUDA device: torch.cuda.is_available() raised {exc}"
    if not ok:
        return False, "no CUDA device: torch.cuda.is_available() is False"
    return True, f"CUDA device {torch.cuda.get_device_name(torch.cuda.current_device())}"


def availability(preset: str | Preset, device: str | None = None) -> tuple[bool, str]:
    """``(True, what it will run on)`` or ``(False, why not)``, checked on this machine.

    ``device`` overrides the preset's default device where the preset allows it
    (only ``fp32-torch`` runs on both).
    """
    try:
        p = get_preset(preset)
    except PresetUnavailable as exc:
        return False, str(exc)
    device = device or p.device
    if device not in ("cpu",) and not device.startswith("cuda"):
        return False, f"unknown device {device!r} (cpu or cuda)"
    if device != p.device and p.name != "fp32-torch":
        return False, f"preset {p.name} runs on {p.device} only"

    if p.engine == "onnx":
        try:
            ort = _import("onnxruntime")
        except ImportError as exc:
            return False, f"onnxruntime is not installed: {exc}"
        if p.precision == "int8":
            try:
                _import("onnxruntime.quantization")
                module = _import("studio.engine.int8_cpu")
                getattr(module, "Int8OnnxEngine")
            except (ImportError, AttributeError) as exc:
                return False, f"ONNX Runtime INT8 quantization is unavailable: {exc}"
            return True, f"ONNX Runtime {ort.__version__} INT8 on CPU"
        return True, f"ONNX Runtime {ort.__version__} on CPU"

    ok, why, torch = _check_torch()
    if not ok:
        return False, why
    ok, why_coqui = _check_coqui()
    if not ok:
        return False, why_coqui

    if p.precision == "dynamic-int8":
        engines = [e for e in getattr(torch.backends.quantized, "supported_engines", []) if e != "none"]
        if not engines:
            return False, "this torch build has no quantized CPU kernels (torch.backends.quantized)"
        return True, f"{why} CPU, quantized engine {torch.backends.quantized.engine}"

    if device.startswith("cuda"):
        ok, why_cuda = _check_cuda(torch)
        if not ok:
            return False, why_cuda
        if p.engine == "tensorrt":
            try:
                trt = _import("tensorrt")
            except ImportError:
                return False, "TensorRT is not installed (pip install tensorrt)"
            except Exception as exc:  # missing libnvinfer etc.
                return False, f"TensorRT cannot be imported: {type(exc).__name__}: {exc}"
            return True, f"TensorRT {getattr(trt, '__version__', '?')} on {why_cuda}"
        return True, f"{why} on {why_cuda}"
    return True, f"{why} on CPU"


def available_presets() -> dict[str, tuple[bool, str]]:
    """``{name: (ok, reason)}`` for every preset, in display order."""
    return {name: availability(name) for name in PRESETS}


# ------------------------------------------------------------------ opening


def _resolve_voice(voice):
    if voice is None or isinstance(voice, str):
        from studio.engine.voices import get_voice

        return get_voice(voice)
    return voice


def _attach(engine: Engine, preset: Preset, describe=None) -> Engine:
    """Name the preset on the engine and make sure it can ``describe()`` itself."""
    engine.preset = preset  # type: ignore[attr-defined]
    if describe is not None and not callable(getattr(type(engine), "describe", None)):
        engine.describe = types.MethodType(describe, engine)  # type: ignore[attr-defined]
    return engine


def _describe_onnx(self) -> str:
    import onnxruntime

    self.load()
    providers = ", ".join(getattr(self, "providers", []) or ["CPUExecutionProvider"])
    threads = getattr(self, "threads", None)
    return (
        f"fp32-cpu: {self.model_path.name} on ONNX Runtime {onnxruntime.__version__} "
        f"({providers}, {threads or 'default'} threads), float32, unmodified graph"
    )


def _describe_torch(self) -> str:
    import torch

    self.load()
    device = self.torch_device
    where = (
        f"{device} ({torch.cuda.get_device_name(device)})"
        if device.type == "cuda"
        else f"CPU ({torch.get_num_threads()} threads)"
    )
    precision = str(self.dtype).removeprefix("torch.")
    n_params = sum(p.numel() for p in self.model.parameters())
    n_half = sum(p.numel() for p in self.model.parameters() if p.dtype == torch.float16)
    text = (
        f"{self.preset.name}: coqui Vits on PyTorch {torch.__version__}, {where}, {precision} "
        f"({n_half if precision == 'float16' else n_params:,} of {n_params:,} parameters in {precision})"
    )
    report = getattr(self, "weights_report", None)
    if report is not None and hasattr(report, "summary"):
        text += f"; weights: {report.summary()}"
    return text


def open_preset(preset_name: str | Preset, voice=None, **kw) -> Engine:
    """An engine for ``voice`` (VoiceInfo, voice id, or None = bundled) under the preset.

    Raises PresetUnavailable (with the reason) when the preset cannot run here.
    Keyword arguments go to the engine: ``threads`` everywhere; ``device`` for
    ``fp32-torch``; ``calibration_sentences`` / ``cache_dir`` for the INT8 presets;
    anything else the engine's constructor takes. The engine is returned unloaded
    except where building it is the point of opening it (none today).
    """
    preset = get_preset(preset_name)
    device = kw.pop("device", None)
    ok, reason = availability(preset, device)
    if not ok:
        raise PresetUnavailable(f"preset {preset.name} is unavailable: {reason}")
    voice = _resolve_voice(voice)
    threads = kw.pop("threads", None)
    try:
        if preset.name == "fp32-cpu":
            from studio.engine.registry import load_engine

            if kw:
                raise EngineError(f"fp32-cpu takes only threads, got {sorted(kw)}")
            engine = load_engine(voice, "onnx", device="cpu", threads=threads)
            return _attach(engine, preset, _describe_onnx)

        if preset.name == "fp32-torch":
            from studio.engine.registry import load_engine

            if kw:
                raise EngineError(f"fp32-torch takes only device and threads, got {sorted(kw)}")
            engine = load_engine(voice, "torch", device=device or "cpu", threads=threads)
            return _attach(engine, preset, _describe_torch)

        if preset.name == "dynamic-int8":
            from studio.engine.dynamic_quant import DynamicQuantTorchEngine

            return _attach(DynamicQuantTorchEngine(voice, threads=threads, **kw), preset)

        if preset.name == "int8-cpu":
            from studio.engine.int8_cpu import Int8OnnxEngine

            _require_piper(voice, preset)
            engine = Int8OnnxEngine(voice.model_path, voice.config_path, threads=threads, **kw)
            return _attach(engine, preset)

        if preset.name == "fp16-cuda":
            from studio.engine.torch_vits import TorchVitsEngine

            engine = TorchVitsEngine(voice, device="cuda", dtype="float16", threads=threads, **kw)
            return _attach(engine, preset, _describe_torch)

        if preset.name == "tensorrt-int8":
            from studio.engine.tensorrt_engine import TensorRTEngine

            engine = TensorRTEngine(voice, device="cuda", precision="int8", threads=threads, **kw)
            return _attach(engine, preset)
    except StudioError:
        raise
    except TypeError as exc:  # an engine rejected a keyword
        raise EngineError(f"preset {preset.name}: {exc}") from exc
    raise PresetUnavailable(f"preset {preset.name} has no engine")  # pragma: no cover


def _require_piper(voice, preset: Preset) -> None:
    if getattr(voice, "backend", "piper") != "piper":
        raise PresetUnavailable(f"preset {preset.name} needs a Piper (.onnx) voice; {voice.id} is {voice.backend}")


__all__ = [
    "Preset",
    "PRESETS",
    "DEFAULT_PRESET",
    "get_preset",
    "availability",
    "available_presets",
    "open_preset",
]
