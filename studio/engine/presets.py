"""Presets: named, honest combinations of engine, device and precision.

A preset is data (:class:`Preset`); whether it can run *here* is checked for real
(:func:`availability`: imports torch / tensorrt, asks ``torch.cuda.is_available()``;
``bf16-cpu`` finds its packages without importing them, see :func:`_bf16_installed`)
and opening one (:func:`open_preset`) either returns an engine or raises
:class:`~studio.core.errors.PresetUnavailable` with the reason a person can act on.

Every engine says what it actually does on *this* voice through
:meth:`~studio.engine.base.Engine.describe` (e.g. dynamic quantization counts the
layers it quantized: zero on a VITS voice, which is all convolutions).

Presets, and what each runs for a Piper voice (every family describes them for its own
voices, in its own words: :meth:`studio.engine.family.VoiceFamily.describe_preset`):

=================  =========  ======  ============  =========================================
name               engine     device  precision     what it changes
=================  =========  ======  ============  =========================================
``fp32-cpu``       onnx       cpu     fp32          default: the voice's ONNX on ONNX Runtime (4-D decoder)
``fp32-torch``     torch      cpu*    fp32          coqui Vits on PyTorch (``device="cuda"`` ok)
``dynamic-int8``   torch      cpu     dynamic-int8  quantize_dynamic on Linear/LSTM/GRU
``int8-cpu``       onnx       cpu     int8          ORT static INT8 (calibrated Conv layers)
``bf16-cpu``       torch      cpu     bf16          ONNX encoder, flow + decoder in BF16 on torch (avx512_bf16/AMX)
``fp16-cuda``      torch      cuda    fp16          the torch model in half precision on CUDA
``tensorrt-int8``  tensorrt   cuda    int8          TensorRT INT8 + FP16 engine, calibrated
=================  =========  ======  ============  =========================================
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from studio.core.errors import PresetUnavailable
from studio.engine.families import family_of

if TYPE_CHECKING:  # the engine interface pulls in numpy: `studio --help` and the parsers need only the data
    from studio.engine.base import Engine
    from studio.engine.voice.info import VoiceInfo

_LOGGER = logging.getLogger(__name__)

EngineKind = Literal["onnx", "torch", "tensorrt"]
Device = Literal["cpu", "cuda"]
Precision = Literal["fp32", "fp16", "bf16", "int8", "dynamic-int8"]


@dataclass(frozen=True)
class Preset:
    """One preset and how it runs. ``device`` is the default device (``fp32-torch`` also
    takes ``cuda``). ``cpu_streams``: rendered by one single-thread stream per physical core,
    decoding in windows (so its process keeps the windows' few buffer sizes in the heap)."""

    name: str
    engine: EngineKind
    device: Device
    precision: Precision
    #: what it runs, said generically; a family says it for its own voices
    #: (:meth:`studio.engine.family.VoiceFamily.describe_preset`, :func:`describe`)
    summary: str
    cpu_streams: bool = False

    @property
    def backend(self) -> str:
        """The project settings' backend: ``onnx`` or ``torch`` (TensorRT builds on torch)."""
        return "onnx" if self.engine == "onnx" else "torch"

    def __post_init__(self) -> None:
        if self.engine not in ("onnx", "torch", "tensorrt"):
            raise ValueError(f"preset {self.name}: unknown engine {self.engine!r}")
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"preset {self.name}: unknown device {self.device!r}")
        if self.precision not in ("fp32", "fp16", "bf16", "int8", "dynamic-int8"):
            raise ValueError(f"preset {self.name}: unknown precision {self.precision!r}")


DEFAULT_PRESET = "fp32-cpu"

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("fp32-cpu", "onnx", "cpu", "fp32", "ONNX Runtime on the CPU, float32: the reference.", cpu_streams=True),
        Preset("fp32-torch", "torch", "cpu", "fp32", "PyTorch, float32, on the CPU or an NVIDIA GPU."),
        Preset("dynamic-int8", "torch", "cpu", "dynamic-int8",
               "PyTorch's dynamic quantization: int8 weights for Linear/LSTM/GRU layers, CPU only."),
        Preset("int8-cpu", "onnx", "cpu", "int8", "ONNX Runtime on the CPU with 8-bit layers.", cpu_streams=True),
        Preset("bf16-cpu", "torch", "cpu", "bf16",
               "bfloat16 on a CPU with BF16 instructions (avx512_bf16 or AMX).", cpu_streams=True),
        Preset("fp16-cuda", "torch", "cuda", "fp16", "Half precision (float16) on an NVIDIA GPU: about half the memory."),
        Preset("tensorrt-int8", "tensorrt", "cuda", "int8",
               "A TensorRT engine built on this GPU: INT8 + FP16 kernels, cached after the first build."),
    )
}


#: what a project (or a command) that names only a backend renders with
BACKEND_PRESETS = {"onnx": "fp32-cpu", "torch": "fp32-torch"}


