"""The voice mixer of whichever family a blend's voices belong to (their abilities say ``mixing``).

Why here: the command line and the desktop ask for a blend by voice ids and weights
(``kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4``), never which family mixes them.
"""

from __future__ import annotations

from studio.core.errors import VoiceError
from studio.engine.families import family_of
from studio.engine.family import Mixer
from studio.engine.voice.catalog import get_voice


def mixer_for(recipe: str) -> Mixer:
    """The mixer of the recipe's first voice; VoiceError when that voice cannot be mixed."""
    first = recipe.split(",", 1)[0].split("=", 1)[0].strip()
    if not first:
        raise VoiceError("a blend is VOICE=WEIGHT,... e.g. kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4")
    voice = get_voice(first)
    mixer = family_of(voice).mixer() if voice.abilities.mixing else None
    if mixer is None:
        raise VoiceError(f"{voice.id} cannot be blended with other voices (choose voices the mixer lists)")
    return mixer
