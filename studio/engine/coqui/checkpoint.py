"""A Coqui checkpoint folder read without torch: which model, languages, speakers, vocoder.

Why without torch: listing voices runs at every start of the app and of most
commands; importing torch and coqui-tts costs seconds. Everything the catalogue shows
(languages, speakers, the presets that can run it) is in ``config.json`` and the small
JSON files next to it, so only the engine's ``load`` imports torch.

A folder is what coqui-tts saves: ``config.json`` + ``model.pth`` (or the other names
coqui's model manager looks for), maybe ``speakers.json`` / ``language_ids.json``, and
for a spectrogram model (Tacotron 2, Glow-TTS) the vocoder it pairs with
(:mod:`studio.engine.coqui.vocoder`).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import VoiceError
from studio.core.language import language_family

_LOGGER = logging.getLogger(__name__)

#: the architectures the studio renders, by coqui's ``model`` name, with their presets.
#: dynamic-int8 only where the model has LSTM/Linear layers worth quantizing.
ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "tacotron2": ("fp32-torch", "dynamic-int8", "fp16-cuda"),
    "glow_tts": ("fp32-torch", "fp16-cuda"),
    "vits": ("fp32-torch", "fp16-cuda"),
    "xtts": ("fp32-torch", "fp16-cuda"),
}
#: display names
LABELS = {"tacotron2": "Tacotron 2", "glow_tts": "Glow-TTS", "vits": "VITS", "xtts": "XTTS v2"}
#: models coqui-tts knows (``TTS.tts.models.setup_model``) that the studio does not render yet
KNOWN_ELSEWHERE = ("tacotron", "align_tts", "fast_pitch", "fast_speech", "fastspeech2", "speedy_speech",
                   "forward_tts", "overflow", "neuralhmm_tts", "delightful_tts", "bark", "tortoise")
#: coqui-tts vocoder models: a folder holding one is a vocoder, not a voice
VOCODER_MODELS = ("hifigan", "melgan", "multiband_melgan", "fullband_melgan", "univnet", "wavegrad", "wavernn",
                  "parallel_wavegan")
#: spectrogram models: they need a vocoder (or Griffin-Lim)
MEL_MODELS = ("tacotron2", "glow_tts")
#: a cloned voice's record (:mod:`studio.engine.coqui.cloning`): its speaker's name and consent
CLONE_FILE = "clone.json"
#: a cloned voice's speaker (XTTS conditioning latents), computed once from its recording
SPEAKER_FILE = "speaker_latents.pth"
#: checkpoint names coqui-tts itself looks for first (``ModelManager._find_files``)
CHECKPOINT_NAMES = ("model_file.pth", "model.pth", "model_file.pth.tar", "checkpoint.pth")


@dataclass(frozen=True)
class Checkpoint:
    """What a Coqui checkpoint folder holds, as far as the catalogue needs it."""

    folder: Path
    model: str
    config_path: Path
    checkpoint_path: Path
    sample_rate: int
    #: the model's own language names (``fr-fr``, ``pt-br``), its first language first
    language_names: tuple[str, ...] = ()
    #: speaker names by speaker id (empty: one speaker)
    speakers: tuple[str, ...] = ()
    #: the author's sampling settings (noise_scale, length_scale, noise_w)
    scales: tuple[float, float, float] = (0.667, 1.0, 0.8)
    #: a cloned voice: the recorded person's consent statement
    consent: str = ""
    #: the weights' licence as stated (the download record, coqui's model list; XTTS: its CPML)
    licence: str = ""
    config: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def identity_file(self) -> Path:
        """The file whose checksum names this voice in the audio cache keys: the weights, or for a
        cloned voice its speaker (its weights are the base model's, fixed when it was cloned; a voice
        cloned again under the same name from another recording must not reuse the old audio)."""
        speaker = self.folder / SPEAKER_FILE
        return speaker if self.consent and speaker.is_file() else self.checkpoint_path

    @property
    def label(self) -> str:
        return LABELS.get(self.model, self.model)

    @property
    def languages(self) -> tuple[str, ...]:
        """ISO 639-1 families, in the model's order, without repeats."""
        return tuple(dict.fromkeys(f for f in (language_family(n) for n in self.language_names) if f))

    @property
    def presets(self) -> tuple[str, ...]:
        """By architecture; none for an XTTS without a speaker (clone one from it first)."""
        if self.model == "xtts" and not self.speakers:
            return ()
        return ARCHITECTURES[self.model]

    @property
    def batching(self) -> bool:
        """Several sentences in one call give each its own audio: Tacotron 2's masked decoder
        (original attention without windowing; see :mod:`studio.engine.coqui.batching`)."""
        return self.model == "tacotron2" and self.config.get("attention_type", "original") == "original" \
            and not self.config.get("windowing", False)

    def language_name(self, language: str) -> str | None:
        """The model's name for an ISO 639-1 ``language`` (None: it does not speak it)."""
        family = language_family(language)
        exact = [n for n in self.language_names if n.lower() in (language.lower(), language.lower().replace("_", "-"))]
        close = [n for n in self.language_names if language_family(n) == family]
        return (exact or close or [None])[0]