def preset_for_backend(backend: str | None) -> Preset:
    """The FP32 preset of a backend (``onnx`` when none is named)."""
    return PRESETS[BACKEND_PRESETS.get(backend or "onnx", DEFAULT_PRESET)]


def preset_for_voice(voice: Any, backend: str | None = None) -> Preset:
    """The preset ``voice`` renders with when nobody chose one: its backend's FP32 preset when
    the voice runs it, else the first of the voice's own presets that can run here (else its
    first, which :func:`open_preset` then refuses with the reason)."""
    preset = preset_for_backend(backend)
    runs = voice.abilities.presets
    if not runs or preset.name in runs:
        return preset
    return PRESETS[next((name for name in runs if availability(name).ok), runs[0])]


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


class Missing(StrEnum):
    """What keeps a preset from running here, as a code: the desktop puts it into a producer's
    words (``studio.desktop.preset_words``) and never reads the library's wording."""

    DEVICE = "device"  # an unknown device was asked for
    NEEDS_GPU = "needs-gpu"  # the preset runs on CUDA only
    CPU_ONLY = "cpu-only"  # the preset runs on the CPU only
    ONNXRUNTIME = "onnxruntime"
    ONNX_INT8 = "onnx-int8"  # ONNX Runtime without its quantization tools
    BF16_CPU = "bf16-cpu"  # a CPU without BF16 instructions
    TORCH = "torch"
    COQUI = "coqui"
    COQUI_BROKEN = "coqui-broken"  # installed, but importing it fails
    QUANTIZED_KERNELS = "quantized-kernels"  # a torch without quantized CPU kernels
    TORCH_NO_CUDA = "torch-no-cuda"  # a torch built without CUDA
    NO_GPU = "no-gpu"
    TENSORRT = "tensorrt"
    TENSORRT_BROKEN = "tensorrt-broken"  # installed, but importing it fails (a library it needs)
    UNKNOWN_PRESET = "unknown-preset"


class Availability(NamedTuple):
    """Whether a preset runs here: ``reason`` says what it runs on, or why not, in the words of
    the library that refused (the detail for whoever fixes the install); ``missing`` names what is
    missing as a code (None when it runs)."""

    ok: bool
    reason: str
    missing: Missing | None = None


def _refused(missing: Missing, reason: str) -> Availability:
    return Availability(False, reason, missing)


def _import(name: str):
    return importlib.import_module(name)


def _check_torch() -> tuple[Availability, Any]:
    try:
        torch = _import("torch")
    except ImportError as exc:
        return _refused(Missing.TORCH, f"torch is not installed (pip install 'audiobook-studio[torch]'): {exc}"), None
    return Availability(True, f"torch {torch.__version__}"), torch


def _check_coqui() -> Availability:
    try:
        _import("TTS.tts.models.vits")
    except ImportError as exc:
        return _refused(Missing.COQUI, f"coqui-tts is not installed (pip install 'audiobook-studio[torch]'): {exc}")
    except Exception as exc:  # a broken install raises all sorts of things
        return _refused(Missing.COQUI_BROKEN, f"coqui-tts cannot be imported: {type(exc).__name__}: {exc}")
    return Availability(True, "coqui-tts")


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _bf16_installed(why_cpu: str) -> Availability:
    """bf16-cpu's packages, found without importing them.

    Why not imported here: a render checks its preset in the parent process before
    the model process starts, and importing torch and coqui there cost ~3 CPU seconds
    that the model process (which imports torch anyway, and coqui only to build its
    decoder once) then could not use. A torch that is installed but broken, or
    lacks oneDNN, is reported by the model process when it loads
    (:class:`~studio.engine.torchvits.script_decoder.ScriptWindowDecoder`).
    """
    import importlib.metadata

    for module, extra, missing in (("torch", "torch", Missing.TORCH), ("TTS", "coqui-tts", Missing.COQUI)):
        if not _installed(module):
            return _refused(missing, f"{extra} is not installed (pip install 'audiobook-studio[torch]')")
    return Availability(True, f"torch {importlib.metadata.version('torch')} bfloat16 via oneDNN on a {why_cpu}")


def _check_cuda(torch) -> Availability:
    if getattr(torch.version, "cuda", None) is None:
        return _refused(Missing.TORCH_NO_CUDA, (
            f"this torch build ({torch.__version__}) has no CUDA support "
            "(torch.version.cuda is None); install a CUDA build of torch"
        ))
    try:
        ok = torch.cuda.is_available()
    except Exception as exc:  # pragma: no cover - broken driver
        return _refused(Missing.NO_GPU, f"no CUDA device: torch.cuda.is_available() raised {exc}")
    if not ok:
        return _refused(Missing.NO_GPU, "no CUDA device: torch.cuda.is_available() is False")
    return Availability(True, f"CUDA device {torch.cuda.get_device_name(torch.cuda.current_device())}")


