"""Coqui checkpoints (tiny, built by coqui-tts's own classes) listed and spoken through the Coqui engine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import EngineError, PresetUnavailable
from studio.engine.base import SynthesisSettings
from studio.engine.presets import open_preset
from studio.engine.voice.catalog import get_voice, list_voices
from support.coqui import COQUI_VOICES, MIXED, coqui_voices  # noqa: F401 - a fixture, named as an argument

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning")


def _voice(root: Path, voice_id: str, tmp_path: Path):
    return get_voice(voice_id, root, hub_dir=tmp_path / "no-downloads")


def _engine(root: Path, voice_id: str, tmp_path: Path, preset: str = "fp32-torch"):
    engine = open_preset(preset, _voice(root, voice_id, tmp_path), threads=1)
    engine.load()
    return engine


def test_each_architecture_is_listed_with_its_languages_speakers_and_presets(coqui_voices, tmp_path):
    voices = {v.id: v for v in list_voices(coqui_voices, hub_dir=tmp_path / "none")}
    for voice_id, (label, languages, speakers) in COQUI_VOICES.items():
        voice = voices[voice_id]
        assert label in voice.name and "Coqui" in voice.name
        assert voice.abilities.languages == languages and voice.abilities.speakers == speakers
        assert voice.language_family == languages[0]
        assert "fp32-torch" in voice.abilities.presets and "fp32-cpu" not in voice.abilities.presets
    assert voices["tinytaco"].abilities.presets == ("fp32-torch", "dynamic-int8", "fp16-cuda")
    assert voices["tinytaco"].abilities.batching and not voices["tinyvits"].abilities.batching
    assert "vocoder" not in voices  # the Tacotron's HiFi-GAN is its vocoder, not a voice
    with pytest.raises(PresetUnavailable, match="tinyvits cannot run preset fp32-cpu"):
        open_preset("fp32-cpu", voices["tinyvits"])


@pytest.mark.parametrize("voice_id", ["tinyglow", "tinyvits"])
def test_glow_tts_and_vits_speak_the_same_audio_twice(coqui_voices, tmp_path, voice_id):
    engine = _engine(coqui_voices, voice_id, tmp_path)
    ids = engine.text_to_ids("The river was quiet today.", "en")
    first, again = (engine.synthesize_batch([ids], SynthesisSettings())[0] for _ in range(2))
    assert first.dtype == np.float32 and len(first) > 1000 and np.abs(first).max() > 0
    np.testing.assert_array_equal(first, again)  # seeded by the sentence
    assert "Griffin-Lim" in engine.describe() if voice_id == "tinyglow" else "VITS" in engine.describe()


def test_tacotron2_speaks_through_its_separately_saved_hifigan(coqui_voices, tmp_path):
    engine = _engine(coqui_voices, "tinytaco", tmp_path)
    assert "vocoder vocoder" in engine.describe() and "Griffin-Lim" not in engine.describe()
    ids = engine.text_to_ids("Hello there, my friend.", "en")
    audio = engine.synthesize_batch([ids], SynthesisSettings())[0]
    mel = engine.model.inference(__import__("torch").tensor([ids]))["model_outputs"][0]
    padding = engine.vocoder.model_g.inference_padding  # coqui's HiFi-GAN pads the mel at both ends
    assert len(audio) == (mel.shape[0] + 2 * padding) * 256  # one hop per frame of coqui's own inference


def test_a_sentence_alone_and_in_a_batch_of_8_gives_the_same_mel(coqui_voices, tmp_path):
    import torch

    from studio.engine.coqui.batching import tacotron2_mels

    engine = _engine(coqui_voices, "tinytaco", tmp_path)
    ids = [engine.text_to_ids(t, "en") for t in MIXED]
    seeds = list(range(len(ids)))
    with torch.inference_mode():
        batch = tacotron2_mels(engine.model, ids, [0] * 8, seeds)
        alone = [tacotron2_mels(engine.model, [i], [0], [s])[0] for i, s in zip(ids, seeds)]
        coqui = engine.model.inference(torch.tensor([ids[1]]))["model_outputs"][0]
    lengths = [m.shape[0] for m in alone]
    assert len(set(lengths)) >= 3 and max(lengths) == 40  # each stopped by its own stop token
    assert [m.shape[0] for m in batch] == lengths
    for b, a in zip(batch, alone):
        torch.testing.assert_close(b, a, rtol=0, atol=1e-5)
    torch.testing.assert_close(alone[1], coqui, rtol=0, atol=1e-5)  # and alone is coqui's own inference
    audio = engine.synthesize_batch(ids, SynthesisSettings())
    padding = engine.vocoder.model_g.inference_padding
    assert [len(a) for a in audio] == [(n + 2 * padding) * 256 for n in lengths]


def test_multilingual_vits_is_given_each_passages_language_and_speaker(coqui_voices, tmp_path):
    engine = _engine(coqui_voices, "tinyyourtts", tmp_path)
    en, fr = engine.text_to_ids("Bonjour mes amis.", "en"), engine.text_to_ids("Bonjour mes amis.", "fr")
    assert en[1:] == fr[1:] and en[0] != fr[0]  # same characters, the language rides along
    settings = SynthesisSettings(speaker_id=1)
    audio_en, audio_fr = engine.synthesize_batch([en, fr], settings)
    assert not np.array_equal(audio_en[: len(audio_fr)], audio_fr[: len(audio_en)])
    with pytest.raises(EngineError, match="does not speak 'de'"):
        engine.text_to_ids("Guten Tag.", "de")
    with pytest.raises(EngineError, match=r"has 2 speakers \(0-1\); there is no speaker 5"):
        engine.synthesize_batch([en], SynthesisSettings(speaker_id=5))


def test_dynamic_int8_quantizes_the_tacotrons_lstms_and_linears(coqui_voices, tmp_path):
    engine = _engine(coqui_voices, "tinytaco", tmp_path, "dynamic-int8")
    assert engine.quantized_layers > 5 and "Linear/LSTM layers quantized" in engine.describe()
    ids = engine.text_to_ids("Hello there, my friend.", "en")
    assert len(engine.synthesize_batch([ids], SynthesisSettings())[0]) > 0


# ------------------------------------------------------------------ bad input


def _copy(root: Path, voice_id: str, dest: Path) -> Path:
    shutil.copytree(root / voice_id, dest / voice_id)
    return dest / voice_id


def test_bad_checkpoints_are_skipped_with_one_line_and_the_others_still_list(coqui_voices, tmp_path, caplog):
    user = tmp_path / "voices"
    _copy(coqui_voices, "tinyvits", user)
    truncated = _copy(coqui_voices, "tinyglow", user)
    data = (truncated / "model.pth").read_bytes()
    (truncated / "model.pth").write_bytes(data[: len(data) // 2])
    missing = _copy(coqui_voices, "tinyvits-cast", user)
    (missing / "model.pth").unlink()
    unknown = _copy(coqui_voices, "tinyyourtts", user)
    config = json.loads((unknown / "config.json").read_text())
    (unknown / "config.json").write_text(json.dumps({**config, "model": "wavenet_tts"}))
    ids = [v.id for v in list_voices(user, hub_dir=tmp_path / "none")]
    assert "tinyvits" in ids and not {"tinyglow", "tinyvits-cast", "tinyyourtts"} & set(ids)
    text = caplog.text
    assert "checkpoint is truncated" in text and "no model checkpoint (*.pth)" in text
    assert "names model 'wavenet_tts', which coqui-tts does not know" in text


def test_a_vocoder_that_does_not_fit_is_refused_naming_both_values(coqui_voices, tmp_path):
    import coqui_checkpoints as build

    taco = _copy(coqui_voices, "tinytaco", tmp_path / "voices")
    shutil.rmtree(taco / "vocoder")
    build.hifigan(taco / "vocoder", sample_rate=24000)
    with pytest.raises(EngineError, match="its sample_rate is 24000 Hz, the model's is 22050 Hz"):
        open_preset("fp32-torch", _voice(tmp_path / "voices", "tinytaco", tmp_path))


def test_a_checkpoint_of_another_model_fails_to_load_with_one_line(coqui_voices, tmp_path):
    vits = _copy(coqui_voices, "tinyvits", tmp_path / "voices")
    shutil.copy(coqui_voices / "tinyglow" / "model.pth", vits / "model.pth")
    engine = open_preset("fp32-torch", _voice(tmp_path / "voices", "tinyvits", tmp_path), threads=1)
    with pytest.raises(EngineError, match="the checkpoint cannot be loaded") as caught:
        engine.load()
    assert "\n" not in str(caught.value)
