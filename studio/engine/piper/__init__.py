"""The Piper voice family: VITS voices exported by Piper (``.onnx`` + ``.onnx.json``), the
studio's bundled default among them.

A Piper voice runs on every backend the studio has (ONNX Runtime, torch, TensorRT, a
Triton server); :mod:`studio.engine.piper.engines` picks the engine for a preset, the
backends stay in their own packages. Modules: ``voices`` (listing, read from the
configs), ``engines`` (preset -> engine). Importing this package imports neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from studio.engine.family import FetchRequest, Fetched, Found, FrontEnd, VoiceFamily

if TYPE_CHECKING:
    from studio.engine.base import Engine
    from studio.engine.voice.info import VoiceInfo


class PiperFamily(VoiceFamily):
    """Piper voices: every preset, the studio's espeak-ng front end, the piper-voices catalogue."""

    name = "piper"
    fetch_example = "en_US-lessac-medium"
    preset_words = {
        "fp32-cpu": "The voice's own ONNX weights on ONNX Runtime, CPU, float32. The reference: "
                    "same math; only the decoder's tensors are laid out for ORT's faster kernels "
                    "(output within 1e-5 of the untouched graph).",
        "fp32-torch": "The same weights as a coqui-tts Vits model on PyTorch, float32, on CPU or "
                      "CUDA. Same audio as fp32-cpu with noise off; the base of the other torch presets.",
        "dynamic-int8": "torch.ao.quantization.quantize_dynamic: int8 weights for Linear/LSTM/GRU layers, "
                        "activations quantized on the fly, CPU only. A VITS voice has none of these layers, "
                        "so here it runs as FP32.",
        "int8-cpu": "ONNX Runtime static INT8: calibrated on real sentences, only the Conv layers "
                    "where INT8 does not hurt (flow, early decoder stages); durations stay FP32.",
        "bf16-cpu": "The voice's FP32 ONNX text encoder and durations (as fp32-cpu: same sentence lengths, "
                    "same noise), then the flow and decoder (~85 % of the work) in bfloat16 on torch and "
                    "oneDNN, on a CPU with BF16 instructions (avx512_bf16 or AMX).",
        "fp16-cuda": "The torch model in half precision on an NVIDIA GPU: weights and activations "
                     "float16, about half the VRAM, tensor cores; batch sentences for throughput.",
        "tensorrt-int8": "A TensorRT engine built on this GPU: INT8 (entropy-calibrated on real sentences) "
                         "+ FP16 kernels, encoder/durations kept FP32, profile shaped by the project's "
                         "sentence lengths; cached on disk after the first build.",
    }

    def voices(self, user_dir: Path | None, hub_dir: Path | None) -> Iterable[Found]:
        from studio.engine.piper.voices import found

        return found(user_dir)

    def default_voice(self) -> VoiceInfo:
        from studio.engine.piper.voices import bundled_voice

        return bundled_voice()

    def open_engine(self, preset: Any, voice: VoiceInfo, *, device: str | None = None,
                    threads: int | None = None, **kw: Any) -> Engine:
        from studio.engine.piper.engines import open_engine

        return open_engine(preset.name, voice, device, threads, **kw)

    def fetches(self, name: str) -> bool:
        """A piper-voices name (``en_US-lessac-medium``): no family prefix, no path; the downloader
        says what is wrong with a malformed one."""
        return ":" not in name and "/" not in name

    def fetch(self, name: str, request: FetchRequest) -> Fetched:
        from studio.engine.voice.download import DEFAULT_BASE_URL, download_piper_voice, fetch_voice_index

        base = request.base_url or DEFAULT_BASE_URL
        index = fetch_voice_index(base, request.timeout)
        info = download_piper_voice(name, request.voices_dir, base_url=base, timeout=request.timeout, index=index,
                                    force=request.force, progress=request.progress)
        return Fetched(name, info.model_path, info)

    def front_end(self, voice: VoiceInfo) -> FrontEnd:
        from studio.engine.voice.config import VoiceConfig
        from studio.engine.voice.phonemize import PiperFrontEnd

        return PiperFrontEnd(VoiceConfig.from_file(voice.config_path))


FAMILY = PiperFamily()
