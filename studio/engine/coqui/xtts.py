"""XTTS v2 through coqui-tts's ``Xtts``: a speaker from a recording, the passage's language,
its per-request text limit, seeded sampling.

Why the studio splits the text: XTTS speaks at most ``tokenizer.char_limits[language]``
characters per request (250 for English) and cuts longer text short. The studio's own
sentence splitter (:func:`studio.text.segment.split_spans`, the one the importer uses)
cuts a sentence into pieces under that limit at clause or word boundaries, never inside
a word; the pieces ride in one id sequence (:data:`studio.engine.coqui.ids.PIECE_BREAK`),
are spoken one by one, and joined with the shared seam fade (:mod:`studio.engine.waveform`), so no
click where one piece's waveform ends and the next begins.

Why seeded: XTTS samples its audio codes (temperature, top-k, top-p). Each piece's draw
comes from torch's generator seeded by the piece's ids and the settings
(:func:`studio.engine.noise.sentence_seed`), so two renders of a sentence are the same.

The speaker is computed once, when the voice is cloned (:mod:`studio.engine.coqui.cloning`),
and stored with the voice as ``speaker_latents.pth``; no sentence recomputes it.
"""

from __future__ import annotations

import inspect
import logging
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.engine import waveform
from studio.engine.base import SynthesisSettings
from studio.engine.coqui.checkpoint import SPEAKER_FILE, Checkpoint
from studio.engine.coqui.ids import joined, pieces, with_language
from studio.engine.noise import sentence_seed

_LOGGER = logging.getLogger(__name__)

VOCAB_FILE = "vocab.json"


def load_xtts(checkpoint: Checkpoint, device: Any) -> Any:
    """coqui's ``Xtts`` with its tokenizer (``vocab.json``) and weights, in eval mode."""
    from TTS.config import load_config
    from TTS.tts.models.xtts import Xtts

    _accept_cache_keyword()
    vocab = checkpoint.folder / VOCAB_FILE
    if not vocab.is_file():
        raise EngineError(f"{checkpoint.folder}: no {VOCAB_FILE} (XTTS's tokenizer) in the folder")
    config = load_config(str(checkpoint.config_path))
    model = Xtts.init_from_config(config)
    try:
        model.load_checkpoint(config, checkpoint_dir=str(checkpoint.folder), checkpoint_path=str(checkpoint.checkpoint_path),
                              vocab_path=str(vocab), eval=True)
    except Exception as exc:  # truncated file, another model's weights, ...
        raise EngineError(f"{checkpoint.checkpoint_path}: the checkpoint cannot be loaded (truncated, or not this "
                          f"config's model): {type(exc).__name__}: {' '.join(str(exc).split())[:200]}") from exc
    model.to(device)
    model.eval()  # Xtts.eval returns nothing
    return model


def _accept_cache_keyword() -> None:
    """coqui-tts 0.28's XTTS inference model reads the key/value cache as ``past_key_values``;
    transformers 5 hands it over as ``cache`` (the old name deprecated), and without it the
    second generated token fails. Pass it under the name the model reads; a no-op where the
    model already takes ``cache``."""
    from TTS.tts.layers.xtts.gpt_inference import GPT2InferenceModel

    forward = GPT2InferenceModel.forward
    if "cache" in inspect.signature(forward).parameters or getattr(forward, "_studio_cache", False):
        return

    def with_cache(self, input_ids=None, past_key_values=None, *args, cache=None, **kw):  # noqa: ANN001, ANN202
        return forward(self, input_ids, past_key_values if past_key_values is not None else cache, *args, **kw)

    with_cache._studio_cache = True  # type: ignore[attr-defined]
    GPT2InferenceModel.forward = with_cache


def load_speaker(folder: Path, device: Any) -> tuple[Any, Any]:
    """The stored ``(gpt_cond_latent, speaker_embedding)`` of a cloned voice."""
    import torch

    path = folder / SPEAKER_FILE
    if not path.is_file():
        raise EngineError(f"{folder.name} has no speaker: clone one with `studio voices clone NAME --from "
                          f"recording.wav --model {folder.name}`")
    data = torch.load(path, map_location=device, weights_only=True)
    return data["gpt_cond_latent"], data["speaker_embedding"]


def speaker_latents(model: Any, reference: Path) -> dict[str, Any]:
    """XTTS's conditioning latents and speaker embedding of a prepared reference clip (computed once)."""
    import torch

    with torch.inference_mode():
        latent, embedding = model.get_conditioning_latents(audio_path=[str(reference)])
    return {"gpt_cond_latent": latent.cpu(), "speaker_embedding": embedding.cpu()}


def text_ids(model: Any, text: str, language: str, language_id: int | None) -> list[int]:
    """One sentence as XTTS token ids, in pieces no longer than its limit for ``language``."""
    from studio.text.segment import split_spans

    limit = model.tokenizer.char_limits.get(language.split("-")[0], 250)
    parts = [s.text for s in split_spans(" ".join(text.split()), max_chars=limit)] if text.strip() else []
    return with_language(joined([model.tokenizer.encode(p.strip().lower(), language) for p in parts]), language_id)


def speak(model: Any, ids: Sequence[int], language: str, speaker: tuple[Any, Any], settings: SynthesisSettings,
          rate: int) -> np.ndarray:
    """Each piece spoken by coqui's ``Xtts.inference`` (sampling as the config says, seeded), joined."""
    import torch

    config, wavs = model.config, []
    for piece in pieces(ids):
        text = model.tokenizer.decode(piece[1:])  # without the [lang] token; inference adds it again
        torch.manual_seed(sentence_seed(piece, settings) & 0x7FFF_FFFF_FFFF_FFFF)
        out = model.inference(text, language, speaker[0], speaker[1], temperature=config.temperature,
                              length_penalty=config.length_penalty, repetition_penalty=config.repetition_penalty,
                              top_k=config.top_k, top_p=config.top_p, speed=1.0 / settings.length_scale)
        wavs.append(np.asarray(out["wav"], dtype=np.float32).reshape(-1))
    return waveform.joined(wavs, rate)
