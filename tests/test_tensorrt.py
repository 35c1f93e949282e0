"""TensorRT preset: the pure parts (cache key, profiles, calibration data and feeding,
precision policy, caching and fallback logic) run everywhere; building and running
an engine needs TensorRT and a CUDA device and is skipped, with the reason, otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import types
from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import EngineError, PresetUnavailable
from studio.engine import calibration as cal
from studio.engine import tensorrt_engine as te
from studio.engine.calibration import ShapeProfile

torch = pytest.importorskip("torch")
HAS_CUDA = torch.cuda.is_available()
HAS_TRT = importlib.util.find_spec("tensorrt") is not None


# ------------------------------------------------------------------ cache key

PROFILE = {"input": [(1, 8), (8, 64), (64, 320)], "input_lengths": [(1,), (8,), (64,)]}
BASE = dict(model_hash="ab" * 32, trt_version="10.3.0", gpu_name="NVIDIA H200 sm_90", precision="int8")


def key(**changes):
    args = {**BASE, "profile": PROFILE, **changes}
    return te.engine_cache_key(
        args.pop("model_hash"), args.pop("trt_version"), args.pop("gpu_name"), args.pop("precision"),
        args.pop("profile"), **args,
    )


def test_cache_key_is_stable_and_pure():
    k = key()
    assert k == key() and len(k) == 64 and int(k, 16) >= 0
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
        {"variant": "flow_decoder"},
        {"extra": "cal=0123"},
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
    assert te.engine_cache_path(tmp_path, "abc") == tmp_path / "tensorrt" / "abc.plan"


# ------------------------------------------------------------------ calibration data


def test_sentence_sources_in_priority_order(tmp_path):
    assert cal.calibration_sentences(None, env={}).origin == "builtin"
    assert cal.calibration_sentences(["  One.  ", ""], env={}).sentences == ("One.",)
    lines = tmp_path / "lines.txt"
    lines.write_text("First line without a stop\nSecond one. It has two.\n\n", encoding="utf-8")
    src = cal.calibration_sentences(["ignored"], env={cal.CALIBRATION_DATA_ENV: str(lines)})
    assert src.origin == f"file:{lines}"
    assert src.sentences == ("First line without a stop", "Second one.", "It has two.")
    paras = tmp_path / "paras.txt"
    paras.write_text("A wrapped\nparagraph. Goes on\nhere.\n\nSecond paragraph!\n", encoding="utf-8")
    assert cal.read_sentences_file(paras) == ["A wrapped paragraph.", "Goes on here.", "Second paragraph!"]
    with pytest.raises(FileNotFoundError):
        cal.calibration_sentences(None, env={cal.CALIBRATION_DATA_ENV: str(tmp_path / "missing.txt")})


def test_select_dedupes_sorts_and_spans_lengths():
    sentences = [f"{'word ' * n}end." for n in range(1, 101)] + ["WORD end.", "word  end."]
    chosen = cal.select_calibration_set(sentences, n=10)
    assert len(chosen) == 10
    assert chosen == sorted(chosen, key=len)
    assert chosen[0] == "word end." and chosen[-1] == f"{'word ' * 100}end."
    lengths = [len(s) for s in chosen]
    assert lengths[4] < np.median([len(s) for s in sentences]) < lengths[6]  # spread, not clumped
    assert cal.select_calibration_set(["b.", "a.", "A."], n=10) == ["a.", "b."]
    assert len(cal.select_calibration_set(cal.BUILTIN_SENTENCES, 64)) == len(set(cal.BUILTIN_SENTENCES))


def test_sentences_to_ids_uses_the_front_end():
    calls = []

    def front_end(text, language):
        calls.append((text, language))
        return [ord(c) % 50 for c in text]

    ids = cal.sentences_to_ids(["ab", "", "cde"], front_end, "fr")
    assert ids == [[47, 48], [49, 0, 1]] and calls[0] == ("ab", "fr")


def test_make_batches_pads_truncates_and_fills():
    seqs = [[1] * n for n in (3, 9, 5, 2, 7)]
    batches = cal.make_batches(seqs, 2)
    assert [b.shape for b in batches] == [(2, 3), (2, 7), (2, 9)]  # sorted, last filled by cycling
    assert batches[0].lengths.tolist() == [2, 3] and batches[0].ids[0].tolist() == [1, 1, 0]
    fixed = cal.make_batches(seqs, 4, length=6, sort=False)
    assert [b.shape for b in fixed] == [(4, 6), (4, 6)]
    assert fixed[0].lengths.tolist() == [3, 6, 5, 2]  # 9 truncated to 6
    assert fixed[1].lengths.tolist() == [6, 3, 6, 5]  # 7 truncated, then cycled
    assert cal.make_batches([], 4) == []
    assert [b.shape for b in cal.make_batches(seqs, 4, fill_last=False)] == [(4, 7), (1, 9)]


def test_profile_shapes_from_length_distribution():
    lengths = list(range(10, 110))  # 10..109
    p = cal.profile_shapes(lengths)
    assert p.min == 10 and p.opt == int(np.ceil(np.percentile(lengths, 75)))
    assert p.max == int(np.ceil(np.percentile(lengths, 99)))
    assert cal.profile_shapes(lengths, max_cap=64).as_tuple() == (10, 64, 64)
    assert cal.profile_shapes(lengths, opt_percentile=50).opt == 60
    assert cal.profile_shapes([5]).as_tuple() == (5, 5, 5)
    rounded = cal.profile_shapes(lengths, round_to=8)
    assert rounded.opt % 8 == 0 and rounded.max % 8 == 0 and rounded.min == 10
    with pytest.raises(ValueError):
        cal.profile_shapes([])
    with pytest.raises(ValueError):
        ShapeProfile(5, 4, 6)


def test_trt_profile_shapes_per_variant():
    prof = te.make_profile(list(range(12, 200)), list(range(60, 1200)), channels=192)
    assert prof.frames.max >= int(np.percentile(range(60, 1200), 99) * te.FRAME_HEADROOM) - 8
    full = prof.input_shapes("full")
    assert full["input"] == ((1, prof.phonemes.min), (8, prof.phonemes.opt), (64, prof.phonemes.max))
    assert full["input_lengths"] == ((1,), (8,), (64,))
    fd = prof.input_shapes("flow_decoder")
    assert fd["z_p"][1] == (8, 192, prof.frames.opt) and fd["y_mask"][2] == (64, 1, prof.frames.max)
    te.engine_cache_key("h", "10", "g", "int8", fd)  # valid profile for the key
    with pytest.raises(ValueError):
        prof.input_shapes("encoder")


# ------------------------------------------------------------------ calibrator feeding


def test_feeder_checks_shapes_and_runs_out():
    shapes = {"z_p": (2, 4, 8), "y_mask": (2, 1, 8)}
    good = {"z_p": np.ones((2, 4, 8)), "y_mask": np.ones((2, 1, 8))}
    feeder = cal.CalibrationFeeder([good, good], shapes, {"z_p": np.float32, "y_mask": np.float32})
    assert len(feeder) == 2 and feeder.batch_size == 2
    first = feeder.next_batch(["y_mask", "z_p"])
    assert [a.shape for a in first] == [(2, 1, 8), (2, 4, 8)] and first[1].dtype == np.float32
    assert feeder.next_batch() is not None and feeder.next_batch() is None
    feeder.reset()
    assert feeder.consumed == 0 and feeder.next_batch() is not None
    with pytest.raises(KeyError):
        feeder.next_batch(["nope"])
    with pytest.raises(ValueError, match="shape"):
        cal.CalibrationFeeder([{"z_p": np.ones((2, 4, 9)), "y_mask": np.ones((2, 1, 8))}], shapes)
    with pytest.raises(ValueError, match="lacks"):
        cal.CalibrationFeeder([{"z_p": np.ones((2, 4, 8))}], shapes)


def test_feed_device_buffers_reuses_buffers_and_copies():
    """The calibrator's get_batch, with CPU tensors standing in for CUDA ones."""
    batches = cal.make_batches([[1, 2, 3], [4, 5], [6], [7, 8, 9, 10]], 2, length=4, sort=False)
    feeds = te.full_calibration_batches(batches, (0.667, 1.0, 0.8))
    feeder = cal.CalibrationFeeder(feeds, {"input": (2, 4), "input_lengths": (2,), "scales": (3,)})
    buffers: dict = {}
    made = []

    def to_device(arr):
        made.append(arr.shape)
        return torch.from_numpy(arr.copy())

    names = ["input", "input_lengths", "scales"]
    p1 = te.feed_device_buffers(feeder, names, buffers, to_device)
    assert p1 == [buffers[n].data_ptr() for n in names]
    assert buffers["input"].tolist() == [[1, 2, 3, 0], [4, 5, 0, 0]]
    p2 = te.feed_device_buffers(feeder, names, buffers, to_device)
    assert p2 == p1 and len(made) == 3  # same device memory, new contents
    assert buffers["input"].tolist() == [[6, 0, 0, 0], [7, 8, 9, 10]]
    assert buffers["input_lengths"].tolist() == [1, 4]
    assert te.feed_device_buffers(feeder, names, buffers, to_device) is None


