"""The Piper front end and the ONNX engine, on the real bundled voice (no mocks)."""

from __future__ import annotations

from dataclasses import replace

import json
import multiprocessing
import pickle
import shutil
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import EngineError, PresetUnavailable, VoiceError
from studio.engine.onnx.piper import OnnxPiperEngine, cuda_available
from studio.engine.voice.phonemize import ESPEAK_VOICES, PiperFrontEnd
from studio.engine.presets import open_preset
from studio.engine.voice.config import VoiceConfig
from studio.engine.voice.catalog import get_voice

from support.voice import DETERMINISTIC
SENTENCES = [
    "Yes.",
    "The quick brown fox jumps over the lazy dog.",
    "After a long journey across the mountains, the travellers reached the village.",
]


@pytest.fixture(scope="module")
def voice():
    return get_voice(None)


@pytest.fixture(scope="module")
def config(voice) -> VoiceConfig:
    return VoiceConfig.from_file(voice.config_path)


@pytest.fixture(scope="module")
def engine(onnx_engine):
    return onnx_engine


def _piper_ids(config_path: Path, text: str) -> list[list[int]]:
    """Piper's own front end (session is not needed to phonemize)."""
    from piper import PiperVoice
    from piper.config import PiperConfig

    piper_voice = PiperVoice(
        session=None, config=PiperConfig.from_dict(json.loads(config_path.read_text()))
    )
    return [piper_voice.phonemes_to_ids(p) for p in piper_voice.phonemize(text)]


# ------------------------------------------------------------------ config


def test_voice_config_reads_bundled_voice(config):
    assert config.sample_rate == 22050
    assert config.espeak_voice == "en-us"
    assert config.phoneme_type == "espeak"
    assert config.language == "en_US" and config.language_family == "en"
    assert config.num_speakers == 1
    assert config.phoneme_id_map["^"] == (1,)
    defaults = config.default_settings
    assert (defaults.noise_scale, defaults.length_scale, defaults.noise_w) == (0.667, 1.0, 0.8)
    assert defaults.speaker_id is None
    assert pickle.loads(pickle.dumps(config)) == config


def test_voice_config_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.onnx.json"
    bad.write_text("{not json")
    with pytest.raises(VoiceError, match="bad.onnx.json"):
        VoiceConfig.from_file(bad)
    bad.write_text(json.dumps({"audio": {"sample_rate": 22050}}))
    with pytest.raises(VoiceError, match="bad.onnx.json"):
        VoiceConfig.from_file(bad)
    good = json.loads(Path(get_voice(None).config_path).read_text())
    del good["phoneme_id_map"]["$"]
    bad.write_text(json.dumps(good))
    with pytest.raises(VoiceError, match="lacks"):
        VoiceConfig.from_file(bad)
    with pytest.raises(VoiceError, match="not found"):
        VoiceConfig.from_file(tmp_path / "missing.json")


# ------------------------------------------------------------------ front end


@pytest.mark.parametrize(
    "text",
    ["Hello world.", "The quick brown fox, as they say, jumps over the lazy dog!", "Is it 42?"],
)
def test_ids_match_piper(config, voice, text):
    ids = PiperFrontEnd(config).text_to_ids(text, "en")
    (expected,) = _piper_ids(voice.config_path, text)
    assert ids == expected
    bos, pad, eos = config.phoneme_id_map["^"][0], config.phoneme_id_map["_"][0], config.phoneme_id_map["$"][0]
    assert ids[0] == bos and ids[-1] == eos
    assert ids[1::2] == [pad] * len(ids[1::2])  # PAD after BOS and after every phoneme


def test_espeak_sub_sentences_become_one_sequence(config, voice):
    text = "Dr. Smith went home."
    per_sentence = _piper_ids(voice.config_path, text)
    assert len(per_sentence) == 2  # espeak splits after "Dr."
    front_end = PiperFrontEnd(config)
    space = config.phoneme_id_map[" "][0]
    pad = config.phoneme_id_map["_"][0]
    joined = per_sentence[0][:-1] + [space, pad] + per_sentence[1][2:]
    assert front_end.text_to_ids(text, "en") == joined


def test_language_selects_espeak_voice(config):
    front_end = PiperFrontEnd(config)
    assert front_end.espeak_voice("en") == "en-us"
    assert front_end.espeak_voice("en-GB") == "en-us"  # same family: the voice's own accent
    assert front_end.espeak_voice("fr") == "fr"
    assert front_end.espeak_voice("pt_BR") == "pt-br"
    text = "Le garçon mange une pomme rouge dans le jardin."
    french, english = front_end.phonemize(text, "fr"), front_end.phonemize(text, "en")
    assert french != english
    assert "ʁ" in french and "ʁ" not in english
    assert front_end.text_to_ids(text, "fr") != front_end.text_to_ids(text, "en")
    with pytest.raises(EngineError, match="xx"):
        front_end.text_to_ids(text, "xx")


