"""A Piper voice's ``.onnx.json`` as one typed, immutable value.

Why our own type instead of ``piper.config.PiperConfig``: the front end, the ONNX
engine, the torch engine and the voice list all need the same few facts (sample
rate, espeak voice, phoneme ids, default scales, language), the value must be
picklable and frozen so it can be handed to child processes and used in cache keys,
and a broken file must surface as a :class:`~studio.core.errors.VoiceError` naming
the file rather than as a ``KeyError`` deep inside synthesis.

The field names and defaults follow Piper's own ``PiperConfig.from_dict`` so a file
that Piper accepts is read the same way here.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from studio.core.errors import VoiceError
from studio.core.language import language_family
from studio.engine.base import SynthesisSettings

_LOGGER = logging.getLogger(__name__)

#: Piper's defaults (``piper.config``), repeated so this module needs no piper import.
DEFAULT_NOISE_SCALE = 0.667
DEFAULT_LENGTH_SCALE = 1.0
DEFAULT_NOISE_W = 0.8
DEFAULT_HOP_LENGTH = 256

#: Phoneme types we know how to read; which ones we can *phonemize* is up to
#: :mod:`studio.engine.voice.phonemize`.
KNOWN_PHONEME_TYPES = ("espeak", "text", "pinyin", "hebrew", "japanese", "thai")


@dataclass(frozen=True)
class VoiceConfig:
    """Everything the studio needs to know about one Piper voice.

    ``phoneme_id_map`` is a plain ``dict`` (so the config pickles cheaply across
    processes); treat it as read-only. It does not take part in hashing.
    """

    sample_rate: int
    espeak_voice: str
    phoneme_type: str
    phoneme_id_map: Mapping[str, tuple[int, ...]] = field(hash=False)
    num_symbols: int
    num_speakers: int = 1
    language: str = ""
    """Piper language code such as ``en_US`` (family ``en``, region ``US``)."""
    noise_scale: float = DEFAULT_NOISE_SCALE
    length_scale: float = DEFAULT_LENGTH_SCALE
    noise_w: float = DEFAULT_NOISE_W
    hop_length: int = DEFAULT_HOP_LENGTH
    speaker_id_map: Mapping[str, int] = field(default_factory=dict, hash=False)
    default_speaker_id: int = 0
    vowel_clusters: frozenset[tuple[str, ...]] | None = None
    quality: str = ""
    dataset: str = ""
    piper_version: str | None = None
    source_path: str = field(default="", compare=False)
    """The file this was read from (for messages only)."""

    # ------------------------------------------------------------------ loading

    @staticmethod
    def from_file(path: str | Path) -> "VoiceConfig":
        """Read a ``.onnx.json``; any problem becomes a VoiceError naming the file."""
        path = Path(path)
        try:
            with open(path, "r", encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise VoiceError(f"{path}: voice config not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise VoiceError(f"{path}: cannot read voice config ({exc})") from exc
        except json.JSONDecodeError as exc:
            raise VoiceError(f"{path}: voice config is not valid JSON ({exc})") from exc
        return VoiceConfig.from_dict(data, source=str(path), fallback_name=path.name)

    @staticmethod
    def from_dict(
        data: Mapping[str, Any], *, source: str = "<dict>", fallback_name: str = ""
    ) -> "VoiceConfig":
        """Build from the parsed JSON, validating what synthesis relies on."""
        if not isinstance(data, Mapping):
            raise VoiceError(f"{source}: voice config must be a JSON object")
        try:
            return _from_dict(data, source, fallback_name)
        except VoiceError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise VoiceError(f"{source}: invalid voice config ({type(exc).__name__}: {exc})") from exc

    # --------------------------------------------------------------- derived

    @property
    def language_family(self) -> str:
        """ISO 639-1-ish family of the voice's language (``en_US`` -> ``en``)."""
        return language_family(self.language)

    @property
    def default_settings(self) -> SynthesisSettings:
        """The voice author's recommended scales; the studio's starting point."""
        speaker = self.default_speaker_id if self.num_speakers > 1 else None
        return SynthesisSettings(
            noise_scale=self.noise_scale,
            length_scale=self.length_scale,
            noise_w=self.noise_w,
            speaker_id=speaker,
        )

    def resolve_speaker(self, speaker_id: int | None) -> int | None:
        """The ``sid`` to feed the model: None for single-speaker voices.

        Raises ValueError for an out-of-range id so a bad preset fails loudly.
        """
        if self.num_speakers <= 1:
            return None
        if speaker_id is None:
            return self.default_speaker_id
        if not 0 <= speaker_id < self.num_speakers:
            raise ValueError(
                f"speaker id {speaker_id} out of range (voice has {self.num_speakers} speakers)"
            )
        return speaker_id


