"""TensorRT preset: the pure parts (cache key, profiles, calibration data and feeding,
precision policy, caching and fallback logic) run everywhere; building and running
an engine needs TensorRT and a CUDA device and is skipped, with the reason, otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import re
import types

import numpy as np
import pytest

from studio.core.errors import EngineError, PresetUnavailable
from studio.engine import calibration as cal
from studio.engine.tensorrt import profile as prof
from studio.engine.tensorrt.build import (
    DEFAULT_BATCH,
    DEFAULT_VARIANTS,
    FRAME_HEADROOM,
    VARIANT_ORDER,
    count_over_profile,
    feed_device_buffers,
    first_that_builds,
    fit_frames,
    full_calibration_batches,
    int8_mode,
    layer_precision,
    make_profile,
)
from studio.engine.tensorrt.cache import (
    FAILED_MARKER_TTL_S,
    engine_cache_key,
    engine_cache_path,
    is_transient,
    load_or_build,
    raise_if_failed_before,
    remember_failure,
    timing_cache_path,
)
from studio.engine.tensorrt.engine import TensorRTEngine
from studio.engine.tensorrt.profile import ShapeProfile

try:  # the TensorRT preset builds on torch; most tests here need neither torch nor a GPU
    import torch
except ImportError:
    torch = None
HAS_CUDA = torch is not None and torch.cuda.is_available()
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (pip install 'audiobook-studio[torch]')")
HAS_TRT = importlib.util.find_spec("tensorrt") is not None


# ------------------------------------------------------------------ cache key

PROFILE = {"input": [(1, 8), (8, 64), (64, 320)], "input_lengths": [(1,), (8,), (64,)]}
BASE = dict(model_hash="ab" * 32, trt_version="10.3.0", gpu_name="NVIDIA H200 sm_90", precision="int8")


def key(**changes):
    args = {**BASE, "profile": PROFILE, **changes}
    return engine_cache_key(
        args.pop("model_hash"), args.pop("trt_version"), args.pop("gpu_name"), args.pop("precision"),
        args.pop("profile"), **args,
    )


def test_cache_key_is_stable_and_pure():
    k = key()
    assert k == key() and re.fullmatch(r"[0-9a-f]{64}", k)  # a sha256 in hex: a safe file name
    reordered = {"input_lengths": [[1], [8], [64]], "input": [[1, 8], [8, 64], [64, 320]]}
    assert key(profile=reordered) == k  # mapping order and tuple/list do not matter


@pytest.mark.parametrize(
    "change",
    [
        {"model_hash": "cd" * 32},
        {"trt_version": "10.4.0"},
        {"gpu_name": "NVIDIA A100 sm_80"},
        {"precision": "fp16"},
        {"profile": {**PROFILE, "input": [(1, 8), (8, 72), (64, 320)]}},
        {"profile": {**PROFILE, "input_lengths": [(1,), (16,), (64,)]}},
        {"variant": "full"},
        {"extra": "cal=0123"},
        {"studio_version": "0.0.1"},
        {"exporter": "export-1;opset-17"},
    ],
)
def test_cache_key_changes_with_each_component(change):
    assert key(**change) != key()


def test_cache_key_rejects_bad_input():
    with pytest.raises(ValueError):
        key(precision="int4")
    with pytest.raises(ValueError):
        key(profile={"input": [(1, 8), (8, 4), (64, 320)]})  # opt < min
    with pytest.raises(ValueError):
        key(profile={"input": [(1, 8), (8, 64)]})


def test_cache_path(tmp_path):
    assert engine_cache_path(tmp_path, "abc") == tmp_path / "tensorrt" / "abc.plan"


# ------------------------------------------------------------------ calibration data


def test_sentence_file_is_split_by_the_text_layer(tmp_path):
    lines = tmp_path / "lines.txt"
    lines.write_text("First line without a stop\nSecond one. It has two.\n", encoding="utf-8")
    assert cal.read_sentences_file(lines) == ["First line without a stop", "Second one.", "It has two."]
    paras = tmp_path / "paras.txt"
    paras.write_text("A wrapped\nparagraph. Goes on\nhere, said Mr. Smith.\n\nSecond paragraph!\n", encoding="utf-8")
    assert cal.read_sentences_file(paras) == ["A wrapped paragraph.", "Goes on here, said Mr. Smith.",
                                              "Second paragraph!"]


def test_spread_by_length_spans_the_distribution():
    sentences = [f"{'word ' * n}end." for n in range(1, 101)]
    chosen = cal.spread_by_length(sentences, 10)
    assert len(chosen) == 10 and chosen == [s for s in sentences if s in chosen]  # original order kept
    assert chosen[0] == "word end." and chosen[-1] == f"{'word ' * 100}end."
    lengths = sorted(len(s) for s in chosen)
    assert lengths[4] < np.median([len(s) for s in sentences]) < lengths[6]  # spread, not clumped
    assert cal.spread_by_length(["b.", "a."], 10) == ["b.", "a."]


def test_sentences_to_ids_uses_the_front_end():
    calls = []

    def front_end(text, language):
        calls.append((text, language))
        return [ord(c) % 50 for c in text]

    ids = cal.sentences_to_ids(["ab", "", "cde"], front_end, "fr")
    assert ids == [[47, 48], [49, 0, 1]] and calls[0] == ("ab", "fr")


def test_make_batches_pads_truncates_and_fills():
    seqs = [[1] * n for n in (3, 9, 5, 2, 7)]
    batches = prof.make_batches(seqs, 2)
    assert [b.shape for b in batches] == [(2, 3), (2, 7), (2, 9)]  # sorted, last filled by cycling
    assert batches[0].lengths.tolist() == [2, 3] and batches[0].ids[0].tolist() == [1, 1, 0]
    fixed = prof.make_batches(seqs, 4, length=6, sort=False)
    assert [b.shape for b in fixed] == [(4, 6), (4, 6)]
    assert fixed[0].lengths.tolist() == [3, 6, 5, 2]  # 9 truncated to 6
    assert fixed[1].lengths.tolist() == [6, 3, 6, 5]  # 7 truncated, then cycled
    assert prof.make_batches([], 4) == []
    assert [b.shape for b in prof.make_batches(seqs, 4, fill_last=False)] == [(4, 7), (1, 9)]


def test_profile_shapes_from_length_distribution():
    lengths = list(range(10, 110))  # 10..109
    p = prof.profile_shapes(lengths)
    assert p.min == 10 and p.opt == int(np.ceil(np.percentile(lengths, 75)))
    assert p.max == int(np.ceil(np.percentile(lengths, 99)))
    assert prof.profile_shapes(lengths, max_cap=64).as_tuple() == (10, 64, 64)
    assert prof.profile_shapes(lengths, opt_percentile=50).opt == 60
    assert prof.profile_shapes([5]).as_tuple() == (5, 5, 5)
    rounded = prof.profile_shapes(lengths, round_to=8)
    assert rounded.opt % 8 == 0 and rounded.max % 8 == 0 and rounded.min == 10
    with pytest.raises(ValueError):
        prof.profile_shapes([])
    with pytest.raises(ValueError):
        ShapeProfile(5, 4, 6)


def test_trt_profile_shapes_per_variant():
    prof = make_profile(list(range(12, 200)), list(range(60, 1200)), channels=192)
    assert prof.frames.max >= int(np.percentile(range(60, 1200), 99) * FRAME_HEADROOM) - 8
    full = prof.input_shapes("full")
    assert full["input"] == ((1, prof.phonemes.min), (32, prof.phonemes.opt), (64, prof.phonemes.max))
    assert full["input_lengths"] == ((1,), (32,), (64,))
    fd = prof.input_shapes("flow_decoder")
    assert fd["z_p"][1] == (32, 192, prof.frames.opt) and fd["y_mask"][2] == (64, 1, prof.frames.max)
    engine_cache_key("h", "10", "g", "int8", fd)  # valid profile for the key
    with pytest.raises(ValueError):
        prof.input_shapes("encoder")


# ------------------------------------------------------------------ calibrator feeding


def test_feeder_checks_shapes_and_runs_out():
    shapes = {"z_p": (2, 4, 8), "y_mask": (2, 1, 8)}
    good = {"z_p": np.ones((2, 4, 8)), "y_mask": np.ones((2, 1, 8))}
    feeder = prof.CalibrationFeeder([good, good], shapes, {"z_p": np.float32, "y_mask": np.float32})
    assert len(feeder) == 2 and feeder.batch_size == 2
    first = feeder.next_batch(["y_mask", "z_p"])
    assert [a.shape for a in first] == [(2, 1, 8), (2, 4, 8)] and first[1].dtype == np.float32
    assert feeder.next_batch() is not None and feeder.next_batch() is None
    feeder.reset()
    assert feeder.consumed == 0 and feeder.next_batch() is not None
    with pytest.raises(KeyError):
        feeder.next_batch(["nope"])
    with pytest.raises(ValueError, match="shape"):
        prof.CalibrationFeeder([{"z_p": np.ones((2, 4, 9)), "y_mask": np.ones((2, 1, 8))}], shapes)
    with pytest.raises(ValueError, match="lacks"):
        prof.CalibrationFeeder([{"z_p": np.ones((2, 4, 8))}], shapes)


@needs_torch
def test_feed_device_buffers_reuses_buffers_and_copies():
    """The calibrator's get_batch, with CPU tensors standing in for CUDA ones."""
    batches = prof.make_batches([[1, 2, 3], [4, 5], [6], [7, 8, 9, 10]], 2, length=4, sort=False)
    feeds = full_calibration_batches(batches, (0.667, 1.0, 0.8))
    feeder = prof.CalibrationFeeder(feeds, {"input": (2, 4), "input_lengths": (2,), "scales": (3,)})
    buffers: dict = {}
    made = []

    def to_device(arr):
        made.append(arr.shape)
        return torch.from_numpy(arr.copy())

    names = ["input", "input_lengths", "scales"]
    p1 = feed_device_buffers(feeder, names, buffers, to_device)
    assert p1 == [buffers[n].data_ptr() for n in names]
    assert buffers["input"].tolist() == [[1, 2, 3, 0], [4, 5, 0, 0]]
    p2 = feed_device_buffers(feeder, names, buffers, to_device)
    assert p2 == p1 and len(made) == 3  # same device memory, new contents
    assert buffers["input"].tolist() == [[6, 0, 0, 0], [7, 8, 9, 10]]
    assert buffers["input_lengths"].tolist() == [1, 4]
    assert feed_device_buffers(feeder, names, buffers, to_device) is None