def model_cards() -> dict[str, Any]:
    """coqui-tts's model list (``TTS/.models.json``), read without importing coqui."""
    spec = importlib.util.find_spec("TTS")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(list(spec.submodule_search_locations)[0]) / ".models.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        _LOGGER.warning("cannot read coqui's model list %s: %s", path, exc)
        return {}


def checkpoint_file(folder: Path) -> Path | None:
    """The folder's model checkpoint, by coqui's names first, else its only ``*.pth``."""
    for name in CHECKPOINT_NAMES:
        if (folder / name).is_file():
            return folder / name
    candidates = [p for p in sorted(folder.glob("*.pth")) if p.name not in ("speakers.pth", "speakers_xtts.pth")]
    return candidates[0] if len(candidates) == 1 else None


def read_config(config_path: Path) -> dict[str, Any]:
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VoiceError(f"{config_path}: unreadable Coqui config ({exc})") from exc
    if not isinstance(config, dict):
        raise VoiceError(f"{config_path}: Coqui config must be a JSON object")
    return config


def is_vocoder(folder: Path) -> bool:
    """Whether the folder holds a coqui vocoder (listed with its voice, not as one)."""
    try:
        return str(read_config(folder / "config.json").get("model", "")).lower() in VOCODER_MODELS
    except VoiceError:
        return False


def is_voice_folder(folder: Path) -> bool:
    """A folder the catalogue lists (or skips with a reason): a checkpoint, or a coqui model
    config (so a missing checkpoint is reported, not ignored); never a vocoder."""
    if is_vocoder(folder):
        return False
    if checkpoint_file(folder) is not None or any(folder.glob("*.pth")):
        return True
    try:
        config = read_config(folder / "config.json")
    except VoiceError:
        return False
    return "model" in config and "audio" in config


def read_checkpoint(folder: Path) -> Checkpoint:
    """The folder's checkpoint; VoiceError with one line saying what is wrong."""
    config_path = folder / "config.json"
    path = checkpoint_file(folder)
    if path is None:
        raise VoiceError(f"{folder}: no model checkpoint (*.pth) in the folder")
    config = read_config(config_path)
    model = str(config.get("model", "")).lower()
    if model not in ARCHITECTURES:
        if model in KNOWN_ELSEWHERE:
            raise VoiceError(f"{folder}: the studio does not render coqui {model!r} models yet "
                             f"(it renders {', '.join(LABELS.values())})")
        raise VoiceError(f"{folder}: config.json names model {model!r}, which coqui-tts does not know")
    _check_complete(path)
    audio = config.get("audio") or {}
    rate = audio.get("output_sample_rate") or audio.get("sample_rate") or config.get("output_sample_rate")
    if model == "xtts":
        rate = rate or 24000
    if not isinstance(rate, int) or rate <= 0:
        raise VoiceError(f"{config_path}: no audio sample rate in the Coqui config")
    clone = _clone(folder)
    speakers = (str(clone.get("name") or folder.name),) if clone else _speakers(folder, config)
    return Checkpoint(folder, model, config_path, path, int(rate), _language_names(folder, config),
                      speakers, _scales(config), str(clone.get("consent", "")), _licence(folder, model), config)


def _licence(folder: Path, model: str) -> str:
    """What the weights' licence is said to be: the download record, else coqui's model list for
    a hub folder, else for XTTS the Coqui Public Model License its released weights carry."""
    record = folder / "download.json"
    if record.is_file():
        try:
            stated = json.loads(record.read_text(encoding="utf-8")).get("licence")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            stated = None
        if stated:
            return str(stated)
    if folder.name.startswith("tts_models--") and folder.name.count("--") == 3:
        _, language, dataset, name = folder.name.split("--")
        card = model_cards().get("tts_models", {}).get(language, {}).get(dataset, {}).get(name, {})
        if card.get("license"):
            return str(card["license"])
    return "CPML" if model == "xtts" else ""


