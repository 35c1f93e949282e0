"""A short memory soak: the same function as ``bench/soak.py``, fewer and shorter passages."""

from __future__ import annotations

import pytest

from studio.measure.soak import make_passages, soak_in_fresh_process

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


def test_make_passages_is_deterministic_and_in_range():
    passages = make_passages(100)
    assert passages == make_passages(100)
    for sentences in passages:
        chars = sum(len(s) for s in sentences) + len(sentences) - 1
        assert 300 <= chars <= 500 and len(sentences) >= 3
    short = make_passages(20, min_chars=50, max_chars=140)
    assert all(50 <= sum(len(s) for s in p) + len(p) - 1 <= 140 for p in short)


def test_memory_does_not_grow_over_twenty_passages():
    """Torch engine (ONNX when torch is missing), in a fresh process: a soak measures
    the process it runs in, and this test session may already have run torch."""
    result = soak_in_fresh_process(
        backend="auto", count=20, min_chars=20, max_chars=100, threads=2, warmup=10, limit=0.05
    )
    print("\n" + result.summary())
    assert len(result.samples) == 20
    assert all(s.audio_seconds > 1.0 for s in result.samples)
    assert result.baseline_rss > 0
    assert result.rss_growth < 0.05, result.table()
    assert result.passed


def test_onnx_memory_does_not_grow_over_twenty_passages():
    """The default engine (ONNX Runtime, flow + decoder in windows) over paragraph-sized
    passages: the windows bound the activations, so the arena stops growing."""
    result = soak_in_fresh_process(
        backend="onnx", count=20, min_chars=200, max_chars=400, threads=2, warmup=10, limit=0.05
    )
    print("\n" + result.summary())
    assert len(result.samples) == 20
    assert result.rss_growth < 0.05, result.table()
    assert result.passed