def test_fit_frames_pads_and_crops():
    z = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    m = np.ones((2, 1, 5), dtype=np.float32)
    z8, m8 = fit_frames(z, m, 8)
    assert z8.shape == (2, 3, 8) and m8[:, :, 5:].sum() == 0 and (z8[:, :, :5] == z).all()
    z3, m3 = fit_frames(z, m, 3)
    assert z3.shape == (2, 3, 3) and m3.shape == (2, 1, 3) and z3.flags["C_CONTIGUOUS"]


# ------------------------------------------------------------------ policy, cache, fallback


def test_layer_precision_policy_on_exported_names():
    assert layer_precision("/text_encoder/encoder/attn_layers.0/conv_q/Conv") == "fp32"
    assert layer_precision("/duration_predictor/convs/convs_sep.0/Conv") == "fp32"
    assert layer_precision("/waveform_decoder/conv_post/Conv") == "fp16"
    assert layer_precision("/waveform_decoder/resblocks.7/convs.0/Conv") == "fp16"
    assert layer_precision("/waveform_decoder/resblocks.1/convs.0/Conv") == "int8"
    assert layer_precision("/flow/flows.3/enc/in_layers.0/Conv") == "int8"
    assert layer_precision("/waveform_decoder/resblocks.4/convs.0/Conv", last_stage_resblocks=(3, 4, 5)) == "fp16"
    # the full graph's names (module attribute "vits") and Piper's own
    assert layer_precision("/vits/flow/flows.0/enc/in_layers.0/Conv") == "int8"
    assert layer_precision("/vits/text_encoder/encoder/norm_layers_1.0/ReduceMean") == "fp32"
    assert layer_precision("/dp/flows.3/convs/convs_sep.0/Conv") == "fp32"


