"""Windowed decoding: the latent decoded in windows gives the audio of one whole pass.

Real voice, real ONNX Runtime, noise off (the noise is drawn before the cut, so with
it on the two paths differ only by their random draws).
"""

from __future__ import annotations

import numpy as np
import pytest

from studio.measure.quality import log_mel_correlation
from studio.engine.onnx.int8 import Int8OnnxEngine
from studio.engine.onnx.piper import OnnxPiperEngine
from studio.engine.serving.streams import MultiStreamSynthesizer
from studio.engine.voice.catalog import get_voice
from studio.engine.decode_windows import Window, plan_windows

pytestmark = pytest.mark.timeout(600)

from support.voice import DETERMINISTIC as SILENT
#: one book-length sentence: ~20 s of speech, three windows of the default size
LONG = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age "
    "of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season "
    "of Light, it was the season of Darkness, it was the spring of hope, it was the winter of despair, "
    "we had everything before us, we had nothing before us."
)
SHORT = "Yes, said the keeper."


@pytest.fixture(scope="module")
def engines():
    voice = get_voice(None)
    windowed = OnnxPiperEngine(voice.model_path, voice.config_path, threads=1)
    small = OnnxPiperEngine(voice.model_path, voice.config_path, threads=1, window_frames=128)
    whole = OnnxPiperEngine(voice.model_path, voice.config_path, threads=1, window_frames=0)
    for e in (windowed, small, whole):
        e.load()
    yield windowed, small, whole
    for e in (windowed, small, whole):
        e.close()


def test_plan_covers_every_frame_once_and_caps_the_span():
    for frames in (1, 100, 384, 480, 481, 1000, 1467, 5000):
        plan = plan_windows(frames, 384, 48)
        assert plan[0].start == 0 and plan[-1].stop == frames
        assert all(a.stop == b.start for a, b in zip(plan, plan[1:]))
        assert all(w.lo == max(0, w.start - 48) and w.hi == min(frames, w.stop + 48) for w in plan)
        assert all(w.hi - w.lo <= 480 for w in plan)  # the arena never sees a larger call
        sizes = [w.stop - w.start for w in plan]
        assert max(sizes) - min(sizes) <= 1  # equal windows: no short tail decoded for its context
    assert plan_windows(0) == []
    assert plan_windows(480, 384, 48) == [Window(0, 480, 0, 480)]
    assert len(plan_windows(481, 384, 48)) == 2


def test_windowed_equals_whole_decoding(engines):
    windowed, small, whole = engines
    assert windowed.window_frames > 0 and whole.window_frames == 0
    ids = [windowed.text_to_ids(LONG, "en"), windowed.text_to_ids(SHORT, "en")]
    (latent,) = windowed.encode_batch(ids[:1], SILENT)
    assert len(latent.windows) >= 3  # really decoded in pieces
    want = whole.synthesize_batch_with_alignments(ids, SILENT)
    for engine in (windowed, small):
        got = engine.synthesize_batch_with_alignments(ids, SILENT)
        for (audio, samples), (ref, ref_samples) in zip(got, want):
            assert len(audio) == len(ref)
            assert np.array_equal(samples, ref_samples)  # durations untouched by the cut
            assert log_mel_correlation(ref, audio, windowed.sample_rate) >= 0.999
    # the default window's context covers the flow and decoder: same samples to float rounding
    # (against one sentence alone: in a padded batch the whole graph itself differs by ~1e-4)
    (audio,) = windowed.synthesize_batch(ids[:1], SILENT)
    (ref,) = whole.synthesize_batch(ids[:1], SILENT)
    assert np.max(np.abs(audio - ref)) < 1e-5


def test_one_long_sentence_spreads_over_both_streams():
    voice = get_voice(None)
    synth = MultiStreamSynthesizer(lambda: OnnxPiperEngine(voice.model_path, voice.config_path, threads=1), 2)
    whole = OnnxPiperEngine(voice.model_path, voice.config_path, threads=1, window_frames=0)
    with synth:
        ids = synth.text_to_ids(LONG, "en")
        (result,) = list(synth.synthesize_results([ids], SILENT))
        (ref,) = whole.synthesize_batch([ids], SILENT)
        rate = synth.sample_rate
    whole.close()
    assert len(result.windows) >= 3 and set(result.windows) == {0, 1}
    assert len(result.audio) == len(ref)
    assert log_mel_correlation(ref, result.audio, rate) >= 0.999


@pytest.mark.slow
def test_int8_build_decodes_in_windows(tmp_path):
    """The INT8 graph (quantized flow and decoder, 4-D layout) is cut at the same latent."""
    voice = get_voice(None)
    engine = Int8OnnxEngine(voice.model_path, voice.config_path, threads=1)
    engine.load()
    try:
        assert engine.window_frames > 0
        ids = engine.text_to_ids(LONG, "en")
        (latent,) = engine.encode_batch([ids], SILENT)
        (audio,) = engine.synthesize_batch([ids], SILENT)
        assert len(audio) == latent.frames * voice_hop(engine)
    finally:
        engine.close()


def voice_hop(engine: OnnxPiperEngine) -> int:
    return engine.config.hop_length