def _clone(folder: Path) -> dict[str, Any]:
    path = folder / CLONE_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VoiceError(f"{path}: unreadable ({exc})") from exc
    return data if isinstance(data, dict) else {}


def _check_complete(path: Path) -> None:
    """A truncated download or copy: torch's zip checkpoints end with a central directory."""
    try:
        with path.open("rb") as f:
            zipped = f.read(2) == b"PK"
        if path.stat().st_size == 0:
            raise VoiceError(f"{path}: the checkpoint is empty")
        if zipped and not zipfile.is_zipfile(path):
            raise VoiceError(f"{path}: the checkpoint is truncated (incomplete download or copy?)")
    except OSError as exc:
        raise VoiceError(f"{path}: unreadable checkpoint ({exc})") from exc


def local_file(folder: Path, named: Any, *fallbacks: str) -> Path | None:
    """A file a config names (often a path on the machine it was trained on): as named,
    else by its name in the folder, else the first fallback name present there."""
    names = [Path(str(named)).name] if named else []
    if named and Path(str(named)).is_file():
        return Path(str(named))
    for name in (*names, *fallbacks):
        if (folder / name).is_file():
            return folder / name
    return None


def localize_paths(config: Any, folder: Path) -> None:
    """Point a loaded coqui config's speaker, language and statistics files at the folder's
    copies (configs keep the paths of the machine the model was trained on)."""
    for holder in (config, getattr(config, "model_args", None), getattr(config, "audio", None)):
        if holder is None:
            continue
        for key in ("speakers_file", "language_ids_file", "d_vector_file", "speaker_ids_file", "stats_path"):
            named = holder.get(key) if hasattr(holder, "get") else getattr(holder, key, None)
            if named and not Path(str(named)).is_file():
                found = local_file(folder, named)
                if found is not None:
                    if isinstance(holder, dict):
                        holder[key] = str(found)
                    else:
                        setattr(holder, key, str(found))


def _json_ids(path: Path | None) -> dict[str, int]:
    if path is None or path.suffix != ".json":
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VoiceError(f"{path}: unreadable ({exc})") from exc
    if not isinstance(data, dict) or not all(isinstance(v, int) for v in data.values()):
        raise VoiceError(f"{path}: expected a JSON object of name -> id")
    return data


def _by_id(ids: dict[str, int]) -> tuple[str, ...]:
    return tuple(name for name, _ in sorted(ids.items(), key=lambda kv: kv[1]))


def _language_names(folder: Path, config: dict[str, Any]) -> tuple[str, ...]:
    args = config.get("model_args") or {}
    named = config.get("language_ids_file") or args.get("language_ids_file")
    ids = _json_ids(local_file(folder, named, *(("language_ids.json",) if named else ())))
    if ids:
        return _by_id(ids)
    if isinstance(config.get("languages"), list) and config["languages"]:  # XTTS
        return tuple(str(x) for x in config["languages"])
    datasets = [d.get("language") for d in config.get("datasets") or [] if isinstance(d, dict) and d.get("language")]
    first = config.get("phoneme_language") or (datasets[0] if datasets else "")
    if not first and folder.name.startswith("tts_models--") and folder.name.count("--") == 3:
        first = folder.name.split("--")[1]  # tts_models--en--ljspeech--vits
    return (str(first),) if first else ()


def _speakers(folder: Path, config: dict[str, Any]) -> tuple[str, ...]:
    args = config.get("model_args") or {}
    if not (config.get("use_speaker_embedding") or args.get("use_speaker_embedding")):
        return ()
    named = config.get("speakers_file") or args.get("speakers_file")
    names = _by_id(_json_ids(local_file(folder, named, "speakers.json", "speaker_ids.json")))
    count = int(config.get("num_speakers") or args.get("num_speakers") or len(names))
    if len(names) >= count:
        return names
    return tuple(str(i) for i in range(count)) if count > 1 else ()  # a speakers.pth needs torch to read


def _scales(config: dict[str, Any]) -> tuple[float, float, float]:
    noise = config.get("inference_noise_scale", 0.667)
    length = config.get("length_scale", 1.0)
    noise_w = config.get("inference_noise_scale_dp", 0.8)
    return float(noise), float(length), float(noise_w)