def test_layer_precision_pins_everything_outside_flow_and_decoder():
    """exp / ceil / cumsum / softmax / norms of the encoder and duration predictor, and
    any layer the policy cannot place, are FP32; the flow's non-compute layers FP16."""
    for name in ("/vits/duration_predictor/Exp", "/vits/Ceil", "/vits/CumSum", "/vits/text_encoder/encoder/"
                 "attn_layers.0/Softmax", "/vits/text_encoder/encoder/norm_layers_1.0/Pow", "/Mul", "unnamed_7"):
        assert layer_precision(name, compute=False) == "fp32", name
        assert layer_precision(name) == "fp32", name  # never INT8 by default
    assert layer_precision("/flow/flows.0/enc/Tanh", compute=False) == "fp16"
    assert layer_precision("/waveform_decoder/ups.0/LeakyRelu", compute=False) == "fp16"
    assert layer_precision("/waveform_decoder/ups.0/ConvTranspose") == "int8"


def test_profile_matches_the_cuda_batch_and_covers_the_longest_item():
    from studio.engine.base import CUDA_BATCH

    assert DEFAULT_BATCH.opt == CUDA_BATCH  # kernels tuned for the batch the render sends
    frames = list(range(60, 600)) + [2000]  # one item far beyond p99
    prof = make_profile(list(range(12, 200)), frames, channels=192)
    assert prof.frames.max >= 2000 * FRAME_HEADROOM - 8
    assert count_over_profile(frames, prof) == 0
    assert count_over_profile([prof.frames.max, prof.frames.max + 1, 10], prof) == 1