def test_fit_frames_pads_and_crops():
    z = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    m = np.ones((2, 1, 5), dtype=np.float32)
    z8, m8 = te.fit_frames(z, m, 8)
    assert z8.shape == (2, 3, 8) and m8[:, :, 5:].sum() == 0 and (z8[:, :, :5] == z).all()
    z3, m3 = te.fit_frames(z, m, 3)
    assert z3.shape == (2, 3, 3) and m3.shape == (2, 1, 3) and z3.flags["C_CONTIGUOUS"]


# ------------------------------------------------------------------ policy, cache, fallback


def test_layer_precision_policy_on_exported_names():
    assert te.layer_precision("/text_encoder/encoder/attn_layers.0/conv_q/Conv") == "fp32"
    assert te.layer_precision("/duration_predictor/convs/convs_sep.0/Conv") == "fp32"
    assert te.layer_precision("/waveform_decoder/conv_post/Conv") == "fp16"
    assert te.layer_precision("/waveform_decoder/resblocks.7/convs.0/Conv") == "fp16"
    assert te.layer_precision("/waveform_decoder/resblocks.1/convs.0/Conv") == "int8"
    assert te.layer_precision("/flow/flows.3/enc/in_layers.0/Conv") == "int8"
    assert te.layer_precision("/waveform_decoder/resblocks.4/convs.0/Conv", last_stage_resblocks=(3, 4, 5)) == "fp16"


