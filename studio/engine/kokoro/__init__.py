"""The Kokoro voice family (Kokoro-82M v1.0, Apache-2.0) on ONNX Runtime, without torch.

Modules: ``model`` (the offline parts joined and checked, the user's own files, the
fast CPU build), ``widen`` (that build's graph rewrite), ``packs`` (voice packs and
blends), ``voices`` (the catalogue's view of them), ``frontend`` (espeak-ng phonemes to
Kokoro's symbols), ``engine`` (the Engine), ``mixer`` (blends), ``download``. Nothing
here is imported by listing voices except ``packs`` and ``voices``, and nothing imports
ONNX Runtime until an engine loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from studio.engine.family import FetchRequest, Fetched, Found, FrontEnd, Mixer, Offer, VoiceFamily

if TYPE_CHECKING:
    from studio.engine.base import Engine
    from studio.engine.voice.info import VoiceInfo

#: Kokoro's English packs (American, then British) and its FP32 model: what the desktop's library offers
OFFER = (
    "kokoro:af_heart", "kokoro:af_bella", "kokoro:af_nicole", "kokoro:af_sarah", "kokoro:af_sky",
    "kokoro:am_adam", "kokoro:am_michael", "kokoro:am_fenrir", "kokoro:bf_emma", "kokoro:bf_isabella",
    "kokoro:bm_george", "kokoro:bm_lewis", "kokoro:model-fp32",
)


class KokoroFamily(VoiceFamily):
    """Kokoro packs and blends: two CPU presets and a CUDA one, the espeak-ng front end in Kokoro's
    symbols, the mixer."""

    name = "kokoro"
    fetch_example = "kokoro:af_heart"
    preset_words = {
        "fp32-cpu": "Kokoro v1.0 on ONNX Runtime, CPU: your FP32 kokoro-v1.0.onnx when you have fetched it "
                    "(studio voices add kokoro:model-fp32), else the INT8 model with its generator's "
                    "convolutions widened to float32 (the other layers stay INT8); convolutions on 4-D "
                    "tensors, built once into the cache.",
        "int8-cpu": "Kokoro v1.0's INT8 model as published (ONNX Runtime dynamic quantization, not "
                    "calibrated by the studio): your kokoro-v1.0.int8.onnx, else the offline model; on a CPU "
                    "with VNNI its convolutions run as signed-weight integer products (the same audio, built "
                    "once into the cache). The quality reference, and the default until the presets are "
                    "measured on this computer.",
        "fp16-cuda": "Kokoro v1.0's FP16 export (else your FP32 one) on ONNX Runtime's CUDA provider: an "
                     "NVIDIA GPU and onnxruntime-gpu (studio voices add kokoro:model-fp16).",
    }

    def voices(self, user_dir: Path | None, hub_dir: Path | None) -> Iterable[Found]:
        from studio.engine.kokoro.voices import found

        return found(user_dir)

    def open_engine(self, preset: Any, voice: VoiceInfo, *, device: str | None = None,
                    threads: int | None = None, **kw: Any) -> Engine:
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

    def fetches(self, name: str) -> bool:
        from studio.engine.kokoro.download import is_kokoro

        return is_kokoro(name)

    def fetch(self, name: str, request: FetchRequest) -> Fetched:
        from studio.engine.kokoro.download import download
        from studio.engine.kokoro.packs import ID_PREFIX

        urls = {"packs_url": request.base_url, "models_url": request.base_url} if request.base_url else {}
        path = download(name, request.voices_dir, timeout=request.timeout, progress=request.progress, **urls)
        if name.removeprefix(ID_PREFIX).startswith("model-"):
            return Fetched(name, path, None)
        from studio.engine.voice.catalog import list_voices

        return Fetched(name, path, next((v for v in list_voices(request.voices_dir) if v.id == name), None))

    def offers(self, voices_dir: Path) -> tuple[Offer, ...]:
        """The English packs and the FP32 model, each marked installed when it is here."""
        from studio.engine.kokoro.model import USER_MODELS
        from studio.engine.kokoro.packs import ID_PREFIX, USER_FOLDER, list_packs, pack_language

        have = {ID_PREFIX + p.name for p in list_packs(voices_dir)}
        out = []
        for name in OFFER:
            what = name.removeprefix(ID_PREFIX)
            if what.startswith("model-"):
                precision = what.removeprefix("model-")
                here = (voices_dir / USER_FOLDER / USER_MODELS[precision]).is_file()
                out.append(Offer(name, "", f"Kokoro model {precision.upper()}", here))
            else:
                out.append(Offer(name, pack_language(what), "Kokoro pack", name in have))
        return tuple(out)

    def front_end(self, voice: VoiceInfo) -> FrontEnd:
        from studio.engine.kokoro.frontend import KokoroFrontEnd

        return KokoroFrontEnd(voice.language)

    def mixer(self) -> Mixer:
        from studio.engine.kokoro.mixer import MIXER

        return MIXER


FAMILY = KokoroFamily()
