"""Intelligibility: the bundled voice's audio is recognised as the words it was given.

pocketsphinx (offline, its bundled en-us model) transcribes the render; the word
error rate must be low for speech and high for silence / white noise of the same
length, so the threshold separates "says the words" from "makes sound".
Measured with this voice: 0.00-0.12 WER on these sentences (noise 0), 1.0 for
silence and noise.
"""

from __future__ import annotations

import numpy as np
import pytest

from studio.audio.resample import resample
from studio.measure.asr import word_error_rate
from studio.proof.sphinx import transcribe

pytest.importorskip("pocketsphinx")

SENTENCES = [
    "Please call me tomorrow morning at the office.",
    "I would like a cup of coffee with milk and sugar.",
]
from support.voice import DETERMINISTIC
GOOD = 0.35  # speech must score at or below this
BAD = 0.9  # silence and noise must score at or above this


@pytest.fixture(scope="module")
def engine(onnx_engine):
    return onnx_engine


@pytest.fixture(scope="module")
def renders(engine) -> list[np.ndarray]:
    """Both sentences rendered in one batch, so padding leaks would show up as errors."""
    ids = [engine.text_to_ids(s, "en") for s in SENTENCES]
    return engine.synthesize_batch(ids, DETERMINISTIC)


def test_word_error_rate():
    assert word_error_rate("Hello, world!", "hello world") == 0.0
    assert word_error_rate("the cat sat", "the cat") == pytest.approx(1 / 3)
    assert word_error_rate("the cat sat", "a cat sat down") == pytest.approx(2 / 3)
    assert word_error_rate("It's here.", "it's here") == 0.0
    assert word_error_rate("one two", "") == 1.0
    assert word_error_rate("", "") == 0.0


def test_resample_keeps_a_tone():
    sr_in, sr_out, freq = 22050, 16000, 440.0
    t = np.arange(sr_in) / sr_in
    out = resample(np.sin(2 * np.pi * freq * t), sr_in, sr_out)
    assert len(out) == sr_out and out.dtype == np.float32
    expected = np.sin(2 * np.pi * freq * np.arange(sr_out) / sr_out)
    assert np.corrcoef(out[100:-100], expected[100:-100])[0, 1] > 0.999


@pytest.mark.parametrize("index", range(len(SENTENCES)))
def test_speech_is_recognised(engine, renders, index):
    text = SENTENCES[index]
    hypothesis = transcribe(renders[index], engine.sample_rate)
    wer = word_error_rate(text, hypothesis)
    assert wer <= GOOD, f"WER {wer:.2f}: {hypothesis!r}"


def test_default_settings_are_recognised(engine):
    """With the voice's own (random) noise scales, on average over the sentences."""
    wers = [
        word_error_rate(s, transcribe(engine.synthesize(s, "en", engine.default_settings), engine.sample_rate))
        for s in SENTENCES
    ]
    assert float(np.mean(wers)) <= GOOD, wers


def test_silence_and_noise_are_not_speech(engine, renders):
    length = len(renders[0])
    rng = np.random.default_rng(1234)
    rms = float(np.sqrt(np.mean(renders[0] ** 2)))
    for name, audio in (
        ("silence", np.zeros(length, dtype=np.float32)),
        ("white noise", rng.normal(0.0, rms, length).astype(np.float32)),
    ):
        hypothesis = transcribe(audio, engine.sample_rate)
        wer = word_error_rate(SENTENCES[0], hypothesis)
        assert wer >= BAD, f"{name} gave WER {wer:.2f}: {hypothesis!r}"
