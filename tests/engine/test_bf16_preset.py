"""The ``bf16-cpu`` preset: flow + decoder in bfloat16 where the CPU has BF16 instructions.

Real voice, real torch and ONNX Runtime, noise off (both presets then speak the same
durations and comparable audio). The quality bounds are the INT8 preset's: log-mel
correlation >= 0.99 against FP32 on every sentence, pauses at or below -60 dBFS,
identical durations. On a CPU without ``avx512_bf16``/AMX the quality tests skip with
that reason, and the preset is hidden with it (tested by patching the flags).
"""

from __future__ import annotations

import numpy as np
import pytest

from studio.measure import quality as Q
from studio.core.errors import PresetUnavailable
from studio.engine import cpu_features
from studio.engine.presets import Missing, availability, open_preset
from studio.engine.voice.catalog import get_voice
from studio.engine.voice.config import VoiceConfig
from studio.stack.build import build_engine, plan_engine

pytestmark = pytest.mark.timeout(900)

from support.cpu import needs_bf16
from support.voice import DETERMINISTIC as SILENT
#: real prose: short and long sentences, commas and full stops (pauses to measure)
SENTENCES = [
    "Yes, said the keeper.",
    "The lamp turned, steady as a heartbeat, throwing its beam across the churning water.",
    "Twice he thought they would not make it; twice the wind dropped, and the little boat crept on.",
    ("It was the best of times, it was the worst of times, it was the age of wisdom, it was the age "
     "of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season "
     "of Light, it was the season of Darkness, it was the spring of hope, it was the winter of despair."),
]