def test_calibration_feeder_on_the_real_voice_cpu():
    """The flow_decoder calibration batches come from the real torch encoder (CPU here):
    fixed opt shape, every batch full, latents finite."""
    from studio.engine.tensorrt.build import calibration_feeder, encoder_latents
    from studio.engine.torchvits.engine import TorchVitsEngine

    engine = TorchVitsEngine(_voice(), threads=1)
    ids = cal.sentences_to_ids(cal.BUILTIN_SENTENCES[:6], engine.text_to_ids, "en")
    batches = prof.make_batches(ids, 3, fill_last=False)
    frames = [int(n) for b in batches for n in encoder_latents(torch, engine, b, (0.667, 1.0, 0.8))[2]]
    profile = make_profile([len(i) for i in ids], frames, batch=ShapeProfile(1, 4, 8), channels=192)
    feeder = calibration_feeder(torch, engine, "flow_decoder", ids, profile, (0.667, 1.0, 0.8))
    assert len(feeder) == 2 and feeder.batch_size == 4
    z_p, y_mask = feeder.next_batch(["z_p", "y_mask"])
    assert z_p.shape == (4, 192, profile.frames.opt) and y_mask.shape == (4, 1, profile.frames.opt)
    assert np.isfinite(z_p).all() and set(np.unique(y_mask)) <= {0.0, 1.0}
    engine.close()