def _from_dict(data: Mapping[str, Any], source: str, fallback_name: str) -> VoiceConfig:
    audio = data.get("audio") or {}
    sample_rate = int(audio["sample_rate"])
    if sample_rate <= 0:
        raise VoiceError(f"{source}: sample rate must be positive, got {sample_rate}")

    phoneme_type = str(data.get("phoneme_type", "espeak"))
    if phoneme_type not in KNOWN_PHONEME_TYPES:
        raise VoiceError(f"{source}: unknown phoneme_type {phoneme_type!r}")

    espeak_voice = str((data.get("espeak") or {}).get("voice", ""))
    if phoneme_type == "espeak" and not espeak_voice:
        raise VoiceError(f"{source}: espeak voice missing")

    raw_map = data["phoneme_id_map"]
    if not isinstance(raw_map, Mapping) or not raw_map:
        raise VoiceError(f"{source}: phoneme_id_map missing or empty")
    id_map: dict[str, tuple[int, ...]] = {}
    for phoneme, ids in raw_map.items():
        if isinstance(ids, int):
            ids = [ids]
        id_map[str(phoneme)] = tuple(int(i) for i in ids)
    for required in ("^", "_", "$"):
        if required not in id_map:
            raise VoiceError(f"{source}: phoneme_id_map lacks the {required!r} symbol")

    inference = data.get("inference") or {}
    clusters = data.get("vowel_clusters")
    vowel_clusters = frozenset(tuple(c) for c in clusters) if clusters else None

    speaker_map = {str(k): int(v) for k, v in (data.get("speaker_id_map") or {}).items()}
    return VoiceConfig(
        sample_rate=sample_rate,
        espeak_voice=espeak_voice,
        phoneme_type=phoneme_type,
        phoneme_id_map=id_map,
        num_symbols=int(data.get("num_symbols", max(i for ids in id_map.values() for i in ids) + 1)),
        num_speakers=int(data.get("num_speakers", 1)),
        language=_language_code(data, espeak_voice, fallback_name),
        noise_scale=float(inference.get("noise_scale", DEFAULT_NOISE_SCALE)),
        length_scale=float(inference.get("length_scale", DEFAULT_LENGTH_SCALE)),
        noise_w=float(inference.get("noise_w", DEFAULT_NOISE_W)),
        hop_length=int(data.get("hop_length", DEFAULT_HOP_LENGTH)),
        speaker_id_map=speaker_map,
        default_speaker_id=int(data.get("default_speaker_id", 0)),
        vowel_clusters=vowel_clusters,
        quality=str(audio.get("quality", "")),
        dataset=str(data.get("dataset", "")),
        piper_version=data.get("piper_version"),
        source_path=source,
    )


def _language_code(data: Mapping[str, Any], espeak_voice: str, fallback_name: str) -> str:
    """``en_US``-style code: the config's ``language.code``, else guessed.

    Older Piper configs have no ``language`` block; the file name
    (``de_DE-thorsten-medium.onnx.json``) or the espeak voice (``en-us``) still say it.
    """
    lang = data.get("language")
    if isinstance(lang, Mapping) and lang.get("code"):
        return str(lang["code"])
    if isinstance(lang, str) and lang:
        return lang.replace("-", "_")
    stem = fallback_name.split("-", 1)[0]
    if "_" in stem and 2 <= len(stem.split("_", 1)[0]) <= 3:
        return stem
    if espeak_voice:
        parts = espeak_voice.split("-")
        code = parts[0].lower()
        if len(parts) > 1 and len(parts[1]) == 2:
            code += "_" + parts[1].upper()
        _LOGGER.debug("%s: no language code, derived %s from espeak voice", fallback_name, code)
        return code
    return ""
