"""Tacotron 2 and its HiFi-GAN exported as ONNX graphs (encoder, one decoder step with its
state, postnet, vocoder) and run on ONNX Runtime: the same mel and audio as torch."""

from __future__ import annotations

import numpy as np
import pytest

from studio.engine.presets import open_preset
from studio.engine.voice.catalog import get_voice
from support.coqui import coqui_voices  # noqa: F401 - a fixture, named as an argument

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning")


def test_the_exported_graphs_match_torch_on_onnx_runtime(coqui_voices, tmp_path):
    import onnxruntime as ort
    import torch

    from studio.engine.coqui.batching import tacotron2_mels
    from studio.engine.coqui.onnx_export import GRAPHS, export_tacotron2, onnx_mels

    engine = open_preset("fp32-torch", get_voice("tinytaco", coqui_voices, hub_dir=tmp_path / "none"), threads=1)
    engine.load()
    model, decoder = engine.model, engine.model.decoder
    ids = engine.text_to_ids("Hello there, my friend.", "en")
    paths = export_tacotron2(model, engine.vocoder, tmp_path / "onnx", ids)
    assert sorted(paths) == sorted(GRAPHS) and all(p.stat().st_size > 0 for p in paths.values())
    # the test model's stop token amplifies its logit 1000x (support/coqui.py), so float rounding could move
    # where it fires: compare whole runs of the decoder's step limit instead
    decoder.stop_threshold = 2.0
    for other in ("A much longer sentence that goes on and on for a while.", "Go."):  # dynamic time axis
        more = engine.text_to_ids(other, "en")
        with torch.inference_mode():
            want = tacotron2_mels(model, [more], [0], [0])[0].numpy()
        got = onnx_mels(paths, more, decoder.max_decoder_steps, decoder.stop_threshold, decoder.frame_channels)
        assert got.shape == want.shape == (decoder.max_decoder_steps, decoder.frame_channels)
        np.testing.assert_allclose(got, want, atol=1e-4)
    session = ort.InferenceSession(str(paths["vocoder"]), providers=["CPUExecutionProvider"])
    mel = torch.as_tensor(want.T[None].copy())
    (audio,) = session.run(None, {"mel": mel.numpy()})
    with torch.inference_mode():
        reference = engine.vocoder.inference(mel).numpy()
    np.testing.assert_allclose(audio, reference, atol=1e-4)
