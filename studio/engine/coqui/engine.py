"""A Coqui checkpoint behind the studio's Engine interface, with coqui-tts as the library.

Why coqui's own classes (``setup_model``, ``load_checkpoint``, the model's tokenizer and
audio processor) and not a copy: the checkpoints are coqui's, and whatever coqui fixes
in its models reaches the studio with an upgrade. What the studio adds around them:

* the passage's language passed explicitly to the tokenizer and, for a multilingual
  model, to the model (a wrong language tag gives wrong phonemes): the language rides
  in front of the ids (:mod:`studio.engine.coqui.ids`), because the render loop hands the
  engine ids and settings only;
* the speaker from the settings (``speaker_id``), refused when the model has no such one;
* sampling seeded by the sentence (:func:`studio.engine.noise.sentence_seed`), so a
  sentence rendered twice is the same audio;
* Tacotron 2 sentences batched with masks (:mod:`studio.engine.coqui.batching`); the
  other models speak one sentence at a time (their sampling noise is per item);
* the vocoder pairing of :mod:`studio.engine.coqui.vocoder`, or Griffin-Lim said aloud.

torch and coqui-tts are imported in :meth:`CoquiEngine.load`, never at import.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from studio.core.errors import EngineError, StudioError
from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, SynthesisSettings
from studio.engine.coqui.checkpoint import LABELS, MEL_MODELS, Checkpoint, localize_paths, read_checkpoint
from studio.engine.coqui.ids import split_language, with_language
from studio.engine.coqui.vocoder import check_fit, find_vocoder
from studio.engine.noise import sentence_seed
from studio.engine.waveform import limited

_LOGGER = logging.getLogger(__name__)

_DTYPES = {"float32": "float32", "float16": "float16", "dynamic-int8": "float32"}


class CoquiEngine(Engine):
    """One Coqui checkpoint (a VoiceInfo of the ``coqui`` family) on torch.

    ``precision``: ``float32``, ``float16`` (CUDA) or ``dynamic-int8`` (torch's dynamic
    quantization of the model's Linear and LSTM layers, CPU). The vocoder is found and
    checked here, before anything loads, so a vocoder that does not fit stops a render
    before it starts.
    """

    name = "torch"

    def __init__(self, voice: Any, *, device: str = "cpu", precision: str = "float32",
                 threads: int | None = None, models_dir: Path | None = None) -> None:
        if precision not in _DTYPES:
            raise EngineError(f"unknown precision {precision!r} for a Coqui voice")
        try:
            self.checkpoint: Checkpoint = read_checkpoint(Path(voice.config_path).parent)
        except StudioError as exc:
            raise EngineError(str(exc)) from exc
        self.voice_id = str(voice.id)
        self.device, self.precision, self.threads = str(device), precision, threads
        self.vocoder_folder: Path | None = None
        if self.checkpoint.model in MEL_MODELS:
            if models_dir is None:
                from studio.engine.coqui.voices import coqui_models_dir

                models_dir = coqui_models_dir()
            self.vocoder_folder = find_vocoder(self.checkpoint, models_dir)
            if self.vocoder_folder is not None:
                try:
                    check_fit(self.checkpoint, self.vocoder_folder)
                except StudioError as exc:
                    raise EngineError(str(exc)) from exc
        self.model: Any = None
        self.speaker: Any = None  # XTTS: the cloned voice's latents
        self.vocoder: Any = None
        self.vocoder_ap: Any = None
        self.quantized_layers = 0
        self._lock = threading.RLock()

    # ------------------------------------------------------------- interface

    @property
    def sample_rate(self) -> int:
        return self.checkpoint.sample_rate

    def load(self) -> None:
        with self._lock:
            if self.model is not None:
                return
            import torch

            if self.threads:
                torch.set_num_threads(self.threads)
            if self.device.startswith("cuda") and not torch.cuda.is_available():
                raise EngineError("no CUDA device: torch.cuda.is_available() is False")
            if self.checkpoint.model == "xtts":
                from studio.engine.coqui.xtts import load_speaker, load_xtts

                self.speaker = load_speaker(self.checkpoint.folder, torch.device(self.device))
                model = load_xtts(self.checkpoint, torch.device(self.device))
            else:
                model = self._load_model()
            if self.precision == "dynamic-int8":
                model, self.quantized_layers = _quantize(model)
            device = torch.device(self.device)
            model = model.to(device)  # float16: weights stay float32, the work runs under autocast (see _precision)
            if self.vocoder_folder is not None:
                from studio.engine.coqui.vocoder import load_vocoder

                try:
                    self.vocoder, self.vocoder_ap = load_vocoder(self.vocoder_folder, device)
                except Exception as exc:  # coqui raises anything on a bad checkpoint
                    raise EngineError(f"vocoder {self.vocoder_folder}: cannot be loaded "
                                      f"({type(exc).__name__}: {exc})") from exc
            elif self.checkpoint.model in MEL_MODELS:
                _LOGGER.warning("voice %s has no vocoder: rendering with Griffin-Lim (a fallback; audio "
                                "is rougher). Put the vocoder it pairs with in %s/vocoder/",
                                self.voice_id, self.checkpoint.folder)
            self.model = model

    def _load_model(self) -> Any:
        """coqui's model for the checkpoint, its config's paths pointed into the folder."""
        import logging as _logging

        from TTS.config import load_config
        from TTS.tts.models import setup_model

        _logging.getLogger("TTS").setLevel(_logging.WARNING)
        ck = self.checkpoint
        config = load_config(str(ck.config_path))
        localize_paths(config, ck.folder)
        try:
            model = setup_model(config)
        except Exception as exc:  # an incomplete config raises anything
            raise EngineError(f"{ck.folder.name}: coqui-tts cannot build the model from its config "
                              f"({type(exc).__name__}: {exc})") from exc
        try:
            model.load_checkpoint(config, str(ck.checkpoint_path), eval=True)
        except Exception as exc:  # truncated file, another model's weights, ...
            raise EngineError(f"{ck.checkpoint_path}: the checkpoint cannot be loaded (truncated, or not "
                              f"this config's model): {type(exc).__name__}: {' '.join(str(exc).split())[:200]}") from exc
        return model.eval()

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        """The model's own tokenizer, told the passage's language; respellings applied first
        (phoneme entries need the studio's espeak front end, which these models do not take)."""
        self.load()
        name = self.checkpoint.language_name(language) if self.checkpoint.language_names else None
        multilingual = len(self.checkpoint.language_names) > 1
        if multilingual and name is None:
            raise EngineError(f"voice {self.voice_id} does not speak {language!r} "
                              f"(it speaks {', '.join(self.checkpoint.language_names)})")
        if lexicon:
            text = lexicon.respelled(text, language)
        language_id = self.checkpoint.language_names.index(name) if multilingual else None
        if self.checkpoint.model == "xtts":
            from studio.engine.coqui.xtts import text_ids

            return text_ids(self.model, text, name or self.checkpoint.language_names[0], language_id)
        return with_language(self.model.tokenizer.text_to_ids(text, language=name), language_id)

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        self.load()
        speaker = self._speaker(settings)
        items = [split_language(seq) for seq in ids]
        with self._lock:
            import torch

            with torch.inference_mode(), self._precision():
                if self.checkpoint.model == "tacotron2":
                    return self._tacotron2(items, speaker, settings)
                if self.checkpoint.model == "xtts":
                    from studio.engine.coqui.xtts import speak

                    names = self.checkpoint.language_names
                    return [speak(self.model, tokens, names[language or 0], self.speaker, settings, self.sample_rate)
                            for language, tokens in items]
                return [self._one(tokens, language, speaker, settings) for language, tokens in items]

    def describe(self) -> str:
        import torch

        where = f"CPU ({torch.get_num_threads()} threads)" if self.device == "cpu" else self.device
        precision = "float16 autocast (weights float32)" if self.precision == "float16" else self.precision
        text = f"coqui {LABELS[self.checkpoint.model]} on PyTorch {torch.__version__}, {where}, {precision}"
        if self.precision == "dynamic-int8":
            text += f" ({self.quantized_layers} Linear/LSTM layers quantized)"
        if self.checkpoint.model in MEL_MODELS:
            text += (f"; vocoder {self.vocoder_folder.name} ({self.vocoder_folder})" if self.vocoder_folder
                     else "; no vocoder found: Griffin-Lim fallback")
        text += "; masked batches" if self._batches else "; one sentence at a time"
        return text

    def _precision(self) -> Any:
        """float16 as CUDA autocast: coqui's models build their decoder states and masks in float32
        at run time, which a model cast with ``.half()`` would refuse to mix with its weights."""
        import contextlib

        import torch

        if self.precision != "float16":
            return contextlib.nullcontext()
        return torch.autocast(device_type="cuda", dtype=torch.float16)

    @property
    def _batches(self) -> bool:
        """Whether a call's sentences go through the decoder together. Not with windowed or
        dynamic-convolution attention (they look at one item), nor under dynamic-int8: its
        activations are quantized with one scale per tensor, so an item's mel would depend on
        its batch-mates (bench/coqui.py measured up to 3e-3 apart)."""
        return self.checkpoint.batching and self.precision != "dynamic-int8"

    def close(self) -> None:
        with self._lock:
            self.model = self.vocoder = None

    # ------------------------------------------------------------- synthesis

    def _speaker(self, settings: SynthesisSettings) -> int | None:
        speakers = self.checkpoint.speakers
        if not speakers:
            if settings.speaker_id not in (None, 0):
                raise EngineError(f"voice {self.voice_id} has one speaker; there is no speaker {settings.speaker_id}")
            return None
        sid = 0 if settings.speaker_id is None else int(settings.speaker_id)
        if not 0 <= sid < len(speakers):
            raise EngineError(f"voice {self.voice_id} has {len(speakers)} speakers (0-{len(speakers) - 1}); "
                              f"there is no speaker {sid}")
        return sid

    def _aux(self, tokens: Sequence[int], language: int | None, speaker: int | None) -> tuple[Any, dict]:
        import torch

        device = torch.device(self.device)
        x = torch.as_tensor([list(tokens)], dtype=torch.long, device=device)
        aux = {"x_lengths": torch.tensor([len(tokens)], device=device), "d_vectors": None,
               "speaker_ids": None if speaker is None else torch.tensor([speaker], device=device),
               "language_ids": None if language is None else torch.tensor([language], device=device)}
        return x, aux

    def _one(self, tokens: Sequence[int], language: int | None, speaker: int | None,
             settings: SynthesisSettings) -> np.ndarray:
        """Glow-TTS or VITS, one sentence, its noise seeded by the sentence."""
        import torch

        model = self.model
        model.length_scale = settings.length_scale
        model.inference_noise_scale = settings.noise_scale
        if hasattr(model, "inference_noise_scale_dp"):
            model.inference_noise_scale_dp = settings.noise_w
        seed = sentence_seed(tokens, settings)
        torch.manual_seed(seed & 0x7FFF_FFFF_FFFF_FFFF)
        x, aux = self._aux(tokens, language, speaker)
        out = model.inference(x, aux_input=aux)["model_outputs"]
        if self.checkpoint.model in MEL_MODELS:
            return self._vocode(out[0].float(), seed)
        return _audio(out[0].float().reshape(-1))

    def _tacotron2(self, items: list[tuple[int | None, list[int]]], speaker: int | None,
                   settings: SynthesisSettings) -> list[np.ndarray]:
        from studio.engine.coqui.batching import tacotron2_mels

        seeds = [sentence_seed(tokens, settings) for _, tokens in items]
        tokens = [t for _, t in items]
        if self._batches:
            mels = tacotron2_mels(self.model, tokens, [speaker or 0] * len(items), seeds)
        else:  # see _batches: one at a time
            mels = [tacotron2_mels(self.model, [t], [speaker or 0], [s])[0] for t, s in zip(tokens, seeds)]
        return [self._vocode(mel.float(), seed) for mel, seed in zip(mels, seeds)]

    def _vocode(self, mel: Any, seed: int) -> np.ndarray:
        """A ``[frames, mels]`` mel in the model's normalisation to audio, by the vocoder or
        Griffin-Lim (whose random starting phases coqui draws from numpy's global generator)."""
        import torch

        ap = self.model.ap
        spec = ap.denormalize(mel.cpu().numpy().T)  # [mels, frames]
        if self.vocoder is None:
            np.random.seed(seed % (1 << 32))
            return _audio(ap.inv_melspectrogram(spec))
        spec = self.vocoder_ap.normalize(spec)
        device = next(self.vocoder.parameters()).device
        wav = self.vocoder.inference(torch.as_tensor(spec, dtype=torch.float32, device=device).unsqueeze(0))
        return _audio(wav.float().reshape(-1))


def _audio(wav: Any) -> np.ndarray:
    array = wav.detach().cpu().numpy() if hasattr(wav, "detach") else np.asarray(wav)
    return limited(array)


def _quantize(model: Any) -> tuple[Any, int]:
    """torch's dynamic int8 quantization of the Linear and LSTM layers, with their count."""
    import torch

    kinds = (torch.nn.Linear, torch.nn.LSTM, torch.nn.LSTMCell)
    quantized = torch.ao.quantization.quantize_dynamic(model, set(kinds), dtype=torch.qint8)
    count = sum(1 for m in quantized.modules() if type(m).__module__.startswith("torch.ao.nn.quantized"))
    return quantized, count
