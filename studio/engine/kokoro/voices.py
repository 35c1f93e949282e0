"""Kokoro voices as the catalogue lists them: every pack and blend, read by name only."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from studio.core.language import language_family
from studio.engine.base import SynthesisSettings
from studio.engine.family import Found
from studio.engine.kokoro.frontend import SAMPLE_RATE
from studio.engine.kokoro.packs import ID_PREFIX, PRESETS, PackSource, list_packs
from studio.engine.voice.info import VoiceAbilities, VoiceInfo

FAMILY_NAME = "kokoro"


def found(user_dir: Path | None) -> Iterator[Found]:
    """Every Kokoro voice pack and blend here (:mod:`studio.engine.kokoro.packs`)."""
    for pack in list_packs(user_dir):
        yield pack.path, lambda p=pack: voice_info(p)


def voice_info(pack: PackSource) -> VoiceInfo:
    """One pack or blend as a voice.

    Languages: the pack's own first, then English: the model is one multilingual model and
    the offline Japanese packs read English prose intelligibly (docs/kokoro.md, measured).
    ``config_path`` is the voice's own file (a blend's recipe, else the pack's file). The name
    says the model and the voice as the credits speak them ("Kokoro Kumo").
    """
    family = language_family(pack.language)
    languages = tuple(dict.fromkeys(x for x in (family, "en") if x))
    config = pack.path.with_name(f"{pack.name}.blend.json") if pack.recipe else pack.path
    kind = "blend of " + " + ".join(f"{v.removeprefix(ID_PREFIX)} {w:g}" for v, w in pack.recipe) if pack.recipe \
        else (pack.language or "?")
    return VoiceInfo(
        id=ID_PREFIX + pack.name, name=f"Kokoro {pack.name.split('_', 1)[-1].title()} ({pack.name}, {kind})",
        family=FAMILY_NAME,
        language=pack.language, sample_rate=SAMPLE_RATE, model_path=pack.path, config_path=config,
        source="bundled" if pack.source == "bundled" else "user",
        abilities=VoiceAbilities(languages=languages, presets=PRESETS, phoneme_input=True, mixing=True),
        default_settings=SynthesisSettings(noise_scale=0.0, noise_w=0.0))
