"""Which voices this machine has: every registered family's (:mod:`studio.engine.families`),
in the registry's order -- the bundled default first.

Why scanning instead of a registry file: users install voices by dropping files in
a folder (or by our downloader, which does the same), so the folder *is* the
registry. A broken file must never hide the other voices or crash the app, so
anything unreadable is skipped with a warning.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from studio.core.errors import StudioError, VoiceError
from studio.core.paths import data_dir
from studio.engine.families import families
from studio.engine.voice.info import VoiceInfo

_LOGGER = logging.getLogger(__name__)

VOICES_DIR_ENV = "STUDIO_VOICES_DIR"


def default_voices_dir() -> Path:
    """``$STUDIO_VOICES_DIR``, else ``voices`` in the studio's data folder (:func:`studio.core.paths.data_dir`)."""
    env = os.environ.get(VOICES_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return data_dir() / "voices"


def default_voice() -> VoiceInfo:
    """The voice a project without one renders with: the first family's own (the bundled voice)."""
    for family in families():
        voice = family.default_voice()
        if voice is not None:
            return voice
    raise VoiceError("no voice family ships a default voice; reinstall the studio")


def list_voices(user_dir: Path | None = None, *, hub_dir: Path | None = None) -> list[VoiceInfo]:
    """All usable voices, family by family in the registry's order (the bundled default first).

    ``user_dir``: the user's voices folder (default :func:`default_voices_dir`); ``hub_dir``:
    where a family's library keeps its downloads (default: that library's own folder).
    Ids are unique; a later voice with an id already taken is skipped with a warning.
    """
    user_dir = Path(user_dir) if user_dir is not None else default_voices_dir()
    user = user_dir if user_dir.is_dir() else None
    voices: list[VoiceInfo] = []
    for family in families():
        try:
            found = list(family.voices(user, Path(hub_dir) if hub_dir is not None else None))
        except (StudioError, OSError) as exc:
            _LOGGER.warning("cannot list the %s voices: %s", family.name, exc)
            continue
        for path, make in found:
            _add(voices, make, path)
    return voices


def get_voice(voice_id: str | None, user_dir: Path | None = None, *, hub_dir: Path | None = None) -> VoiceInfo:
    """The voice with this id (None = the default voice); VoiceError lists the choices."""
    try:
        default = default_voice()
    except StudioError:
        if voice_id is None:
            raise
    else:
        if voice_id is None or voice_id == default.id:
            return default
    voices = list_voices(user_dir, hub_dir=hub_dir)
    for voice in voices:
        if voice.id == voice_id:
            return voice
    available = ", ".join(v.id for v in voices) or "none"
    raise VoiceError(f"unknown voice {voice_id!r}; available: {available}")


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