def availability(preset: str | Preset, device: str | None = None) -> Availability:
    """``(True, what it will run on)`` or ``(False, why not, what is missing)``, checked on this machine.

    ``device`` overrides the preset's default device where the preset allows it
    (only ``fp32-torch`` runs on both).
    """
    try:
        p = get_preset(preset)
    except PresetUnavailable as exc:
        return _refused(Missing.UNKNOWN_PRESET, str(exc))
    device = device or p.device
    if device not in ("cpu",) and not device.startswith("cuda"):
        return _refused(Missing.DEVICE, f"unknown device {device!r} (cpu or cuda)")
    if device != p.device and p.name != "fp32-torch":
        return _refused(Missing.NEEDS_GPU if p.device == "cuda" else Missing.CPU_ONLY,
                        f"preset {p.name} runs on {p.device} only")

    if p.engine == "onnx":  # found, not imported: a render checks this before its model process starts
        import importlib.metadata

        if not _installed("onnxruntime"):
            return _refused(Missing.ONNXRUNTIME, "onnxruntime is not installed")
        version = importlib.metadata.version("onnxruntime")
        if p.precision == "int8":
            if not _installed("onnxruntime.quantization"):
                return _refused(Missing.ONNX_INT8, "ONNX Runtime INT8 quantization is unavailable "
                                                   "(onnxruntime.quantization is missing)")
            return Availability(True, f"ONNX Runtime {version} INT8 on CPU")
        return Availability(True, f"ONNX Runtime {version} on CPU")

    if p.precision == "bf16":  # the CPU first: no install makes BF16 fast on a CPU without it
        from studio.engine.cpu_features import bf16_support

        ok, why_cpu = bf16_support()
        if not ok:
            return _refused(Missing.BF16_CPU, why_cpu)
        return _bf16_installed(why_cpu)
    got, torch = _check_torch()
    if not got.ok:
        return got
    coqui = _check_coqui()
    if not coqui.ok:
        return coqui

    if p.precision == "dynamic-int8":
        engines = [e for e in getattr(torch.backends.quantized, "supported_engines", []) if e != "none"]
        if not engines:
            return _refused(Missing.QUANTIZED_KERNELS,
                            "this torch build has no quantized CPU kernels (torch.backends.quantized)")
        return Availability(True, f"{got.reason} CPU, quantized engine {torch.backends.quantized.engine}")

    if device.startswith("cuda"):
        cuda = _check_cuda(torch)
        if not cuda.ok:
            return cuda
        if p.engine == "tensorrt":
            try:
                trt = _import("tensorrt")
            except ImportError:
                from studio.engine.tensorrt.runtime import INSTALL_HINT

                return _refused(Missing.TENSORRT, f"TensorRT is not installed ({INSTALL_HINT})")
            except Exception as exc:  # missing libnvinfer etc.
                return _refused(Missing.TENSORRT_BROKEN, f"TensorRT cannot be imported: {type(exc).__name__}: {exc}")
            return Availability(True, f"TensorRT {getattr(trt, '__version__', '?')} on {cuda.reason}")
        return Availability(True, f"{got.reason} on {cuda.reason}")
    return Availability(True, f"{got.reason} on CPU")


def available_presets() -> dict[str, Availability]:
    """``{name: (ok, reason)}`` for every preset, in display order."""
    return {name: availability(name) for name in PRESETS}


# ------------------------------------------------------------------ opening


def open_preset(preset_name: str | Preset, voice=None, *, device: str | None = None,
                threads: int | None = None, **kw) -> Engine:
    """One backend engine for ``voice`` (VoiceInfo, voice id, or None = bundled) under a preset.

    The leaf of :func:`studio.stack.build.build_engine`, which adds streams,
    batching and the model process around it; call that one to render. Raises
    PresetUnavailable (with the reason) when the preset cannot run here.
    ``device`` overrides the preset's device where it allows (``fp32-torch``);
    ``threads`` is the engine's intra-op thread count; other keywords go to the
    engine (``calibration_sentences`` / ``cache_dir`` for the INT8 presets). The
    engine is returned constructed, not loaded.
    """
    preset = get_preset(preset_name)
    ok, reason, _missing = availability(preset, device)
    if not ok:
        raise PresetUnavailable(f"preset {preset.name} is unavailable: {reason}")
    if voice is None or isinstance(voice, str):
        from studio.engine.voice.catalog import get_voice

        voice = get_voice(voice)
    if preset.name not in voice.abilities.presets:
        runs = ", ".join(voice.abilities.presets) or "none yet"
        raise PresetUnavailable(f"voice {voice.id} cannot run preset {preset.name} (its presets: {runs})")
    return family_of(voice).open_engine(preset, voice, device=device, threads=threads, **kw)


def describe(preset_name: str, voice: VoiceInfo) -> str:
    """What ``preset_name`` runs for ``voice``, in its family's own words (else the table's)."""
    return family_of(voice).describe_preset(preset_name) or get_preset(preset_name).summary


__all__ = [
    "Preset",
    "PRESETS",
    "DEFAULT_PRESET",
    "get_preset",
    "Availability",
    "Missing",
    "availability",
    "available_presets",
    "open_preset",
    "describe",
]
