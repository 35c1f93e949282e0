"""Presets are data, their availability is checked for real, and opening one is honest."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest

from studio.core.errors import PresetUnavailable
from studio.engine import presets
from studio.engine.base import SynthesisSettings
from studio.engine.presets import PRESETS, Missing, Preset, availability, get_preset, open_preset
from studio.engine.tensorrt.runtime import INSTALL_HINT

try:  # the torch presets are an optional install; tests that need torch say so per test
    import torch
except ImportError:
    torch = None
HAS_CUDA = torch is not None and torch.cuda.is_available()
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (pip install 'audiobook-studio[torch]')")

EXPECTED = {
    "fp32-cpu": ("onnx", "cpu", "fp32"),
    "fp32-torch": ("torch", "cpu", "fp32"),
    "dynamic-int8": ("torch", "cpu", "dynamic-int8"),
    "int8-cpu": ("onnx", "cpu", "int8"),
    "bf16-cpu": ("torch", "cpu", "bf16"),
    "fp16-cuda": ("torch", "cuda", "fp16"),
    "tensorrt-int8": ("tensorrt", "cuda", "int8"),
}


def test_presets_are_frozen_data():
    assert presets.DEFAULT_PRESET == "fp32-cpu"
    assert {name: (p.engine, p.device, p.precision) for name, p in PRESETS.items()} == EXPECTED
    for name, p in PRESETS.items():
        assert p.name == name and len(p.summary) > 40
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRESETS["fp32-cpu"].device = "cuda"  # type: ignore[misc]
    with pytest.raises(ValueError):
        Preset("x", "onnx", "tpu", "fp32", "bad device")  # type: ignore[arg-type]


def test_unknown_preset_names_the_choices():
    with pytest.raises(PresetUnavailable, match="choose one of: fp32-cpu"):
        get_preset("turbo")
    ok, reason, missing = availability("turbo")
    assert not ok and "unknown preset" in reason and missing == Missing.UNKNOWN_PRESET
    with pytest.raises(PresetUnavailable):
        open_preset("turbo")


def test_cpu_presets_are_available_here():
    for name in ("fp32-cpu", "int8-cpu") + (("fp32-torch", "dynamic-int8") if torch is not None else ()):
        ok, reason, _missing = availability(name)
        assert ok, f"{name}: {reason}"


@needs_torch
@pytest.mark.skipif(HAS_CUDA, reason="checks the no-CUDA reasons; this machine has CUDA")
def test_cuda_presets_say_why_not_without_cuda():
    expected, code = "no CUDA device: torch.cuda.is_available() is False", Missing.NO_GPU
    if torch.version.cuda is None:
        expected, code = "has no CUDA support", Missing.TORCH_NO_CUDA
    for name in ("fp16-cuda", "tensorrt-int8"):
        ok, reason, missing = availability(name)
        assert not ok and expected in reason and missing == code
        with pytest.raises(PresetUnavailable, match="is unavailable: .*CUDA"):
            open_preset(name)
    ok, reason, _missing = availability("fp32-torch", device="cuda")
    assert not ok and expected in reason
    with pytest.raises(PresetUnavailable):
        open_preset("fp32-torch", device="cuda")


def test_cpu_only_presets_refuse_cuda():
    for name in ("fp32-cpu", "dynamic-int8", "int8-cpu", "bf16-cpu"):
        ok, reason, missing = availability(name, device="cuda")
        assert not ok and "runs on cpu only" in reason and missing == Missing.CPU_ONLY


def _fake_cuda(monkeypatch, *, tensorrt_installed: bool):
    """Pretend CUDA is present; control whether ``import tensorrt`` works."""
    monkeypatch.setattr(torch.version, "cuda", torch.version.cuda or "12.4")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Fake GPU")
    real_import = importlib.import_module

    def fake_import(name, *a, **k):
        if name == "tensorrt":
            if not tensorrt_installed:
                raise ImportError("No module named 'tensorrt'")
            return type("trt", (), {"__version__": "10.9.9"})
        return real_import(name, *a, **k)

    monkeypatch.setattr(presets, "_import", fake_import)


@needs_torch
def test_tensorrt_reason_when_cuda_but_no_tensorrt(monkeypatch):
    _fake_cuda(monkeypatch, tensorrt_installed=False)
    assert availability("tensorrt-int8") == (False, f"TensorRT is not installed ({INSTALL_HINT})", Missing.TENSORRT)
    ok, reason, _missing = availability("fp16-cuda")
    assert ok and "Fake GPU" in reason
    with pytest.raises(PresetUnavailable, match=r"TensorRT is not installed \(pip install .*studio\[tensorrt\]"):
        open_preset("tensorrt-int8")


@needs_torch
def test_tensorrt_available_when_both_present(monkeypatch):
    _fake_cuda(monkeypatch, tensorrt_installed=True)
    ok, reason, _missing = availability("tensorrt-int8")
    assert ok and "TensorRT 10.9.9" in reason and "Fake GPU" in reason


def test_reason_when_torch_missing(monkeypatch):
    from studio.engine import cpu_features

    monkeypatch.setattr(cpu_features, "cpu_flags", lambda: frozenset({"avx512_bf16"}))  # the CPU is not the reason
    real_import = importlib.import_module

    def no_torch(name, *a, **k):
        if name == "torch":
            raise ImportError("No module named 'torch'")
        return real_import(name, *a, **k)

    monkeypatch.setattr(presets, "_import", no_torch)
    real_installed = presets._installed
    monkeypatch.setattr(presets, "_installed", lambda name: name != "torch" and real_installed(name))  # bf16-cpu looks, not imports
    for name in ("fp32-torch", "dynamic-int8", "bf16-cpu", "fp16-cuda", "tensorrt-int8"):
        ok, reason, missing = availability(name)
        assert not ok and reason.startswith("torch is not installed") and missing == Missing.TORCH
    assert availability("fp32-cpu").ok  # ONNX needs no torch


def test_open_fp32_cpu_describes_itself_and_speaks():
    engine = open_preset("fp32-cpu", None, threads=1)
    with engine:
        text = engine.describe()
        assert "ONNX Runtime" in text and "float32" in text and "1 threads" in text
        audio = engine.synthesize("Hello there.", "en", SynthesisSettings(0.0, 1.0, 0.0))
    assert audio.dtype == np.float32 and audio.size > 1000


def test_open_preset_rejects_unknown_keywords():
    with pytest.raises(Exception, match="takes only threads"):
        open_preset("fp32-cpu", None, turbo=True)


@needs_torch
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device: torch.cuda.is_available() is False")
def test_fp16_cuda_matches_fp32_torch():
    ref = open_preset("fp32-torch", None, device="cuda")
    half = open_preset("fp16-cuda", None)
    settings = SynthesisSettings(0.0, 1.0, 0.0)
    with ref, half:
        assert "float16" in half.describe()
        ids = [ref.text_to_ids(t, "en") for t in ("A short one.", "And a longer sentence, with a pause in it.")]
        a = ref.synthesize_batch(ids, settings)
        b = half.synthesize_batch(ids, settings)
    for x, y in zip(a, b):
        assert abs(len(x) - len(y)) <= 256 * 4  # fp16 may move a ceil(duration) by a frame
        assert 0.5 < np.sqrt(np.mean(y**2)) / np.sqrt(np.mean(x**2)) < 2.0
        if len(x) == len(y):
            assert np.corrcoef(x, y)[0, 1] > 0.95


# ------------------------------------------------------------------ VRAM facts (cuda_info)


@pytest.mark.skipif(HAS_CUDA, reason="checks the CPU behaviour; this machine has CUDA")
def test_vram_stats_are_none_without_cuda():
    from studio.engine import cuda_info

    stats = cuda_info.vram_stats()
    assert stats.allocated is None and stats.peak_allocated is None and stats.reserved is None
    assert stats.device_name is None and cuda_info.gpu_name() is None
    assert stats.summary() == "no CUDA device" or stats.nvml_used is not None
    assert cuda_info.release_cuda_cache("test") is False
    cuda_info.reset_peak()  # no-op, no error
    assert stats.device_used is None or stats.nvml_used is not None
    assert cuda_info.device_memory() is None or cuda_info.nvml_memory() is not None
    with cuda_info.DevicePeakMeter() as meter:
        sum(range(1000))
    assert meter.rise is None or cuda_info.nvml_memory() is not None


@needs_torch
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device: torch.cuda.is_available() is False")
def test_vram_stats_track_allocations_and_release():
    from studio.engine import cuda_info

    cuda_info.release_cuda_cache("test start")
    cuda_info.reset_peak()
    base = cuda_info.vram_stats()
    block = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
    during = cuda_info.vram_stats()
    assert during.allocated >= base.allocated + 256 * 2**20
    assert during.peak_allocated >= during.allocated and during.reserved >= during.allocated
    assert during.device_name and "MiB" in during.summary()
    del block
    assert cuda_info.release_cuda_cache("test end") is True
    after = cuda_info.vram_stats()
    assert after.reserved < during.reserved and after.peak_allocated >= 256 * 2**20
    # the device-level measure sees memory torch's allocator does not own as well
    assert during.device_used >= during.reserved and during.device_total > during.device_used
    with cuda_info.DevicePeakMeter("cuda") as meter:
        block = torch.empty(128 * 2**20, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
    del block
    assert meter.rise >= 128 * 2**20
