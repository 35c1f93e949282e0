"""Which vocoder turns a Coqui spectrogram model's mels into audio, and whether it fits.

Why a pairing step: a Tacotron 2 or Glow-TTS checkpoint makes mel spectrograms; coqui
saves its vocoder (HiFi-GAN, MelGAN, UnivNet, WaveGrad, ...) as a separate folder. The
studio takes, in order: a ``vocoder/`` folder inside the voice's folder (the user's
pick, or what ``studio voices add`` put there), else the vocoder the model card pairs
with (coqui-tts's model list, ``default_vocoder``) when coqui downloaded it. Without
one, Griffin-Lim renders it: a fallback said in the engine's description and the log.

A vocoder trained on other audio settings would make wrong audio (a sample rate off
by 10 % is a tenth too fast, other mel bands are noise), so one whose settings differ
is refused with both values named; only the folder's JSON is read for that (no torch).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.core.errors import VoiceError
from studio.engine.coqui.checkpoint import Checkpoint, checkpoint_file, localize_paths, model_cards, read_config

#: the audio settings a mel model and its vocoder must share
FITTING = ("sample_rate", "num_mels", "hop_length", "win_length", "fft_size", "mel_fmin", "mel_fmax")
#: names shown to a producer
_UNITS = {"sample_rate": " Hz", "mel_fmin": " Hz", "mel_fmax": " Hz"}


def find_vocoder(checkpoint: Checkpoint, models_dir: Path | None = None) -> Path | None:
    """The vocoder folder for ``checkpoint`` (None: none found, Griffin-Lim)."""
    own = checkpoint.folder / "vocoder"
    if (own / "config.json").is_file():
        return own
    card = _model_card_vocoder(checkpoint.folder.name)
    if card and models_dir is not None:
        folder = models_dir / card.replace("/", "--")
        if (folder / "config.json").is_file():
            return folder
    return None


def check_fit(checkpoint: Checkpoint, vocoder: Path) -> None:
    """VoiceError naming both values when the vocoder's audio settings differ from the model's."""
    if checkpoint_file(vocoder) is None:
        raise VoiceError(f"vocoder {vocoder}: no checkpoint (*.pth) in the folder")
    theirs = read_config(vocoder / "config.json").get("audio") or {}
    ours = checkpoint.config.get("audio") or {}
    for key in FITTING:
        if key in theirs and key in ours and float(theirs[key] or 0) != float(ours[key] or 0):
            unit = _UNITS.get(key, "")
            raise VoiceError(f"vocoder {vocoder.name} does not fit {checkpoint.folder.name}: its {key} is "
                             f"{theirs[key]:g}{unit}, the model's is {ours[key]:g}{unit}")


def _model_card_vocoder(folder_name: str) -> str | None:
    """coqui's ``default_vocoder`` for a hub model folder (``tts_models--en--ljspeech--tacotron2-DDC``)."""
    if not folder_name.startswith("tts_models--") or folder_name.count("--") != 3:
        return None
    cards = model_cards()
    _, language, dataset, name = folder_name.split("--")
    card = cards.get("tts_models", {}).get(language, {}).get(dataset, {}).get(name, {})
    return card.get("default_vocoder") or None


def load_vocoder(folder: Path, device: Any) -> tuple[Any, Any]:
    """(coqui vocoder model in eval mode on ``device``, its AudioProcessor); torch and coqui imported here."""
    from TTS.config import load_config
    from TTS.utils.audio import AudioProcessor
    from TTS.vocoder.models import setup_model

    config = load_config(str(folder / "config.json"))
    localize_paths(config, folder)
    model = setup_model(config)
    path = checkpoint_file(folder)
    model.load_checkpoint(config, str(path), eval=True)
    return model.to(device).eval(), AudioProcessor(config.audio)
