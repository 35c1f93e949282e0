"""The preset a family defaults to follows the measurements given to it: a faster preset wins,
one outside the family's quality bound never does, and a measurement belongs to its machine."""

from __future__ import annotations

from studio.engine.voice.catalog import get_voice
from studio.stack import preset_speed
from studio.stack.preset_speed import (FamilyTrial, PresetTrial, default_preset, fastest, machine_key,
                                       measured_choice, save_trial)

REF = "fp32-cpu"


def test_the_faster_preset_within_the_bound_wins_by_its_measured_margin() -> None:
    trials = [PresetTrial(REF, 0.60, 1.0), PresetTrial("int8-cpu", 0.40, 0.985)]
    choice = fastest(trials, REF, 0.98)
    assert choice.preset == "int8-cpu" and abs(choice.speedup - 1.5) < 1e-9
    assert "1.50x" in choice.why
    # the same presets, measured the other way round on another machine: the reference wins
    slower = [PresetTrial(REF, 0.60, 1.0), PresetTrial("int8-cpu", 0.70, 0.985)]
    assert fastest(slower, REF, 0.98).preset == REF


def test_a_preset_outside_the_quality_bound_is_never_chosen_however_fast() -> None:
    trials = [PresetTrial(REF, 0.60, 1.0), PresetTrial("int8-cpu", 0.10, 0.90), PresetTrial("bf16-cpu", 0.50, 0.995)]
    choice = fastest(trials, REF, 0.99)
    assert choice.preset == "bf16-cpu" and "int8-cpu left out" in choice.why
    assert fastest(trials, REF, 0.0).preset == REF  # bound 0: only the reference qualifies
    failed = [PresetTrial(REF, 0.60, 1.0), PresetTrial("int8-cpu", None, None, error="RuntimeError: no")]
    assert fastest(failed, REF, 0.5).preset == REF
    assert fastest([], REF, 0.99).preset == REF  # nothing measured: the reference


def test_the_measured_choice_is_a_voices_default_only_on_the_machine_it_was_measured_on(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STUDIO_PRESET_TRIALS", str(tmp_path))
    voice = get_voice(None)
    group, bound = voice.abilities.speed_group, voice.abilities.quality_bound
    assert group and 0 < bound < 1
    assert measured_choice(voice) is None and default_preset(voice).name == REF

    def trial(int8_speed: float, int8_quality: float, machine: str | None = None) -> FamilyTrial:
        return FamilyTrial(group, voice.id, REF, bound, machine or machine_key(), "now", 5,
                           (PresetTrial(REF, 0.6, 1.0), PresetTrial("int8-cpu", int8_speed, int8_quality)))

    save_trial(trial(0.3, bound + 0.001))
    assert measured_choice(voice).preset == "int8-cpu" and default_preset(voice).name == "int8-cpu"
    assert default_preset(voice, "torch").name == "fp32-torch"  # another backend asked for: its own default
    save_trial(trial(0.3, bound - 0.001))  # faster, but outside the bound
    assert measured_choice(voice).preset == REF and default_preset(voice).name == REF
    # a trial of another CPU (or other package versions) is not this machine's
    save_trial(trial(0.3, bound + 0.001))
    monkeypatch.setattr(preset_speed, "machine_key", lambda: "another CPU | avx512f | onnxruntime=9")
    assert measured_choice(voice) is None and default_preset(voice).name == REF


def test_unmeasured_kokoro_defaults_to_its_model_as_published(tmp_path, monkeypatch) -> None:
    """No build that was faster on another CPU kind is the default before it is measured here."""
    import pytest

    from studio.core.errors import VoiceError

    monkeypatch.setenv("STUDIO_PRESET_TRIALS", str(tmp_path))
    try:
        kumo = get_voice("kokoro:jm_kumo")
    except VoiceError:
        pytest.skip("the offline Kokoro voices are not installed")
    assert measured_choice(kumo) is None and default_preset(kumo).name == "int8-cpu"
    save_trial(FamilyTrial(kumo.abilities.speed_group, kumo.id, "int8-cpu", kumo.abilities.quality_bound,
                           machine_key(), "now", 5, (PresetTrial("int8-cpu", 0.7, 1.0), PresetTrial("fp32-cpu", 0.5, 0.97))))
    assert default_preset(kumo).name == "fp32-cpu"  # measured faster here, within the bound
