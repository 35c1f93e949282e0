"""The Coqui voice family: checkpoints saved by coqui-tts (Tacotron 2 with its vocoder, Glow-TTS,
VITS, YourTTS, XTTS v2) rendered through coqui-tts as the library.

Nothing heavy is imported here: the catalogue reads checkpoints through
:mod:`studio.engine.coqui.checkpoint` without torch (``voices``); ``download`` fetches models
by name with their vocoder; ``cloning`` takes an XTTS v2 voice from a recording.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from studio.engine.family import FetchRequest, Fetched, Found, LicenceNote, VoiceFamily

if TYPE_CHECKING:
    from studio.engine.base import Engine
    from studio.engine.voice.info import VoiceInfo

#: how coqui-tts names its models: ``tts_models/en/ljspeech/tacotron2-DDC``
MODEL_PREFIX = "tts_models/"


class CoquiFamily(VoiceFamily):
    """Coqui checkpoints: the torch presets their architecture can run, downloads by model name,
    cloning (XTTS v2). Their own front ends (characters or phonemes) take no IPA entries."""

    name = "coqui"
    fetch_example = "tts_models/en/ljspeech/vits"
    cloning_model = "tts_models/multilingual/multi-dataset/xtts_v2"
    preset_words = {
        "fp32-torch": "The checkpoint on PyTorch through coqui-tts, float32, on CPU or CUDA: the model as "
                      "trained (with its vocoder for a spectrogram model).",
        "dynamic-int8": "torch.ao.quantization.quantize_dynamic on the model's Linear and LSTM layers "
                        "(Tacotron 2's attention and decoder), activations quantized on the fly, CPU only; "
                        "one sentence at a time.",
        "fp16-cuda": "The checkpoint on an NVIDIA GPU under float16 autocast (weights stay float32), "
                     "sentences batched where the architecture allows.",
    }

    def voices(self, user_dir: Path | None, hub_dir: Path | None) -> Iterable[Found]:
        from studio.engine.coqui.voices import found

        return found(user_dir, hub_dir)

    def open_engine(self, preset: Any, voice: VoiceInfo, *, device: str | None = None,
                    threads: int | None = None, **kw: Any) -> Engine:
        from studio.core.errors import EngineError
        from studio.engine.coqui.engine import CoquiEngine

        if kw:
            raise EngineError(f"preset {preset.name} takes no options for a Coqui voice, got {sorted(kw)}")
        precision = {"fp32-torch": "float32", "dynamic-int8": "dynamic-int8", "fp16-cuda": "float16"}[preset.name]
        return CoquiEngine(voice, device=device or preset.device, precision=precision, threads=threads)

    def fetches(self, name: str) -> bool:
        return name.startswith(MODEL_PREFIX)

    def licence(self, name: str, catalogue: Mapping[str, Any] | None = None) -> LicenceNote:
        """The model card's licence; ``agreement`` where it asks or forbids selling. VoiceError: no such model."""
        from studio.engine.coqui.download import model_card, non_commercial

        card = model_card(name, catalogue)
        return LicenceNote(name, card.licence_line, card.agreement or non_commercial(card.licence) is not None)

    def fetch(self, name: str, request: FetchRequest) -> Fetched:
        """The model and the vocoder it pairs with, into coqui-tts's downloads folder."""
        from studio.engine.coqui.download import download_coqui_voice
        from studio.engine.coqui.voices import coqui_models_dir, coqui_voice_info

        folder = download_coqui_voice(name, coqui_models_dir(), models=request.catalogue, agree=request.agree,
                                      timeout=request.timeout, progress=request.progress, force=request.force)
        return Fetched(name, folder, coqui_voice_info(folder, source="coqui-hub"))

    def cloner(self) -> Any:
        from studio.engine.coqui import cloning

        return cloning


FAMILY = CoquiFamily()
