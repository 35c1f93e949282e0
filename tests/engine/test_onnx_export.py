"""The torch VITS exports to ONNX (whole graph and flow+decoder) and ONNX Runtime agrees."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("TTS.tts.models.vits")
onnx = pytest.importorskip("onnx")

from studio.engine.torchvits import export as ox  # noqa: E402
from studio.engine.torchvits.infer import flow_decode, split_infer  # noqa: E402


# ------------------------------------------------------------------ test-only helpers


def ort_session(path: str | Path, threads: int | None = None):
    """A CPU ONNX Runtime session for an exported graph."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def run_ort(
    result: ox.ExportResult,
    session,
    model,
    id_seqs: Sequence[Sequence[int]],
    scales: tuple[float, float, float] = (0.0, 1.0, 0.0),
) -> list[np.ndarray]:
    """Per-item audio from an exported graph (the torch half runs ``model`` for ``flow_decoder``)."""
    import torch

    ids, lengths = ox.pad_ids(id_seqs)
    if result.variant == "full":
        audio, out_lengths = session.run(
            None,
            {"input": ids, "input_lengths": lengths, "scales": np.asarray(scales, dtype=np.float32)},
        )
        return [audio[b, 0, : int(out_lengths[b])] for b in range(len(id_seqs))]

    def decode(z_p, y_mask):
        (out,) = session.run(None, {"z_p": z_p.float().cpu().numpy(), "y_mask": y_mask.float().cpu().numpy()})
        return torch.from_numpy(out)

    with torch.inference_mode():
        audio, out_lengths = split_infer(
            model, decode, torch.from_numpy(ids), torch.from_numpy(lengths), *scales, result.hop_length
        )
    return [audio[b, : int(out_lengths[b])].numpy() for b in range(len(id_seqs))]


def run_torch(model, hop_length: int, id_seqs: Sequence[Sequence[int]], scales=(0.0, 1.0, 0.0)) -> list[np.ndarray]:
    """Reference per-item audio from the torch model (same padding as :func:`run_ort`)."""
    import torch

    from studio.engine.torchvits.infer import piper_vits_infer

    ids, lengths = ox.pad_ids(id_seqs)
    with torch.inference_mode():
        audio, out_lengths = piper_vits_infer(
            model, torch.from_numpy(ids), torch.from_numpy(lengths), *scales, hop_length
        )
    return [audio[b, : int(out_lengths[b])].float().numpy() for b in range(len(id_seqs))]


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of two equal-length signals (1.0 for two identical silences)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"length mismatch {a.shape} vs {b.shape}")
    if a.std() == 0 or b.std() == 0:
        return 1.0 if np.allclose(a, b) else 0.0
    return float(np.corrcoef(a, b)[0, 1])

SENTENCES = (
    "The old house at the end of the lane had been empty for years.",
    "Come in, he said.",
)


@pytest.fixture(scope="module")
def engine():
    from studio.engine.torchvits.engine import TorchVitsEngine
    from studio.engine.voice.catalog import get_voice

    eng = TorchVitsEngine(get_voice(None), threads=2)
    eng.load()
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def batch(engine):
    ids = [engine.text_to_ids(s, "en") for s in SENTENCES]
    assert len(ids[0]) != len(ids[1])
    return ids


@pytest.fixture(scope="module")
def reference(engine, batch):
    """Torch audio for the same padded batch, all noise off."""
    return run_torch(engine.model, engine.hop_length, batch)


def _dynamic_dims(path, names):
    model = onnx.load(str(path), load_external_data=False)
    dims = {}
    for value in list(model.graph.input) + list(model.graph.output):
        if value.name in names:
            dims[value.name] = [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]
    return dims


def _check_against_torch(result, engine, batch, reference):
    session = ort_session(result.path, threads=2)
    audio = run_ort(result, session, engine.model, batch)
    assert len(audio) == len(batch)
    for onnx_audio, torch_audio in zip(audio, reference):
        assert len(onnx_audio) == len(torch_audio)  # same durations -> same length
        assert len(onnx_audio) % engine.hop_length == 0
        assert correlation(onnx_audio, torch_audio) >= 0.999
    assert len(audio[0]) != len(audio[1])  # padding did not leak into the short item


def test_export_whole_graph_matches_torch(engine, batch, reference, tmp_path):
    result = ox.export_onnx(engine, tmp_path / "full.onnx", "full")
    assert result.input_names == ("input", "input_lengths", "scales")
    assert result.output_names == ("output", "output_lengths")
    dims = _dynamic_dims(result.path, {"input", "input_lengths", "output"})
    assert dims["input"] == ["batch", "phonemes"]
    assert dims["input_lengths"] == ["batch"]
    assert dims["output"][0] == "batch" and isinstance(dims["output"][2], str)
    assert len(result.sha256) == 64 and result.size_bytes > 10_000_000
    _check_against_torch(result, engine, batch, reference)


def test_export_flow_decoder_matches_torch(engine, batch, reference, tmp_path):
    result = ox.export_onnx(engine, tmp_path / "fd.onnx", "flow_decoder")
    assert result.input_names == ("z_p", "y_mask") and result.output_names == ("output",)
    dims = _dynamic_dims(result.path, {"z_p", "y_mask", "output"})
    assert dims["z_p"] == ["batch", result.latent_channels, "frames"]
    assert dims["y_mask"] == ["batch", 1, "frames"]
    assert dims["output"][0] == "batch"
    model = onnx.load(str(result.path), load_external_data=False)
    ops = {n.op_type for n in model.graph.node}
    assert "RandomNormalLike" not in ops and "NonZero" not in ops  # deterministic, shape-static
    _check_against_torch(result, engine, batch, reference)


def test_split_infer_reproduces_the_whole_model(engine, batch, reference):
    import torch

    ids, lengths = ox.pad_ids(batch)
    with torch.inference_mode():
        audio, out_lengths = split_infer(
            engine.model,
            lambda z, m: flow_decode(engine.model, z, m),
            torch.from_numpy(ids),
            torch.from_numpy(lengths),
            0.0, 1.0, 0.0,
            engine.hop_length,
        )
    for b, ref in enumerate(reference):
        got = audio[b, : int(out_lengths[b])].numpy()
        np.testing.assert_allclose(got, ref, atol=1e-5)


def test_unknown_variant_is_refused(engine, tmp_path):
    with pytest.raises(ValueError, match="unknown export variant"):
        ox.export_onnx(engine, tmp_path / "x.onnx", "encoder")
