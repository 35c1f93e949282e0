"""Kokoro's INT8 convolutions as signed-weight integer products: the same sums, and used only where
they gave the published model's audio."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from studio.engine import cpu_features
from studio.engine.base import SynthesisSettings
from studio.engine.kokoro import integer
from studio.engine.kokoro import model as kmodel

#: (output channels, input channels, kernel, dilation, stride) of the toy model's convolutions
CONVOLUTIONS = ((16, 8, 1, 1, 1), (16, 16, 3, 1, 1), (12, 16, 7, 3, 1), (12, 12, 5, 1, 2))


def _toy_kokoro(path, weights_span: int = 60) -> None:
    """A model with Kokoro's inputs and its quantizer's pattern (``DynamicQuantizeLinear -> ConvInteger ->
    Cast -> Mul``) for each of :data:`CONVOLUTIONS`, the weights within ``weights_span`` of 128 so that no
    integer kernel's byte pairs can saturate on any CPU."""
    rng = np.random.default_rng(3)
    nodes = [helper.make_node("Cast", ["tokens"], ["t"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["t", "axis0"], ["t3"]),
             helper.make_node("ReduceMean", ["style"], ["s"], keepdims=0),
             helper.make_node("Mul", ["t3", "s"], ["ts"]),
             helper.make_node("Sin", ["ts"], ["x0"]),
             helper.make_node("Tile", ["x0", "repeat"], ["x"])]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "axis0"),
             numpy_helper.from_array(np.array([1, 8, 1], np.int64), "repeat")]
    current = "x"
    for i, (out_ch, in_ch, kernel, dilation, stride) in enumerate(CONVOLUTIONS):
        weight = rng.integers(128 - weights_span, 128 + weights_span, (out_ch, in_ch, kernel), dtype=np.uint8)
        inits += [numpy_helper.from_array(weight, f"w{i}"), numpy_helper.from_array(np.array(131, np.uint8), f"wz{i}"),
                  numpy_helper.from_array(np.array(0.01, np.float32), f"ws{i}")]
        pad = dilation * (kernel - 1) // 2
        nodes += [helper.make_node("DynamicQuantizeLinear", [current], [f"q{i}", f"qs{i}", f"qz{i}"]),
                  helper.make_node("ConvInteger", [f"q{i}", f"w{i}", f"qz{i}", f"wz{i}"], [f"c{i}"], name=f"conv{i}",
                                   kernel_shape=[kernel], dilations=[dilation], strides=[stride], pads=[pad, pad]),
                  helper.make_node("Cast", [f"c{i}"], [f"f{i}"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", [f"qs{i}", f"ws{i}"], [f"scale{i}"]),
                  helper.make_node("Mul", [f"f{i}", f"scale{i}"], [f"y{i}"]),
                  helper.make_node("Sin", [f"y{i}"], [f"a{i}"])]
        current = f"a{i}"
    nodes.append(helper.make_node("Flatten", [current], ["audio"], axis=0))
    graph = helper.make_graph(
        nodes, "toy", [helper.make_tensor_value_info("tokens", TensorProto.INT64, [1, None]),
                       helper.make_tensor_value_info("style", TensorProto.FLOAT, [1, 256]),
                       helper.make_tensor_value_info("speed", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("audio", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _run(path, tokens: int) -> np.ndarray:
    feed = {"tokens": np.arange(1, tokens + 1, dtype=np.int64)[None], "style": np.full((1, 256), 0.3, np.float32),
            "speed": np.ones(1, np.float32)}
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feed)[0]


def test_each_stride_one_convolution_becomes_a_signed_product_with_the_same_sums(tmp_path):
    _toy_kokoro(tmp_path / "toy.onnx")
    assert integer.convolutions_as_matmuls(tmp_path / "toy.onnx", tmp_path / "signed.onnx") == 3
    rewritten = onnx.load(str(tmp_path / "signed.onnx"))
    kinds = [n.op_type for n in rewritten.graph.node]
    assert kinds.count("ConvInteger") == 1  # the strided one stays as it was
    assert kinds.count("MatMulInteger") == 3
    signed = [i for i in rewritten.graph.initializer if i.name.endswith("_signed_weight")]
    assert {i.data_type for i in signed} == {TensorProto.INT8}
    for tokens in (1, 9, 57):  # shorter than the widest kernel's reach, and longer
        published, built = _run(tmp_path / "toy.onnx", tokens), _run(tmp_path / "signed.onnx", tokens)
        assert published.shape == built.shape
        np.testing.assert_array_equal(published, built)


def test_nothing_to_rewrite_writes_nothing(tmp_path):
    _toy_kokoro(tmp_path / "toy.onnx")
    integer.convolutions_as_matmuls(tmp_path / "toy.onnx", tmp_path / "signed.onnx")
    assert integer.convolutions_as_matmuls(tmp_path / "signed.onnx", tmp_path / "again.onnx") == 0
    assert not (tmp_path / "again.onnx").exists()


def test_the_signed_build_is_chosen_only_where_the_cpu_sums_in_32_bits(monkeypatch):
    monkeypatch.setattr(cpu_features, "cpu_flags", lambda: frozenset({"avx2", "fma"}))
    assert kmodel.model_for("int8", None).build == "as-is"
    assert "signed" not in kmodel.model_for("int8", None).what
    for flag in integer.EXACT_FLAGS:
        monkeypatch.setattr(cpu_features, "cpu_flags", lambda flag=flag: frozenset({"avx2", flag}))
        choice = kmodel.model_for("int8", None)
        assert choice.build == "signed" and "signed-weight" in choice.what


def test_a_build_that_sounds_different_is_refused_once_and_the_published_model_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    _toy_kokoro(tmp_path / "kokoro-v1.0.int8.onnx")
    choice = kmodel.ModelChoice(tmp_path / "kokoro-v1.0.int8.onnx", "signed", "toy")
    assert choice.cached_path() is None  # to be built
    monkeypatch.setattr(kmodel, "SAME_AUDIO", -1.0)  # no audio is close enough: the build must be refused
    assert kmodel.prepare(choice) == choice.source
    assert choice.cached_path() == choice.source  # remembered: not built again
    assert not list((tmp_path / "cache" / "kokoro").glob("*.onnx"))
    monkeypatch.setattr(kmodel, "SAME_AUDIO", 1e-5)
    assert kmodel.prepare(choice) == choice.source


def test_a_build_that_sounds_the_same_is_kept_and_opened(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    _toy_kokoro(tmp_path / "kokoro-v1.0.int8.onnx")
    choice = kmodel.ModelChoice(tmp_path / "kokoro-v1.0.int8.onnx", "signed", "toy")
    built = kmodel.prepare(choice)
    assert built != choice.source and built.parent == tmp_path / "cache" / "kokoro"
    assert choice.cached_path() == built
    assert integer.difference(choice.source, built) == 0.0


@pytest.mark.slow
@pytest.mark.skipif(not integer.exact_here(), reason="needs VNNI (avx512_vnni, avx_vnni or amx_int8)")
def test_the_offline_voice_says_a_sentence_the_same_through_the_signed_build():
    from studio.engine.kokoro.engine import KokoroEngine
    from studio.engine.kokoro.packs import load_pack, offline_packs_file

    pack = load_pack(offline_packs_file(), "jm_kumo")
    engines = [KokoroEngine(kmodel.model_for("int8", None), pack, "en-us", threads=1),
               KokoroEngine(kmodel.ModelChoice(None, "as-is", "as published"), pack, "en-us", threads=1)]
    assert engines[0].choice.build == "signed"
    text = "The old house stood at the end of the lane, and nobody could remember when it was painted."
    try:
        ours, theirs = (e.synthesize_batch([e.text_to_ids(text, "en")], SynthesisSettings())[0] for e in engines)
    finally:
        for engine in engines:
            engine.close()
    assert ours.size == theirs.size > 24000
    assert float(np.max(np.abs(ours - theirs))) <= kmodel.SAME_AUDIO