@pytest.fixture
def no_bf16_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU with AVX-512 but without BF16 (an Ice Lake, a Zen 3): its flags, patched."""
    monkeypatch.setattr(cpu_features, "cpu_flags", lambda: frozenset({"sse4_2", "avx2", "fma", "avx512f", "avx512_vnni"}))


def test_cpu_flags_are_read_from_the_kernel() -> None:
    flags = cpu_features.cpu_flags()
    assert not flags or "fpu" in flags or "fp" in flags  # x86 or Arm: the real flag line, not a guess
    assert cpu_features.bf16_support()[0] == any(f in flags for f in cpu_features.BF16_FLAGS)


def test_the_preset_is_hidden_with_its_reason_on_a_cpu_without_bf16(no_bf16_cpu: None) -> None:
    from studio.desktop.facts import list_presets
    from studio.desktop.preset_words import plain_name, plain_reason

    ok, why, missing = availability("bf16-cpu")
    assert not ok and "no BF16 instructions" in why and "avx512_bf16" in why and missing == Missing.BF16_CPU
    with pytest.raises(PresetUnavailable, match="no BF16 instructions"):
        open_preset("bf16-cpu")
    row = {p.name: p for p in list_presets({})[0]}["bf16-cpu"]
    assert not row.available and row.reason == why and row.missing == missing  # greyed out, and why
    assert "processor" in plain_reason(row.missing)
    assert plain_name("bf16-cpu") == "Near-lossless 16-bit (speed: measure it here)"  # no promise of speed
    assert availability("fp32-cpu").ok and availability("int8-cpu").ok  # the other CPU presets stay


def test_the_preset_is_offered_where_the_flags_are(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("TTS", reason="the bf16-cpu preset runs coqui's Vits on torch (pip install 'audiobook-studio[torch]')")
    monkeypatch.setattr(cpu_features, "cpu_flags", lambda: frozenset({"avx2", "amx_tile", "amx_bf16"}))
    ok, why, _missing = availability("bf16-cpu")
    assert ok and "amx_bf16" in why and "bfloat16" in why


def _render(preset: str, streams: int) -> tuple[list[np.ndarray], list[np.ndarray], int]:
    engine = build_engine(plan_engine(preset, get_voice(None), streams=streams))
    with engine:
        ids = [engine.text_to_ids(s, "en") for s in SENTENCES]
        got = engine.synthesize_batch_with_alignments(ids, SILENT)
        rate = engine.sample_rate
    return [a for a, _ in got], [s for _, s in got], rate


@needs_bf16
def test_bf16_speaks_like_fp32_within_the_int8_bounds() -> None:
    """Same durations, log-mel correlation >= 0.99 per sentence, silent pauses stay silent."""
    ref_audio, ref_samples, rate = _render("fp32-cpu", 2)
    audio, samples, _ = _render("bf16-cpu", 2)
    pause_ids = Q.PauseIds.from_id_map(VoiceConfig.from_file(get_voice(None).config_path).phoneme_id_map)
    engine = open_preset("fp32-cpu")
    reports = []
    for text, r, t, rs, ts in zip(SENTENCES, ref_audio, audio, ref_samples, samples):
        assert np.array_equal(ts, rs), text  # the FP32 text encoder and duration predictor: same durations
        assert t.size == r.size == int(rs.sum())
        ids = engine.text_to_ids(text, "en")
        reports.append(Q.compare(r, t, rate, Q.pause_spans(ids, rs, pause_ids)))
    engine.close()
    summary = Q.summarize(reports)
    assert summary.logmel_corr >= 0.99, [round(r.logmel_corr, 4) for r in reports]
    assert summary.pauses >= 3  # commas and full stops were measured, not skipped
    assert summary.noise_floor_dbfs is not None and summary.noise_floor_dbfs <= -60.0
    assert summary.identical_durations
    assert max(float(np.abs(t).max()) for t in audio) <= 1.0  # clipped like every engine's output


@needs_bf16
def test_bf16_windows_spread_over_streams_and_equal_one_stream() -> None:
    """Windows of one long sentence on two streams give the samples of one stream decoding them all."""
    one, one_samples, _ = _render("bf16-cpu", 1)
    two, two_samples, _ = _render("bf16-cpu", 2)
    for a, b, sa, sb in zip(one, two, one_samples, two_samples):
        assert np.array_equal(sa, sb) and a.size == b.size
        assert float(np.abs(a - b).max()) < 1e-6  # same kernels, same windows: the stream is irrelevant


@pytest.mark.slow
def test_scripted_windows_equal_whole_decoding(tmp_path) -> None:
    """The ONNX encoder + scripted torch decoder in float32 (so rounding cannot hide a cut),
    128-frame windows, against the voice's whole graph in one pass."""
    pytest.importorskip("TTS", reason="the scripted decoder is built from coqui's Vits (pip install 'audiobook-studio[torch]')")
    from studio.engine.onnx.piper import OnnxPiperEngine
    from studio.engine.serving.split_engine import SplitEngine
    from studio.engine.torchvits.script_decoder import ScriptWindowDecoder, script_path

    voice = get_voice(None)
    split = SplitEngine(OnnxPiperEngine(voice.model_path, voice.config_path, threads=1, window_frames=128,
                                        encode_only=True),
                        ScriptWindowDecoder(voice, "float32", threads=1, cache_dir=tmp_path), "split")
    whole = OnnxPiperEngine(voice.model_path, voice.config_path, threads=1, window_frames=0)
    assert split.pending_build() is not None  # nothing cached yet in this folder
    try:
        ids = split.text_to_ids(SENTENCES[-1], "en")
        (latent,) = split.encode_batch([ids], SILENT)
        assert len(latent.windows) >= 4  # really decoded in pieces
        (audio, samples), = split.synthesize_batch_with_alignments([ids], SILENT)
        (ref, ref_samples), = whole.synthesize_batch_with_alignments([ids], SILENT)
        assert split.pending_build() is None and script_path(voice.model_path, "float32", tmp_path).is_file()
    finally:
        split.close()
        whole.close()
    assert np.array_equal(samples, ref_samples)  # one encoder: the same durations
    assert audio.size == ref.size == int(samples.sum())
    assert float(np.abs(audio - ref).max()) < 1e-4  # torch's kernels against ORT's, same weights