def test_explicit_qdq_quantizes_flow_convs_only_and_keeps_bias_float(tmp_path):
    """TensorRT >= 11's path on CPU: ONNX Runtime's quantizer puts Q/DQ on the flow's
    Conv, none on the text encoder's, and no INT32 bias dequantize (TensorRT rejects it)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    from studio.engine.tensorrt.int8 import qdq_model

    rng = np.random.default_rng(0)
    inits, nodes, prev = [], [], "z_p"
    for k, name in enumerate(("/flow/flows.0/enc/Conv", "/text_encoder/proj/Conv")):
        w, b = f"w{k}", f"b{k}"
        inits += [numpy_helper.from_array(rng.standard_normal((4, 4, 3)).astype(np.float32), w),
                  numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), b)]
        nodes.append(helper.make_node("Conv", [prev, w, b], [f"y{k}"], name=name, pads=[1, 1]))
        prev = f"y{k}"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("z_p", TensorProto.FLOAT, [2, 4, 16])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 4, 16])], inits)
    src = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(src))
    feeder = prof.CalibrationFeeder([{"z_p": rng.standard_normal((2, 4, 16)).astype(np.float32)}] * 3,
                                    {"z_p": (2, 4, 16)})
    out = onnx.load(str(qdq_model(src, feeder, (6, 7, 8))))
    dequantized = {n.output[0] for n in out.graph.node if n.op_type == "DequantizeLinear"}
    dq_inputs = {n.input[0] for n in out.graph.node if n.op_type == "DequantizeLinear"}
    convs = {n.name: n for n in out.graph.node if n.op_type == "Conv"}
    assert set(convs["/flow/flows.0/enc/Conv"].input[:2]) <= dequantized
    assert convs["/text_encoder/proj/Conv"].input[1:] == ["w1", "b1"]  # excluded: float weights
    int32 = {i.name for i in out.graph.initializer if i.data_type == TensorProto.INT32}
    assert not int32 & dq_inputs  # biases stay float


def test_failure_markers_remember_only_lasting_failures(tmp_path):
    plan = tmp_path / "tensorrt" / "k.plan"
    assert is_transient(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert is_transient(EngineError("[TRT] cudaErrorMemoryAllocation")) and is_transient(MemoryError())
    assert not remember_failure(plan, RuntimeError("CUDA out of memory"))
    raise_if_failed_before(plan)  # nothing remembered: the next load tries again
    assert remember_failure(plan, EngineError("ONNX parser: NonZero"), now=1000.0)
    with pytest.raises(EngineError, match="NonZero.*delete"):
        raise_if_failed_before(plan, now=1000.0 + 60)
    raise_if_failed_before(plan, now=1000.0 + FAILED_MARKER_TTL_S + 1)  # expired: retried
    assert not plan.with_suffix(".failed").exists()
    plan.with_suffix(".failed").write_text("old plain-text marker", encoding="utf-8")
    raise_if_failed_before(plan)  # unreadable markers are retried too


def test_timing_cache_is_per_gpu_and_version(tmp_path):
    a = timing_cache_path(tmp_path, "10.3.0", "NVIDIA H200 sm_90")
    assert a.parent == tmp_path / "tensorrt" and a.suffix == ".cache"
    assert a == timing_cache_path(tmp_path, "10.3.0", "NVIDIA H200 sm_90")
    assert a != timing_cache_path(tmp_path, "10.4.0", "NVIDIA H200 sm_90")
    assert a != timing_cache_path(tmp_path, "10.3.0", "NVIDIA A100 sm_80")


def test_load_or_build_caches_atomically(tmp_path):
    path = tmp_path / "tensorrt" / "k.plan"
    calls = []

    def build():
        calls.append(1)
        return b"serialized-engine"

    assert load_or_build(path, build) == (b"serialized-engine", False)
    assert load_or_build(path, build) == (b"serialized-engine", True)
    assert len(calls) == 1 and [p.name for p in path.parent.iterdir()] == ["k.plan"]

    def broken():
        raise RuntimeError("builder crashed")

    other = tmp_path / "tensorrt" / "other.plan"
    with pytest.raises(RuntimeError):
        load_or_build(other, broken)
    assert not other.exists() and len(list(path.parent.iterdir())) == 1


def test_flow_decoder_is_the_default_graph_and_full_falls_back():
    assert DEFAULT_VARIANTS == ("flow_decoder",) and set(VARIANT_ORDER) == {"flow_decoder", "full"}
    assert TensorRTEngine(_voice()).variants == ("flow_decoder",)

    def attempt(variant):
        if variant == "full":
            raise EngineError("ONNX parser: NonZero with data-dependent shape")
        return f"engine:{variant}"

    variant, result, failures = first_that_builds(("full", "flow_decoder"), attempt)
    assert (variant, result) == ("flow_decoder", "engine:flow_decoder")
    assert "NonZero" in failures["full"]
    assert first_that_builds(VARIANT_ORDER, lambda v: v)[0] == "flow_decoder"
    with pytest.raises(EngineError, match="could not build any graph"):
        first_that_builds(VARIANT_ORDER, lambda v: 1 / 0)


def test_int8_mode_follows_tensorrt_api():
    trt10 = types.SimpleNamespace(BuilderFlag=types.SimpleNamespace(INT8=1, FP16=2), IInt8EntropyCalibrator2=object)
    trt11 = types.SimpleNamespace(BuilderFlag=types.SimpleNamespace(STRIP_PLAN=3))
    assert int8_mode(trt10) == "implicit" and int8_mode(trt11) == "explicit"


@needs_torch
@pytest.mark.skipif(HAS_CUDA and HAS_TRT, reason="this machine has CUDA and TensorRT")
def test_engine_refuses_to_load_without_cuda_or_tensorrt():
    engine = TensorRTEngine(_voice())
    assert "not built yet" in engine.describe()
    with pytest.raises(PresetUnavailable, match="no CUDA device|TensorRT is not installed"):
        engine.load()
    with pytest.raises(EngineError):
        TensorRTEngine(_voice(), device="cpu")
    with pytest.raises(EngineError):
        TensorRTEngine(_voice(), precision="int4")


def _voice():
    from studio.engine.voice.catalog import get_voice

    return get_voice(None)


# ------------------------------------------------------------------ real TensorRT (GPU)


def _need_gpu_and_trt():
    if not HAS_CUDA:
        pytest.skip("no CUDA device: torch.cuda.is_available() is False")
    if not HAS_TRT:
        pytest.skip("TensorRT is not installed (pip install 'audiobook-studio[tensorrt]')")


@needs_torch
@pytest.mark.gpu
def test_tensorrt_int8_builds_caches_and_matches_torch(tmp_path):
    _need_gpu_and_trt()
    from studio.engine.base import SynthesisSettings
    from studio.engine.torchvits.engine import TorchVitsEngine

    settings = SynthesisSettings(0.0, 1.0, 0.0)
    sentences = list(cal.BUILTIN_SENTENCES[:16])
    cache = os.environ.get("STUDIO_CACHE_DIR") or tmp_path
    engine = TensorRTEngine(_voice(), cache_dir=cache, calibration_sentences=sentences,
                               max_calibration_sentences=16)
    ref = TorchVitsEngine(_voice(), device="cuda")
    with engine, ref:
        ids = [engine.text_to_ids(s, "en") for s in ("A short one.", "And a much longer sentence, with a pause.")]
        got = engine.synthesize_batch(ids, settings)
        want = ref.synthesize_batch(ids, settings)
        info = engine.build_info
        assert info is not None and info.path.is_file()
        text = engine.describe()
        assert "TensorRT" in text and info.variant in ("full", "flow_decoder")
    for g, w in zip(got, want):
        assert abs(len(g) - len(w)) <= 2 * 256  # durations come from the FP32 encoder/dp layers
        n = min(len(g), len(w))
        assert np.corrcoef(g[:n], w[:n])[0, 1] > 0.9
    again = TensorRTEngine(_voice(), cache_dir=cache, calibration_sentences=sentences,
                              max_calibration_sentences=16)
    with again:
        assert again.build_info.cache_hit and again.build_info.key == info.key


@needs_torch
@pytest.mark.gpu
def test_tensorrt_flow_decoder_fallback_builds(tmp_path):
    _need_gpu_and_trt()
    from studio.engine.base import SynthesisSettings

    engine = TensorRTEngine(_voice(), cache_dir=tmp_path, variants=("flow_decoder",), precision="fp16",
                               calibration_sentences=list(cal.BUILTIN_SENTENCES[:8]))
    with engine:
        (audio,) = engine.synthesize_batch([engine.text_to_ids("Hello there.", "en")], SynthesisSettings(0.0, 1.0, 0.0))
        assert engine.build_info.variant == "flow_decoder"
    assert audio.size > 1000 and np.isfinite(audio).all()