def test_load_or_build_caches_atomically(tmp_path):
    path = tmp_path / "tensorrt" / "k.plan"
    calls = []

    def build():
        calls.append(1)
        return b"serialized-engine"

    assert te.load_or_build(path, build) == (b"serialized-engine", False)
    assert te.load_or_build(path, build) == (b"serialized-engine", True)
    assert len(calls) == 1 and [p.name for p in path.parent.iterdir()] == ["k.plan"]

    def broken():
        raise RuntimeError("builder crashed")

    other = tmp_path / "tensorrt" / "other.plan"
    with pytest.raises(RuntimeError):
        te.load_or_build(other, broken)
    assert not other.exists() and len(list(path.parent.iterdir())) == 1


def test_whole_graph_first_then_flow_decoder():
    def attempt(variant):
        if variant == "full":
            raise EngineError("ONNX parser: NonZero with data-dependent shape")
        return f"engine:{variant}"

    variant, result, failures = te.first_that_builds(te.VARIANT_ORDER, attempt)
    assert (variant, result) == ("flow_decoder", "engine:flow_decoder")
    assert "NonZero" in failures["full"]
    assert te.first_that_builds(te.VARIANT_ORDER, lambda v: v)[0] == "full"
    with pytest.raises(EngineError, match="could not build any graph"):
        te.first_that_builds(te.VARIANT_ORDER, lambda v: 1 / 0)


def test_int8_mode_follows_tensorrt_api():
    trt10 = types.SimpleNamespace(BuilderFlag=types.SimpleNamespace(INT8=1, FP16=2), IInt8EntropyCalibrator2=object)
    trt11 = types.SimpleNamespace(BuilderFlag=types.SimpleNamespace(STRIP_PLAN=3))
    assert te.int8_mode(trt10) == "implicit" and te.int8_mode(trt11) == "explicit"