def test_every_mapped_espeak_voice_exists():
    from piper.phonemize_espeak import ESPEAK_DATA_DIR

    files = {p.name.lower() for p in (ESPEAK_DATA_DIR / "lang").rglob("*") if p.is_file()}
    missing = sorted({v for v in ESPEAK_VOICES.values() if v.lower() not in files})
    assert not missing
    config = VoiceConfig.from_file(get_voice(None).config_path)
    front_end = PiperFrontEnd(config)
    for language in ESPEAK_VOICES:  # espeak accepts each (RuntimeError otherwise)
        front_end.phonemize("abc", language)


def test_missing_phonemes_are_dropped(config):
    reduced = dict(config.phoneme_id_map)
    del reduced["ð"]  # "the"
    small = VoiceConfig(**{**config.__dict__, "phoneme_id_map": reduced})
    full_ids = PiperFrontEnd(config).text_to_ids("the", "en")
    ids = PiperFrontEnd(small).text_to_ids("the", "en")
    assert config.phoneme_id_map["ð"][0] in full_ids
    assert config.phoneme_id_map["ð"][0] not in ids
    assert len(ids) == len(full_ids) - 2  # the phoneme and its PAD


def _ids_in_child(config: VoiceConfig, text: str, language: str) -> list[int]:
    return PiperFrontEnd(config).text_to_ids(text, language)


def test_front_end_is_pure_across_threads_and_processes(config):
    front_end = PiperFrontEnd(config)
    jobs = [(s, lang) for s in SENTENCES for lang in ("en", "fr", "de")] * 3
    expected = [front_end.text_to_ids(s, lang) for s, lang in jobs]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(lambda j: front_end.text_to_ids(*j), jobs)) == expected
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=ctx) as pool:
        child = list(pool.map(_ids_in_child, [config] * 3, *zip(*jobs[:3])))
    assert child == expected[:3]


# ------------------------------------------------------------------ engine


def test_synthesis_is_plausible_speech(engine):
    text = SENTENCES[1]
    audio = engine.synthesize(text, "en", engine.default_settings)
    assert engine.sample_rate == 22050 and engine.name == "onnx"
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert np.abs(audio).max() <= 1.0
    rms = float(np.sqrt(np.mean(audio**2)))
    assert rms > 0.02
    seconds = len(audio) / engine.sample_rate
    words = len(text.split())
    assert 0.15 * words < seconds < 0.8 * words


def test_batch_matches_one_at_a_time(engine):
    ids = [engine.text_to_ids(s, "en") for s in SENTENCES]
    assert len({len(i) for i in ids}) == 3
    singles = [engine.synthesize_batch([i], DETERMINISTIC)[0] for i in ids]
    batched = engine.synthesize_batch(ids, DETERMINISTIC)
    for single, item in zip(singles, batched):
        assert len(item) == len(single)
        assert np.corrcoef(single, item)[0, 1] >= 0.999


def test_alignments_cover_the_audio(engine, config):
    text = "Well, it rained. Then, quite suddenly, the sun came out."
    ids = engine.text_to_ids(text, "en")
    ((audio, samples),) = engine.synthesize_batch_with_alignments([ids], DETERMINISTIC)
    assert samples is not None and len(samples) == len(ids)
    assert int(samples.sum()) == len(audio)
    assert (samples % config.hop_length == 0).all()
    comma = config.phoneme_id_map[","][0]
    comma_samples = [int(samples[k]) for k, i in enumerate(ids) if i == comma]
    assert len(comma_samples) == 3 and all(n > 0 for n in comma_samples)


def test_edge_cases(engine):
    assert engine.synthesize_batch([], DETERMINISTIC) == []
    ids = engine.text_to_ids("Hi.", "en")
    out = engine.synthesize_batch([[], ids], DETERMINISTIC)
    assert len(out[0]) == 0 and len(out[1]) > 0
    engine.load()  # idempotent


def test_close_and_reload(engine):
    first = engine.synthesize("Hi.", "en", DETERMINISTIC)
    engine.close()
    engine.close()  # idempotent
    again = engine.synthesize("Hi.", "en", DETERMINISTIC)  # loads again on demand
    assert np.array_equal(first, again)


def test_cuda_request_without_cuda_falls_back(voice):
    if cuda_available():
        pytest.skip("this machine has CUDA")
    eng = OnnxPiperEngine(voice.model_path, voice.config_path, device="cuda", threads=1)
    eng.load()
    assert eng.providers == ["CPUExecutionProvider"]
    eng.close()


def test_open_preset_errors(voice, tmp_path):
    with pytest.raises(PresetUnavailable, match="unknown preset"):
        open_preset("tensorflow", voice)
    with pytest.raises(PresetUnavailable, match="device"):
        open_preset("fp32-cpu", voice, device="tpu")
    torch_only = replace(voice, abilities=replace(voice.abilities, presets=("fp32-torch",)))
    with pytest.raises(PresetUnavailable, match=r"cannot run preset fp32-cpu \(its presets: fp32-torch\)"):
        open_preset("fp32-cpu", torch_only)


def test_unreadable_model_is_engine_error(voice, tmp_path):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"this is not a model")
    shutil.copy(voice.config_path, tmp_path / "broken.onnx.json")
    with pytest.raises(EngineError, match="broken.onnx"):
        OnnxPiperEngine(broken).load()
