"""The decoder's convolutions kept in their own layouts across the residual adds: same audio, fewer copies.

Real ONNX Runtime throughout: residual blocks built here (FP32, and INT8 in
quantize / dequantize form), and the bundled voice's own decoders (``fp32-cpu``'s
and ``int8-cpu``'s), rewritten and compared with the plain graph. ORT lays
convolutions out blocked only on CPUs with AVX2 or AVX-512; elsewhere the tests
that need it skip with that reason.
"""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from studio.engine.onnx import residual_layouts as layouts
from studio.engine.onnx.int8 import Int8OnnxEngine
from studio.engine.onnx.piper import OnnxPiperEngine
from studio.engine.onnx.split import cached_split
from studio.engine.voice.catalog import get_voice

pytestmark = pytest.mark.timeout(600)

from support.voice import DETERMINISTIC as SILENT
CHANNELS = 32


def _residual_block() -> onnx.ModelProto:
    """``y = x + conv2(lrelu(x + conv1(lrelu(x))))`` and a plain conv after it, on ``[1, 32, 1, T]``,
    with the decoder's two inputs (latent and mask) -- HiFi-GAN's ResBlock2 in small."""
    rng = np.random.default_rng(3)
    weights = [numpy_helper.from_array((rng.standard_normal((CHANNELS, CHANNELS, 1, 3)) * 0.1).astype(np.float32),
                                       f"w{i}") for i in range(3)]
    biases = [numpy_helper.from_array(rng.standard_normal(CHANNELS).astype(np.float32) * 0.1, f"b{i}")
              for i in range(3)]
    axes = numpy_helper.from_array(np.array([2], dtype=np.int64), "axes")
    nodes = [
        helper.make_node("Mul", ["z", "mask"], ["zm"]),
        helper.make_node("Unsqueeze", ["zm", "axes"], ["x"]),
        helper.make_node("LeakyRelu", ["x"], ["a0"], alpha=0.1),
        helper.make_node("Conv", ["a0", "w0", "b0"], ["c0"], kernel_shape=[1, 3], pads=[0, 1, 0, 1]),
        helper.make_node("Add", ["c0", "x"], ["y0"]),
        helper.make_node("LeakyRelu", ["y0"], ["a1"], alpha=0.1),
        helper.make_node("Conv", ["a1", "w1", "b1"], ["c1"], kernel_shape=[1, 3], pads=[0, 3, 0, 3],
                         dilations=[1, 3]),
        helper.make_node("Add", ["c1", "y0"], ["y1"]),
        helper.make_node("Conv", ["y1", "w2", "b2"], ["c2"], kernel_shape=[1, 3], pads=[0, 1, 0, 1]),
        helper.make_node("Squeeze", ["c2", "axes"], ["audio"]),
    ]
    graph = helper.make_graph(
        nodes, "resblock",
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, CHANNELS, "t"]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, "t"])],
        [helper.make_tensor_value_info("audio", TensorProto.FLOAT, None)],
        weights + biases + [axes],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _int8_block() -> onnx.ModelProto:
    """Two residual steps whose convolutions are INT8 in quantize / dequantize form, as the INT8 build writes them."""
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array(np.array([2], dtype=np.int64), "axes")]
    for name, value, dtype in (("s_act", 0.02, np.float32), ("z_act", 128, np.uint8), ("s_out", 0.03, np.float32),
                               ("z_out", 120, np.uint8)):
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
    inits.append(numpy_helper.from_array((rng.standard_normal((CHANNELS, CHANNELS, 1, 1)) * 0.2).astype(np.float32),
                                         "up"))
    nodes = [helper.make_node("Mul", ["z", "mask"], ["zm"]), helper.make_node("Unsqueeze", ["zm", "axes"], ["u"]),
             helper.make_node("ConvTranspose", ["u", "up"], ["x"], kernel_shape=[1, 1])]  # as an upsampler feeds a stage
    stream = "x"
    for i in range(2):
        w = rng.integers(-100, 100, size=(CHANNELS, CHANNELS, 1, 3)).astype(np.int8)
        inits += [numpy_helper.from_array(w, f"wq{i}"),
                  numpy_helper.from_array(np.full(CHANNELS, 0.002, dtype=np.float32), f"ws{i}"),
                  numpy_helper.from_array(np.zeros(CHANNELS, dtype=np.int8), f"wz{i}"),
                  numpy_helper.from_array((rng.standard_normal(CHANNELS) * 0.1).astype(np.float32), f"b{i}")]
        nodes += [
            helper.make_node("LeakyRelu", [stream], [f"a{i}"], alpha=0.1),
            helper.make_node("QuantizeLinear", [f"a{i}", "s_act", "z_act"], [f"aq{i}"]),
            helper.make_node("DequantizeLinear", [f"aq{i}", "s_act", "z_act"], [f"ad{i}"]),
            helper.make_node("DequantizeLinear", [f"wq{i}", f"ws{i}", f"wz{i}"], [f"w{i}"], axis=0),
            helper.make_node("Conv", [f"ad{i}", f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[1, 3], pads=[0, 1, 0, 1]),
            helper.make_node("QuantizeLinear", [f"c{i}", "s_out", "z_out"], [f"cq{i}"]),
            helper.make_node("DequantizeLinear", [f"cq{i}", "s_out", "z_out"], [f"cd{i}"]),
            helper.make_node("Add", [f"cd{i}", stream], [f"y{i}"]),
        ]
        stream = f"y{i}"
    nodes.append(helper.make_node("Squeeze", [stream, "axes"], ["audio"]))
    graph = helper.make_graph(
        nodes, "int8_resblock",
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, CHANNELS, "t"]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, "t"])],
        [helper.make_tensor_value_info("audio", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _optimized(model: onnx.ModelProto, tmp_path: Path, *, needs=(layouts.NCHWC, "")) -> onnx.ModelProto:
    options = onnxruntime.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    optimized = onnx.load(options.optimized_model_filepath)
    domain, op = needs
    if not any(n.domain == domain and (not op or n.op_type == op) for n in optimized.graph.node):
        pytest.skip(f"ONNX Runtime makes no {op or 'blocked'} convolution of this graph on this CPU")
    return optimized


def _run(model: onnx.ModelProto, feeds: dict, *, optimize: bool) -> np.ndarray:
    options = onnxruntime.SessionOptions()
    if not optimize:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def test_residual_adds_and_leaky_relus_stay_blocked(tmp_path: Path) -> None:
    model = _residual_block()
    optimized = _optimized(model, tmp_path)
    before = collections.Counter(n.op_type for n in optimized.graph.node)
    assert before["ReorderOutput"] >= 2 and before["Add"] == 2  # ORT leaves the adds plain

    assert layouts.keep_blocked(optimized) > 0
    after = collections.Counter((n.domain, n.op_type) for n in optimized.graph.node)
    assert after[("", "Add")] == 0  # both residuals summed inside the blocked convolutions
    assert after[(layouts.NCHWC, "ReorderOutput")] < before["ReorderOutput"]
    assert any(n.op_type == "LeakyRelu" and n.input[0].endswith("__nchwc") for n in optimized.graph.node)
    onnx.checker.check_model(optimized)

    z = np.random.default_rng(0).standard_normal((1, CHANNELS, 200)).astype(np.float32)
    feeds = {"z": z, "mask": np.ones((1, 1, 200), dtype=np.float32)}
    np.testing.assert_allclose(_run(optimized, feeds, optimize=False), _run(model, feeds, optimize=True),
                               atol=1e-5, rtol=1e-5)


def test_int8_residual_steps_stay_channels_last(tmp_path: Path) -> None:
    model = _int8_block()
    optimized = _optimized(model, tmp_path, needs=("com.microsoft", "QLinearConv"))
    before = collections.Counter(n.op_type for n in optimized.graph.node)

    assert layouts.keep_channels_last(optimized) > 0
    after = collections.Counter(n.op_type for n in optimized.graph.node)
    assert after["Transpose"] < before["Transpose"]
    assert after["Transpose"] <= 2  # into the stage once, out of it once
    assert after["QLinearConv"] == before["QLinearConv"] == 2
    onnx.checker.check_model(optimized)

    z = (np.random.default_rng(1).standard_normal((1, CHANNELS, 300)) * 0.5).astype(np.float32)
    feeds = {"z": z, "mask": np.ones((1, 1, 300), dtype=np.float32)}
    np.testing.assert_allclose(_run(optimized, feeds, optimize=False), _run(model, feeds, optimize=True),
                               atol=1e-5, rtol=1e-5)


def test_a_graph_with_nothing_blocked_is_left_alone(tmp_path: Path) -> None:
    model = _residual_block()
    for node in model.graph.node:  # 1-D convs over [1, 32, T]: ORT keeps them plain
        if node.op_type in ("Unsqueeze", "Squeeze"):
            node.op_type, node.input[:] = "Identity", node.input[:1]
        if node.op_type == "Conv":
            for a in node.attribute:
                values = list(helper.get_attribute_value(a))
                a.ClearField("ints")
                a.ints.extend(values[1::2] if a.name == "pads" else values[1:])
    for w in model.graph.initializer:
        if len(w.dims) == 4:
            w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w)[:, :, 0, :], w.name))
    options = onnxruntime.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    optimized = onnx.load(options.optimized_model_filepath)
    nodes = [n.SerializeToString() for n in optimized.graph.node]

    assert layouts.keep_blocked(optimized) == 0
    assert [n.SerializeToString() for n in optimized.graph.node] == nodes


