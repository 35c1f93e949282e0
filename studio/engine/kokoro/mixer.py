"""The voice mixer: a weighted blend of Kokoro packs, heard as a sample, saved as a named voice.

Why in the engine layer: a blend is made of voices the catalog lists, and only this
package knows that a Kokoro voice is a pack that can be mixed; the command line and
the desktop ask for a blend by voice ids and weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.core.errors import VoiceError
from studio.engine.base import SynthesisSettings
from studio.engine.kokoro.packs import ID_PREFIX, blend, blend_language, load_pack, parse_recipe, save_blend
from studio.engine.kokoro.frontend import SAMPLE_RATE
from studio.engine.kokoro.voices import FAMILY_NAME
from studio.engine.voice.catalog import default_voices_dir, list_voices
from studio.engine.voice.info import VoiceInfo

SAMPLE_TEXT = "The lighthouse keeper climbed the stairs at dusk, and the sea was calm and grey."


@dataclass(frozen=True)
class Blend:
    """A mixed pack and what it was mixed from."""

    pack: np.ndarray
    recipe: tuple[tuple[str, float], ...]
    language: str


def mix(recipe_text: str, user_dir: Path | None = None) -> Blend:
    """The blend ``recipe_text`` describes (``kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4``);
    VoiceError names a part that is not an installed Kokoro voice."""
    recipe = parse_recipe(recipe_text)
    voices = {v.id: v for v in list_voices(user_dir) if v.family == FAMILY_NAME}
    packs = {}
    for voice_id, _ in recipe:
        voice = voices.get(voice_id)
        if voice is None:
            raise VoiceError(f"{voice_id} is not an installed Kokoro voice; these are: {', '.join(voices) or 'none'}")
        packs[voice_id] = load_pack(voice.model_path, voice_id.removeprefix(ID_PREFIX))
    return Blend(blend(packs, recipe), recipe, blend_language(recipe, {k: v.language for k, v in voices.items()}))


def sample(mixed: Blend, text: str = SAMPLE_TEXT, language: str = "en", settings: SynthesisSettings | None = None,
           threads: int | None = None) -> np.ndarray:
    """The blend speaking ``text`` (to hear it before it is saved), by the fp32-cpu model."""
    from studio.engine.kokoro.engine import KokoroEngine
    from studio.engine.kokoro.model import model_for
    from studio.engine.kokoro.packs import USER_FOLDER

    engine = KokoroEngine(model_for("fp32", default_voices_dir() / USER_FOLDER), mixed.pack, mixed.language,
                          threads=threads)
    try:
        return engine.synthesize(text, language, settings or SynthesisSettings())
    finally:
        engine.close()


def save(name: str, mixed: Blend, user_dir: Path | None = None) -> VoiceInfo:
    """Save the blend as ``kokoro:NAME`` in the user's voices folder; VoiceError if the name is taken
    by another voice."""
    folder = user_dir if user_dir is not None else default_voices_dir()
    taken = {v.id: v for v in list_voices(folder)}
    voice_id = ID_PREFIX + name
    if voice_id in taken and not (taken[voice_id].config_path.name.endswith(".blend.json")):
        raise VoiceError(f"{voice_id} is already a voice pack; choose another name for the blend")
    save_blend(folder, name, mixed.pack, mixed.recipe, mixed.language)
    return next(v for v in list_voices(folder) if v.id == voice_id)


class KokoroMixer:
    """The mixer as the family exports it (:class:`studio.engine.family.Mixer`)."""

    sample_text = SAMPLE_TEXT

    def mix(self, recipe: str) -> Blend:
        return mix(recipe)

    def sample(self, blend: Blend, text: str) -> tuple[np.ndarray, int]:
        return sample(blend, text), SAMPLE_RATE

    def save(self, name: str, blend: Blend) -> VoiceInfo:
        return save(name, blend)


MIXER = KokoroMixer()
