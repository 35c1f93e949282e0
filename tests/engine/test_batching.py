"""BatchedEngine / Batcher: batched audio equals solo audio, firing rules, order.

Correctness runs on the real bundled voice (ONNX engine; the torch engine too when
it loads). All noise scales are 0, so solo and batched renders must agree to the
sample count and to correlation >= 0.999. Firing rules are also checked with a
tiny fake engine (fast and deterministic).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future

import numpy as np
import pytest

from support.fakes import FakeEngine
from studio.core.errors import EngineError
from studio.engine.base import SynthesisSettings
from studio.engine.serving.batcher import BatchConfig, Batcher, length_bucket, pad_batch
from studio.engine.serving.batched import BatchedEngine, default_batch_config
from studio.engine.serving.buffers import BufferPool

from support.voice import DETERMINISTIC

SENTENCES = [
    "Hello there.",
    "The cat sat on the mat.",
    "A slightly longer sentence, for the padding.",
    "Yes.",
    "Rain fell softly on the quiet town.",
]
LONG = (
    "This sentence is very much longer than the short one next to it, so that "
    "the padded batch is several times the short item's length."
)


# --------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def torch_engine():
    from studio.engine.presets import open_preset
    from studio.engine.voice.catalog import get_voice

    try:
        import torch

        threads_before = torch.get_num_threads()
        # one thread: robust on a busy 2-core box (torch sets this process-wide,
        # so the previous value is restored afterwards)
        engine = open_preset("fp32-torch", get_voice(None), threads=1)
        engine.load()
    except Exception as exc:  # noqa: BLE001 - any failure means "not available here"
        pytest.skip(f"torch engine not available: {type(exc).__name__}: {exc}")
    yield engine
    engine.close()
    torch.set_num_threads(threads_before)


@pytest.fixture(scope="module")
def ids(onnx_engine):
    return [onnx_engine.text_to_ids(s, "en") for s in SENTENCES]


@pytest.fixture(scope="module")
def solo(onnx_engine, ids):
    return [onnx_engine.synthesize_batch([i], DETERMINISTIC)[0] for i in ids]


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a.astype(np.float64), b.astype(np.float64))[0, 1])


def _assert_same(batched: list[np.ndarray], reference: list[np.ndarray]) -> None:
    assert len(batched) == len(reference)
    for k, (got, want) in enumerate(zip(batched, reference)):
        assert got.dtype == np.float32
        assert len(got) == len(want), f"item {k}: {len(got)} samples, solo has {len(want)}"
        assert _corr(got, want) >= 0.999, f"item {k}: correlation {_corr(got, want):.5f}"


# ------------------------------------------------------------ real-voice checks


def test_batched_items_equal_solo_renders(onnx_engine, ids, solo):
    batched = BatchedEngine(onnx_engine, max_batch_size=8, bucket_ratio=100.0, close_engine=False)
    out = batched.synthesize_many(ids, DETERMINISTIC)
    _assert_same(out, solo)
    st = batched.stats()
    assert st.batches == 1 and st.items == len(ids)  # really one padded batch
    assert st.padding_overhead > 0


def test_padding_never_leaks_from_a_longer_item(onnx_engine, ids, solo):
    long_ids = onnx_engine.text_to_ids(LONG, "en")
    short = ids[0]
    assert len(long_ids) > 4 * len(short)
    onnx_engine_batch = BatchedEngine(onnx_engine, 2, bucket_ratio=100.0, close_engine=False)
    out = onnx_engine_batch.synthesize_many([short, long_ids], DETERMINISTIC)
    assert onnx_engine_batch.stats().mean_batch_size == 2
    assert len(out[0]) == len(solo[0])
    assert len(out[1]) > 4 * len(out[0])
    np.testing.assert_allclose(out[0], solo[0], atol=2e-3)
    assert _corr(out[0], solo[0]) >= 0.999


def test_order_restored_and_default_engine_api(onnx_engine, ids, solo):
    batched = BatchedEngine(onnx_engine, max_batch_size=2, bucket_ratio=100.0, close_engine=False)
    order = [3, 0, 4, 1, 2]
    out = batched.synthesize_batch([ids[i] for i in order], DETERMINISTIC)  # Engine API
    _assert_same(out, [solo[i] for i in order])
    assert batched.stats().batches == 3  # 5 items, batches of <= 2
    assert batched.sample_rate == onnx_engine.sample_rate
    assert batched.text_to_ids(SENTENCES[0], "en") == ids[0]


def test_timeout_fires_a_lonely_request(onnx_engine, ids, solo):
    wait = 0.3
    batched = BatchedEngine(onnx_engine, max_batch_size=8, max_wait_s=wait, close_engine=False)
    try:
        t0 = time.monotonic()
        fut = batched.submit(ids[1], DETERMINISTIC)
        audio = fut.result(timeout=30)
        elapsed = time.monotonic() - t0
    finally:
        batched.close()
    assert elapsed >= wait * 0.9
    st = batched.stats()
    assert (st.fired_timeout, st.fired_full, st.items) == (1, 0, 1)
    _assert_same([audio], [solo[1]])


def test_full_bucket_fires_without_waiting(onnx_engine, ids, solo):
    batched = BatchedEngine(
        onnx_engine, max_batch_size=3, max_wait_s=600.0, bucket_ratio=100.0, close_engine=False
    )
    picks = (0, 1, 4)  # all longer than 16 ids: one bucket at ratio 100
    try:
        futs = [batched.submit(ids[i], DETERMINISTIC) for i in picks]
        out = [f.result(timeout=120) for f in futs]  # long before the 600 s wait
    finally:
        batched.close()
    st = batched.stats()
    assert (st.fired_full, st.fired_timeout, st.batches, st.items) == (1, 0, 1, 3)
    _assert_same(out, [solo[i] for i in picks])


def test_torch_engine_batched_equals_solo(torch_engine):
    tids = [torch_engine.text_to_ids(s, "en") for s in (SENTENCES[0], SENTENCES[2])]
    solo = [torch_engine.synthesize_batch([i], DETERMINISTIC)[0] for i in tids]
    batched = BatchedEngine(torch_engine, max_batch_size=4, bucket_ratio=100.0, close_engine=False)
    _assert_same(batched.synthesize_many(tids, DETERMINISTIC), solo)
    assert batched.stats().batches == 1


# ----------------------------------------------------------- mechanics (fake)


def test_submit_from_many_threads_groups_by_bucket():
    fake = FakeEngine(samples_per_id=10, delay_s=0.01)
    cfg_batched = BatchedEngine(fake, max_batch_size=4, max_wait_s=0.05, bucket_ratio=1.25)
    short, longer = [7] * 10, [9] * 100  # far apart: never in one batch
    results: dict[tuple[int, int], np.ndarray] = {}
    lock = threading.Lock()

    def worker(t: int) -> None:
        futs = [(k, cfg_batched.submit(short if k % 2 else longer, DETERMINISTIC)) for k in range(6)]
        for k, f in futs:
            with lock:
                results[(t, k)] = f.result(timeout=10)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    cfg_batched.close()
    assert len(results) == 24
    for (t, k), audio in results.items():
        want = (7.0, 100) if k % 2 else (9.0, 1000)
        assert (audio[0], len(audio)) == want
    for batch in fake.batches:
        assert len(batch) <= 4
        assert len(set(batch)) == 1  # one length bucket per batch
    assert cfg_batched.stats().items == 24


def test_settings_never_mix_in_a_batch():
    fake = FakeEngine(samples_per_id=10)
    b = BatchedEngine(fake, max_batch_size=2, max_wait_s=5.0)
    s2 = SynthesisSettings(noise_scale=0.0, length_scale=1.2, noise_w=0.0)
    f1 = b.submit([1] * 5, DETERMINISTIC)
    f2 = b.submit([2] * 5, s2)
    f3 = b.submit([3] * 5, DETERMINISTIC)  # completes the DETERMINISTIC bucket
    assert f1.result(timeout=5)[0] == 1 and f3.result(timeout=5)[0] == 3
    assert not f2.done()
    b.close()  # flushes the remaining request
    assert f2.result(timeout=5)[0] == 2
    assert b.stats().fired_flush == 1


def test_engine_errors_reach_every_future_and_callbacks_run():
    fake = FakeEngine(samples_per_id=10, fail=True)
    b = BatchedEngine(fake, max_batch_size=2, max_wait_s=5.0)
    called: list[Future] = []
    futs = [b.submit([1] * 4, DETERMINISTIC, callback=called.append) for _ in range(2)]
    for f in futs:
        with pytest.raises(EngineError, match="boom"):
            f.result(timeout=5)
    b.close()
    assert len(called) == 2
    with pytest.raises(RuntimeError):
        b.submit([1], DETERMINISTIC)


def test_close_can_cancel_pending():
    b = Batcher(lambda seqs, s: [len(x) for x in seqs], BatchConfig(max_batch_size=10, max_wait_s=60))
    fut = b.submit([1, 2, 3], DETERMINISTIC)
    b.close(cancel_pending=True)
    assert fut.cancelled()


def test_empty_sequences_are_rejected():
    b = BatchedEngine(FakeEngine(samples_per_id=10), 2)
    with pytest.raises(EngineError):
        b.submit([], DETERMINISTIC)
    assert b.synthesize_many([], DETERMINISTIC) == []
    b.close()


def test_max_batch_tokens_caps_padded_size():
    fake = FakeEngine(samples_per_id=10)
    b = BatchedEngine(fake, max_batch_size=8, max_batch_tokens=300, bucket_ratio=100.0)
    out = b.synthesize_many([[5] * 100] * 7, DETERMINISTIC)
    assert [len(x) for x in out] == [1000] * 7
    assert all(len(batch) <= 3 for batch in fake.batches)
    b.close()


def test_pad_batch_uses_pool_and_masks():
    pool = BufferPool()
    seqs = [[1, 2, 3], [4], [5, 6]]
    for _ in range(3):
        with pad_batch(seqs, pool) as pb:
            assert pb.ids.tolist() == [[1, 2, 3], [4, 0, 0], [5, 6, 0]]
            assert pb.lengths.tolist() == [3, 1, 2]
            assert pb.mask.sum() == 6 and pb.mask[1].tolist() == [True, False, False]
            assert [r.tolist() for r in pb.rows()] == seqs
    st = pool.stats()
    assert st.misses == 3 and st.hits == 6 and st.buffers_in_use == 0


def test_defaults_per_device_and_buckets():
    assert default_batch_config("cpu").max_batch_size == 1
    assert default_batch_config("cuda").max_batch_size == 32
    assert default_batch_config("cuda:1").max_batch_size == 32
    assert BatchedEngine(FakeEngine()).max_batch_size == 1  # fake has no device: CPU
    assert length_bucket(10) == length_bucket(16) == 0
    assert length_bucket(100) == length_bucket(110)
    assert length_bucket(100) < length_bucket(200)
    with pytest.raises(ValueError):
        BatchConfig(max_batch_size=0)
