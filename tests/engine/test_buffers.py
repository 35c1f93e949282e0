"""BufferPool: reuse, bounds, stats, and no allocation growth after warm-up."""

from __future__ import annotations

import gc
import threading
import tracemalloc

import numpy as np
import pytest

from studio.engine.serving.buffers import BufferPool, round_up_pow2


def _cycle(pool: BufferPool, rng: np.random.Generator) -> None:
    """One batch's worth: padded ids, lengths, mask, and an output span."""
    b = int(rng.integers(1, 9))
    t = int(rng.integers(8, 400))
    n = int(rng.integers(10_000, 120_000))  # 0.5 .. 5.4 s of 22 kHz audio
    ids = pool.acquire((b, t), np.int64)
    lengths = pool.acquire((b,), np.int64)
    mask = pool.acquire((b, t), np.bool_)
    out = pool.acquire((n,), np.float32)
    ids.fill(0)
    lengths.fill(t)
    mask.fill(True)
    out[:] = 0.5
    for arr in (out, mask, lengths, ids):
        pool.release(arr)


def test_round_up_pow2():
    assert [round_up_pow2(n) for n in (0, 1, 2, 3, 4, 5, 1000, 1024, 1025)] == [
        1, 1, 2, 4, 4, 8, 1024, 1024, 2048,
    ]
    assert round_up_pow2(3, minimum=256) == 256


def test_acquire_gives_views_of_reused_buffers():
    pool = BufferPool(min_elements=16)
    a = pool.acquire((3, 5), np.int64)
    assert a.shape == (3, 5) and a.dtype == np.int64
    assert a.base is not None and a.base.shape == (16,)
    base = a.base
    pool.release(a[1:])  # any view of the buffer releases it
    b = pool.acquire((2, 7), "int64")  # 14 <= 16: same bucket, same memory
    assert b.base is base
    c = pool.acquire((2, 7), np.float32)  # another dtype: another buffer
    assert c.base is not base
    st = pool.stats()
    assert (st.hits, st.misses, st.buffers_in_use) == (1, 2, 2)
    assert pool.owns(b) and not pool.owns(np.zeros(3))
    pool.release(b)
    pool.release(c)
    assert pool.stats().bytes_in_use == 0


def test_release_errors():
    pool = BufferPool()
    a = pool.acquire(10, np.float32)
    pool.release(a)
    with pytest.raises(ValueError):
        pool.release(a)  # twice
    with pytest.raises(ValueError):
        pool.release(np.zeros(10, np.float32))  # not ours
    with pytest.raises(TypeError):
        pool.release([1, 2, 3])


def test_borrow_context_manager_and_zeros():
    pool = BufferPool()
    with pool.borrow((4, 4), np.int64) as buf:
        buf.fill(7)
    z = pool.acquire_zeros((4, 4), np.int64)
    assert not z.any()
    pool.release(z)
    assert pool.stats().hits == 1


def test_pool_is_bounded():
    mb = 1 << 20
    pool = BufferPool(max_bytes=2 * mb)
    held = [pool.acquire((mb // 4,), np.float32) for _ in range(4)]  # 4 x 1 MiB in use
    assert pool.stats().bytes_in_use == 4 * mb  # acquiring is never refused
    for arr in held:
        pool.release(arr)
    st = pool.stats()
    assert st.bytes_idle <= 2 * mb and st.evictions == 2 and st.buffers_idle == 2
    big = pool.acquire((mb,), np.float32)  # 4 MiB > max_bytes: dropped on release
    pool.release(big)
    assert pool.stats().bytes_idle <= 2 * mb
    pool.clear()
    assert pool.stats().bytes_held == 0


def test_allocations_stabilize_over_200_cycles():
    pool = BufferPool(max_bytes=64 << 20)
    rng = np.random.default_rng(1234)
    gc.collect()
    tracemalloc.start()
    try:
        warmup, cycles = 60, 200  # fixed seed: every size bucket is seen in warm-up
        held_after_warmup = traced_after_warmup = misses_after_warmup = None
        for k in range(cycles):
            _cycle(pool, rng)
            if k + 1 == warmup:
                gc.collect()
                held_after_warmup = pool.stats().bytes_held
                misses_after_warmup = pool.stats().misses
                traced_after_warmup = tracemalloc.get_traced_memory()[0]
        gc.collect()
        traced_end = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    st = pool.stats()
    assert st.bytes_held == held_after_warmup  # no new buffers after warm-up
    assert st.misses == misses_after_warmup
    assert traced_end - traced_after_warmup < 4096, traced_end - traced_after_warmup
    assert st.hits > 20 * st.misses
    assert st.buffers_in_use == 0


def test_thread_safety():
    pool = BufferPool()
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(200):
                a = pool.acquire((int(rng.integers(1, 2000)),), np.float32)
                a.fill(seed)
                assert (a == seed).all()  # nobody else writes into our buffer
                pool.release(a)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    st = pool.stats()
    assert st.buffers_in_use == 0 and st.hits + st.misses == 800


def test_torch_pool_on_cpu():
    torch = pytest.importorskip("torch")
    from studio.engine.serving.buffers import TorchBufferPool

    pool = TorchBufferPool("cpu", min_elements=64)
    a = pool.acquire((4, 10), np.int64)
    assert a.dtype == torch.int64 and tuple(a.shape) == (4, 10) and a.device.type == "cpu"
    ptr = a.untyped_storage().data_ptr()
    pool.release(a[1:])
    b = pool.acquire((5, 12), torch.int64)
    assert b.untyped_storage().data_ptr() == ptr
    pool.release(b)
    with pytest.raises(ValueError):
        pool.release(b)
    st = pool.stats()
    assert (st.hits, st.misses) == (1, 1)
