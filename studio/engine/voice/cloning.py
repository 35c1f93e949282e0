"""A voice from a recording, made by the family that can (a voice whose abilities say ``cloning``).

Why a dispatcher here: the command line and the desktop ask the catalogue's voice, never
which family it belongs to; the voice's family makes the voice (its
:meth:`~studio.engine.family.VoiceFamily.cloner`). The clip arrives checked and prepared
(:mod:`studio.audio.reference_clip`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import VoiceError
from studio.engine.families import family_of


def _family(base: Any):
    if not base.abilities.cloning:
        raise VoiceError(f"{base.id} cannot take a voice from a recording (choose a model that can, e.g. XTTS v2)")
    cloner = family_of(base).cloner()
    if cloner is None:
        raise VoiceError(f"{base.id}: its family cannot take a voice from a recording")
    return cloner


def reference_rate(base: Any) -> int:
    """The sample rate ``base`` wants its reference clip at."""
    return int(_family(base).reference_rate(base))


def clone_voice(base: Any, name: str, audio: np.ndarray, rate: int, consent: str, source: Path,
                voices_dir: Path) -> Path:
    """The new voice's folder in ``voices_dir`` (VoiceError says why not)."""
    if not name or any(c in name for c in "/\\") or name.startswith("."):
        raise VoiceError(f"{name!r} cannot name a voice (letters, digits, '-' and '_')")
    return _family(base).clone_voice(base, name, audio, rate, consent, source, voices_dir)