@pytest.mark.skipif(HAS_CUDA and HAS_TRT, reason="this machine has CUDA and TensorRT")
def test_engine_refuses_to_load_without_cuda_or_tensorrt():
    engine = te.TensorRTEngine(_voice())
    assert "not built yet" in engine.describe()
    with pytest.raises(PresetUnavailable, match="no CUDA device|TensorRT is not installed"):
        engine.load()
    with pytest.raises(EngineError):
        te.TensorRTEngine(_voice(), device="cpu")
    with pytest.raises(EngineError):
        te.TensorRTEngine(_voice(), precision="int4")


def _voice():
    from studio.engine.voices import get_voice

    return get_voice(None)


# ------------------------------------------------------------------ real TensorRT (GPU)


def _need_gpu_and_trt():
    if not HAS_CUDA:
        pytest.skip("no CUDA device: torch.cuda.is_available() is False")
    if not HAS_TRT:
        pytest.skip("TensorRT is not installed (pip install tensorrt)")


@pytest.mark.gpu
def test_tensorrt_int8_builds_caches_and_matches_torch(tmp_path):
    _need_gpu_and_trt()
    from studio.engine.base import SynthesisSettings
    from studio.engine.torch_vits import TorchVitsEngine

    settings = SynthesisSettings(0.0, 1.0, 0.0)
    sentences = list(cal.BUILTIN_SENTENCES[:16])
    cache = os.environ.get("STUDIO_CACHE_DIR") or tmp_path  # gpu_check.sh shares it with its benchmark
    engine = te.TensorRTEngine(_voice(), cache_dir=cache, calibration_sentences=sentences,
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
    again = te.TensorRTEngine(_voice(), cache_dir=cache, calibration_sentences=sentences,
                              max_calibration_sentences=16)
    with again:
        assert again.build_info.cache_hit and again.build_info.key == info.key


@pytest.mark.gpu
def test_tensorrt_flow_decoder_fallback_builds(tmp_path):
    _need_gpu_and_trt()
    from studio.engine.base import SynthesisSettings

    engine = te.TensorRTEngine(_voice(), cache_dir=tmp_path, variants=("flow_decoder",), precision="fp16",
                               calibration_sentences=list(cal.BUILTIN_SENTENCES[:8]))
    with engine:
        (audio,) = engine.synthesize_batch([engine.text_to_ids("Hello there.", "en")], SynthesisSettings(0.0, 1.0, 0.0))
        assert engine.build_info.variant == "flow_decoder"
    assert audio.size > 1000 and np.isfinite(audio).all()


# ------------------------------------------------------------------ orchestration, fake TensorRT


class _FakeTrt:
    """Just enough of the TensorRT 10 Python API to drive TensorRTEngine's build code.

    The fake builder does what TensorRT's calibration does with a calibrator: asks
    for batches until ``get_batch`` returns None, and records what it was given.
    """

    __version__ = "10.0.fake"

    class Logger:
        WARNING = 2

        def __init__(self, severity):
            pass

    BuilderFlag = types.SimpleNamespace(FP16="FP16", INT8="INT8", OBEY_PRECISION_CONSTRAINTS="OBEY")
    NetworkDefinitionCreationFlag = types.SimpleNamespace(EXPLICIT_BATCH=0, STRONGLY_TYPED=1)
    MemoryPoolType = types.SimpleNamespace(WORKSPACE="workspace")
    LayerType = types.SimpleNamespace(CONVOLUTION="conv", MATRIX_MULTIPLY="mm", DECONVOLUTION="deconv", SHAPE="shape")
    DataType = types.SimpleNamespace(FLOAT="f32", HALF="f16", INT32="i32", INT8="i8", BOOL="b", INT64="i64")

    class IInt8EntropyCalibrator2:
        def __init__(self):
            pass

    class IOutputAllocator:
        def __init__(self):
            pass

    def __init__(self, fail_variants=()):
        self.fail_variants = set(fail_variants)
        self.log = []
        fake = self

        class Layer:
            def __init__(self, name, kind):
                self.name, self.type, self.num_outputs = name, kind, 1
                self.precision, self.output_types = None, {}

            def set_output_type(self, i, dt):
                self.output_types[i] = dt

        class Network:
            def __init__(self):
                self.layers = [
                    Layer("/text_encoder/encoder/attn_layers.0/conv_q/Conv", "conv"),
                    Layer("/duration_predictor/pre/Conv", "conv"),
                    Layer("/flow/flows.0/enc/in_layers.0/Conv", "conv"),
                    Layer("/waveform_decoder/resblocks.0/convs.0/Conv", "conv"),
                    Layer("/waveform_decoder/resblocks.8/convs.0/Conv", "conv"),
                    Layer("/waveform_decoder/conv_post/Conv", "conv"),
                    Layer("/flow/Shape", "shape"),
                ]
                self.num_layers = len(self.layers)

            def get_layer(self, i):
                return self.layers[i]

        class Parser:
            def __init__(self, network, logger):
                self.errors = []

            def parse_from_file(self, path):
                fake.log.append(("parse", Path(path).name))
                if any(v in Path(path).name for v in fake.fail_variants):
                    self.errors = ["In node 12 (NonZero): data-dependent shape unsupported"]
                    return False
                return True

            @property
            def num_errors(self):
                return len(self.errors)

            def get_error(self, i):
                return self.errors[i]

        class Profile:
            def __init__(self):
                self.shapes = {}

            def set_shape(self, name, lo, opt, hi):
                self.shapes[name] = (tuple(lo), tuple(opt), tuple(hi))

        class Config:
            def __init__(self):
                self.flags, self.profiles, self.int8_calibrator = set(), [], None

            def set_memory_pool_limit(self, pool, size):
                self.workspace = size

            def add_optimization_profile(self, p):
                self.profiles.append(p)

            def set_calibration_profile(self, p):
                self.calibration_profile = p

            def set_flag(self, flag):
                self.flags.add(flag)

        class Builder:
            def __init__(self, logger):
                pass

            def create_network(self, flags):
                self.network = Network()
                fake.network = self.network
                return self.network

            def create_builder_config(self):
                return Config()

            def create_optimization_profile(self):
                return Profile()

            def build_serialized_network(self, network, config):
                fake.config = config
                cal_shapes = []
                calib = config.int8_calibrator
                if calib is not None:
                    names = list(config.profiles[0].shapes) + (["scales"] if "input" in config.profiles[0].shapes else [])
                    while True:
                        ptrs = calib.get_batch(names)
                        if ptrs is None:
                            break
                        assert ptrs == [calib.buffers[n].data_ptr() for n in names]
                        cal_shapes.append({n: tuple(calib.buffers[n].shape) for n in names})
                fake.calibration_shapes = cal_shapes
                return b"plan-" + ",".join(sorted(config.profiles[0].shapes)).encode()

        self.Builder, self.OnnxParser = Builder, Parser


def test_build_pipeline_with_fake_tensorrt(tmp_path, monkeypatch):
    """Calibration -> profile -> export -> build (whole graph fails, flow+decoder builds)
    -> cache -> run, with TensorRT and CUDA replaced by fakes and torch on CPU."""
    from studio.engine.base import SynthesisSettings
    from studio.engine.onnx_export import flow_decode
    from studio.engine.torch_vits import TorchVitsEngine

    fake = _FakeTrt(fail_variants=("full",))
    monkeypatch.setattr(te, "_gpu_token", lambda torch: "Fake GPU sm_90")
    monkeypatch.setattr(te, "tensorrt_version", lambda: fake.__version__)
    runners = []

    class FakeRunner:
        def __init__(self, trt, torch_, plan, logger):
            self.plan = plan
            runners.append(self)

        def __call__(self, feeds):
            if "input" in feeds:  # a whole-graph engine that computes the wrong thing
                b = feeds["input"].shape[0]
                return {"output": torch.zeros(b, 1, 2560), "output_lengths": torch.full((b,), 2560)}
            return {"output": flow_decode(torch_engine.model, feeds["z_p"], feeds["y_mask"])}

        def close(self):
            pass

    monkeypatch.setattr(te, "TrtRunner", FakeRunner)
    sentences = ["Yes.", "No, thank you.", "Chapter One.", "Where are you going?"]

    torch_engine = TorchVitsEngine(_voice(), device="cpu", threads=2)

    def make(cache=tmp_path):
        eng = te.TensorRTEngine(_voice(), cache_dir=cache, calibration_sentences=sentences,
                                batch_profile=ShapeProfile(1, 2, 4), max_calibration_sentences=4)
        eng.torch_engine = torch_engine  # CPU stands in for CUDA
        eng._calib_device = "cpu"
        exported = []

        def export(variant, source_hash):
            exported.append(variant)
            Path(cache).mkdir(parents=True, exist_ok=True)
            path = Path(cache) / f"{variant}.onnx"
            path.write_bytes(b"onnx")
            return path

        eng._export = export
        eng.torch_engine.load()
        return eng, exported

    engine, exported = make()
    engine._runner = engine._prepare(fake, torch)
    info = engine.build_info
    assert info.variant == "flow_decoder" and "NonZero" in info.failures["full"]
    assert exported == ["full", "flow_decoder"] and not info.cache_hit
    assert info.calibration_origin == "project" and info.calibration_sentences == 4
    # the optimization profile and the calibration shapes TensorRT saw
    prof = fake.config.profiles[0].shapes
    assert prof["z_p"][1] == (2, info.profile.channels, info.profile.frames.opt)
    assert fake.config.calibration_profile is fake.config.profiles[0]
    assert fake.calibration_shapes and all(
        s == {"z_p": (2, info.profile.channels, info.profile.frames.opt), "y_mask": (2, 1, info.profile.frames.opt)}
        for s in fake.calibration_shapes
    )
    assert len(fake.calibration_shapes) == 2  # 4 sentences / batch 2
    assert {"FP16", "INT8", "OBEY"} <= fake.config.flags
    layers = {l.name: l.precision for l in fake.network.layers}
    assert layers["/text_encoder/encoder/attn_layers.0/conv_q/Conv"] == "f32"
    assert layers["/duration_predictor/pre/Conv"] == "f32"
    assert layers["/waveform_decoder/conv_post/Conv"] == "f16"
    assert layers["/waveform_decoder/resblocks.8/convs.0/Conv"] == "f16"
    assert layers["/flow/flows.0/enc/in_layers.0/Conv"] is None  # free to run INT8
    assert info.layer_counts == {"fp32": 2, "fp16": 2, "int8": 2}
    assert info.path.read_bytes() == runners[-1].plan
    text = engine.describe()
    assert "flow + decoder in TensorRT" in text and "full graph failed" in text and "verified against torch" in text

    # synthesis through the (fake) engine gives each item exactly its own audio
    settings = SynthesisSettings(0.0, 1.0, 0.0)
    ids = [engine.text_to_ids(s, "en") for s in ("Yes.", "Oh, no.")]
    got = engine.synthesize_batch(ids + [[]], settings)
    from studio.engine.onnx_export import run_torch

    want = run_torch(engine.torch_engine.model, engine.torch_engine.hop_length, ids)
    assert [len(g) for g in got[:2]] == [len(w) for w in want] and got[2].size == 0
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.clip(w, -1, 1), atol=1e-4)

    # a second engine with the same inputs: the whole graph's failure and the
    # flow+decoder plan both come from the cache; nothing is exported or built
    fake.config = None
    fake.log.clear()
    again, exported_again = make()
    again._runner = again._prepare(fake, torch)
    assert again.build_info.cache_hit and again.build_info.key == info.key
    assert "cached; delete" in again.build_info.failures["full"]
    assert fake.config is None and fake.log == [] and exported_again == []

    # the whole graph parses and builds but computes something else: verification
    # rejects it (and remembers), the (cached) flow+decoder graph is used instead
    fake.fail_variants.clear()
    for marker in (tmp_path / "tensorrt").glob("*.failed"):
        marker.unlink()
    wrong, exported_wrong = make()
    wrong._runner = wrong._prepare(fake, torch)
    assert wrong.build_info.variant == "flow_decoder" and exported_wrong == ["full"]
    assert "output length" in wrong.build_info.failures["full"]
    assert len(list((tmp_path / "tensorrt").glob("*.failed"))) == 1
