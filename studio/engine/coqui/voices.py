"""Coqui voices as the catalogue lists them: checkpoint folders in the user's voices folder and
the models coqui-tts (or ``studio voices add tts_models/...``) downloaded, read without torch."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Iterator, Literal

from studio.core.language import piper_language
from studio.engine.base import SynthesisSettings
from studio.engine.family import Found
from studio.engine.voice.info import VoiceAbilities, VoiceInfo

_LOGGER = logging.getLogger(__name__)

FAMILY_NAME = "coqui"
#: what a hub download's folder is called: ``tts_models--en--ljspeech--vits``
HUB_PREFIX = "tts_models--"


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


def coqui_voice_info(
    folder: Path, source: Literal["user", "coqui-hub"] = "user", *, voice_id: str | None = None
) -> VoiceInfo:
    """Describe a Coqui checkpoint folder (``config.json`` + ``*.pth``); VoiceError if unusable.

    Hub downloads are named like coqui names them (``tts_models/en/ljspeech/vits``)
    so the id a user downloads is the id they select. What the model can do is read
    from its config without torch (:mod:`studio.engine.coqui.checkpoint`).
    """
    from studio.engine.coqui.checkpoint import read_checkpoint
    from studio.engine.coqui.download import non_commercial

    checkpoint = read_checkpoint(folder)
    if folder.name.startswith(HUB_PREFIX) and folder.name.count("--") == 3:
        voice_id = voice_id or folder.name.replace("--", "/")  # tts_models/en/ljspeech/vits
    voice_id = voice_id or folder.name
    language = piper_language(checkpoint.language_names[0]) if checkpoint.language_names else ""
    label = voice_id.split("/", 2)[-1].replace("/", " ") if voice_id.startswith("tts_models/") else voice_id
    noise, length, noise_w = checkpoint.scales
    return VoiceInfo(
        id=voice_id,
        name=f"{label} ({', '.join(x for x in (language, checkpoint.label, 'Coqui') if x)})",
        family=FAMILY_NAME,
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
        not_for_sale=non_commercial(checkpoint.licence) or "",
    )


def found(user_dir: Path | None, hub_dir: Path | None) -> Iterator[Found]:
    """The user's checkpoint folders, then coqui-tts's downloads (``hub_dir``, else its own folder)."""
    from studio.engine.coqui.checkpoint import is_voice_folder

    if user_dir is not None:
        # folders holding a Coqui config.json (not Piper's .onnx.json), except vocoders
        # (listed with the voice they pair with) and other programs' config.json
        for folder in _sorted(c.parent for c in user_dir.rglob("config.json") if is_voice_folder(c.parent)):
            yield folder, lambda f=folder: coqui_voice_info(f, source="user")
    hub = hub_dir if hub_dir is not None else coqui_models_dir()
    if hub.is_dir():
        for folder in _sorted(p for p in hub.iterdir() if p.name.startswith(HUB_PREFIX)):
            if (folder / "config.json").is_file():
                yield folder, lambda f=folder: coqui_voice_info(f, source="coqui-hub")


def _sorted(paths) -> list[Path]:
    """Sorted paths; an unreadable directory during the walk is logged, not raised."""
    try:
        return sorted(paths)
    except OSError as exc:
        _LOGGER.warning("cannot scan voices: %s", exc)
        return []