def test_the_build_is_cached_and_a_refusal_remembered(tmp_path: Path) -> None:
    model = _residual_block()
    _optimized(model, tmp_path)  # skips where nothing is blocked
    source = tmp_path / "decoder.onnx"
    onnx.save(model, str(source))

    built = layouts.kept_layouts_decoder(source, CHANNELS, tmp_path / "cache")
    assert built is not None and built.is_file()
    stamp = built.stat().st_mtime_ns
    assert layouts.kept_layouts_decoder(source, CHANNELS, tmp_path / "cache") == built
    assert built.stat().st_mtime_ns == stamp  # found, not made again

    other = tmp_path / "open.onnx"  # another model: the latent's channels unknown, so it cannot be checked
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "c"
    onnx.save(model, str(other))
    assert layouts.kept_layouts_decoder(other, "c", tmp_path / "cache") is None
    refused = layouts.kept_layouts_path(other, tmp_path / "cache").with_suffix(".none")
    assert "channel count" in refused.read_text()


@pytest.mark.parametrize("preset", ["fp32-cpu", "int8-cpu"])
def test_the_voice_decodes_blocked_with_the_same_audio(preset: str) -> None:
    voice = get_voice(None)
    if preset == "fp32-cpu":
        engine = OnnxPiperEngine(voice.model_path, voice.config_path, threads=1, decoder_4d=True)
    else:
        engine = Int8OnnxEngine(voice.model_path, voice.config_path, threads=1)
    engine.load()
    try:
        if not engine._decoder_layouts_kept:
            pytest.skip("ONNX Runtime lays out no convolution blocked on this CPU (needs AVX2 or AVX-512)")
        assert "layouts" in engine.describe() and "kept across the residual adds" in engine.describe()
        ids = engine.text_to_ids("The lighthouse keeper climbed the stairs, counting every step twice.", "en")
        (latent,) = engine.encode_batch([ids], SILENT)
        windows = [(w, engine.decode_window(latent, w)) for w in latent.windows]
        halves = cached_split(engine.model_path, engine._patched_model)
    finally:
        engine.close()
    plain = onnxruntime.InferenceSession(str(halves.decoder), providers=["CPUExecutionProvider"])
    hop = engine.config.hop_length
    for window, audio in windows:
        z = latent.z[None, :, window.lo : window.hi]
        (whole,) = plain.run(None, {halves.latent: z, halves.mask: np.ones((1, 1, z.shape[-1]), dtype=np.float32)})
        expected = whole.reshape(-1)[(window.start - window.lo) * hop : (window.stop - window.lo) * hop]
        assert np.abs(audio).max() > 0.05
        np.testing.assert_allclose(audio, expected, atol=1e-5)
