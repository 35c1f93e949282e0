"""Dynamic INT8 quantization: real effect on Tacotron 2, honest no-op on VITS."""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("TTS.tts.models.tacotron2")

from studio.core.errors import EngineError  # noqa: E402
from studio.engine.base import SynthesisSettings  # noqa: E402
from studio.engine.torchvits.dynamic_quant import DynamicQuantTorchEngine, quantize_dynamic_model  # noqa: E402
from tacotron import random_tacotron2, tacotron2_input  # noqa: E402 - bench/tacotron.py


def _walk(model) -> dict[str, int]:
    """Independent count: exact float types quantize_dynamic targets, convs, quantized modules."""
    from torch.ao.nn.quantized import dynamic as nnqd
    from torch.nn.utils.parametrize import type_before_parametrizations as base_type

    nn = torch.nn
    kinds = [base_type(m) for m in model.modules()]
    return {
        "linear": sum(k is nn.Linear for k in kinds),
        "lstm": sum(k in (nn.LSTM, nn.LSTMCell) for k in kinds),
        "gru": sum(k in (nn.GRU, nn.GRUCell) for k in kinds),
        "conv": sum(issubclass(k, (nn.Conv1d, nn.Conv2d, nn.ConvTranspose1d, nn.ConvTranspose2d)) for k in kinds),
        "quantized": sum(isinstance(m, (nnqd.Linear, nnqd.LSTM, nnqd.LSTMCell, nnqd.GRU, nnqd.GRUCell))
                         for m in model.modules()),
    }


@pytest.fixture(scope="module")
def tacotron():
    return random_tacotron2(seed=0, max_decoder_steps=30)


def test_tacotron2_layers_get_quantized(tacotron):
    before = _walk(tacotron)
    qmodel, report = quantize_dynamic_model(tacotron, measure_size=True)
    after = _walk(qmodel)
    assert before["linear"] > 0 and before["lstm"] > 0
    assert (report.n_linear, report.n_lstm, report.n_gru) == (before["linear"], before["lstm"], before["gru"])
    assert report.n_quantized == after["quantized"] == report.n_candidates > 0
    assert report.n_conv_untouched == after["conv"] == before["conv"]
    assert _walk(tacotron) == before, "the FP32 model must be left untouched"
    assert report.size_quantized_bytes < 0.6 * report.size_fp32_bytes
    assert "quantized 11 of 11" in report.summary() or report.summary().startswith("quantized")


def test_quantized_tacotron2_output_stays_close(tacotron):
    qmodel, _ = quantize_dynamic_model(copy.deepcopy(tacotron), inplace=True)
    ids = tacotron2_input(tacotron, 40)
    with torch.inference_mode():
        ref = tacotron.inference(ids)
        out = qmodel.inference(ids)
    for key in ("model_outputs", "decoder_outputs", "alignments", "stop_tokens"):
        assert out[key].shape == ref[key].shape, key
    assert out["model_outputs"].shape[1] == 30 * tacotron.decoder.r  # fixed decoder steps
    a, b = ref["model_outputs"].flatten(), out["model_outputs"].flatten()
    assert torch.corrcoef(torch.stack([a, b]))[0, 1] > 0.99


def test_quantize_refuses_non_cpu_fp32(tacotron):
    with pytest.raises(EngineError, match="CPU float32"):
        quantize_dynamic_model(copy.deepcopy(tacotron).half())
    with pytest.raises(EngineError, match="CPU only"):
        DynamicQuantTorchEngine(None, device="cuda")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def vits_engine():
    from studio.engine.voice.catalog import get_voice

    engine = DynamicQuantTorchEngine(get_voice(None), threads=2)
    engine.load()
    yield engine
    engine.close()


def test_vits_report_matches_module_walk(vits_engine):
    report = vits_engine.quant_report
    walk = _walk(vits_engine.model)
    assert (report.n_linear, report.n_lstm, report.n_gru) == (walk["linear"], walk["lstm"], walk["gru"])
    assert report.n_quantized == walk["quantized"]
    assert report.n_conv_untouched == walk["conv"] > 100
    # a Piper VITS voice has no Linear/LSTM/GRU at all: the preset is FP32 and says so
    assert report.n_candidates == 0 and report.n_quantized == 0
    text = vits_engine.describe()
    assert "quantized 0 of 0 Linear/LSTM/GRU" in text and "runs as FP32" in text


def test_vits_dynamic_engine_still_speaks(vits_engine):
    ids = vits_engine.text_to_ids("Quantization changed nothing here.", "en")
    (audio,) = vits_engine.synthesize_batch([ids], SynthesisSettings(0.0, 1.0, 0.0))
    assert audio.dtype == np.float32 and audio.size > 5000 and np.abs(audio).max() > 0.01


def test_bench_script_prints_numbers(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "dynamic_quant_tacotron.py"
    spec = importlib.util.spec_from_file_location("dq_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    threads = torch.get_num_threads()
    try:
        assert module.main(["--steps", "10", "--repeats", "1", "--length", "20"]) == 0
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert "decoder" in out and "speedup" in out and "MiB" in out
