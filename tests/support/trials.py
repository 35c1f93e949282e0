"""A voice's presets as measured on this machine, given to the tests the way the cache holds them."""

from __future__ import annotations

from studio.engine.voice.catalog import get_voice
from studio.stack.preset_speed import FamilyTrial, PresetTrial, machine_key, save_trial


def measured(voice_id: str | None, cpu: dict[str, float]) -> None:
    """This machine's trial of the voice's family: CPU seconds per audio second per preset, each
    within the family's quality bound (the reference first, as a trial lists it). The caller points
    ``$STUDIO_PRESET_TRIALS`` at a folder of the test's own."""
    voice = get_voice(voice_id)
    reference = voice.abilities.presets[0]
    bound = voice.abilities.quality_bound
    rows = tuple(PresetTrial(name, cpu[name], 1.0 if name == reference else bound + 0.005) for name in cpu)
    save_trial(FamilyTrial(voice.abilities.speed_group, voice.id, reference, bound, machine_key(), "now", 5, rows))
