"""One-time builds: the engine says before loading that it will build (and not once it is
cached), and the window shows "Preparing the fast model" from the start of the build.

Real engines of the bundled voice on temporary cache folders, so the builds really run:
the graph cut of the FP32 voice (seconds) and the INT8 build (calibrated on two
sentences instead of ~40 to keep the test under a minute; the same build code, cache
lookup and announcement as a full build).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.window import WAIT, make_window, open_and_wait, wait_jobs_done

from studio.engine.onnx.int8 import Int8OnnxEngine
from studio.engine.onnx.piper import OnnxPiperEngine
from studio.engine.voice.catalog import get_voice
from studio.stack.build import build_engine
from studio.desktop.messages import EngineStatus

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]

VOICE = get_voice(None)
CALIBRATION = 2  # sentences


def test_the_graph_cut_is_announced_before_loading_and_not_once_it_is_on_disk() -> None:
    first = OnnxPiperEngine(VOICE.model_path, VOICE.config_path, threads=1, window_frames=64)
    need = first.pending_build()
    assert need is not None and "cut" in need.what and need.about == "a few seconds"
    first.load()
    try:
        assert first.pending_build() is None  # loaded: nothing left to build
        # another engine of the same model: its sessions are shared, nothing to build either
        assert OnnxPiperEngine(VOICE.model_path, VOICE.config_path, threads=1, window_frames=64).pending_build() is None
    finally:
        first.close()
    # a fresh engine after the first is gone: the cut is found on disk
    assert OnnxPiperEngine(VOICE.model_path, VOICE.config_path, threads=1, window_frames=64).pending_build() is None
    # whole-sentence decoding never cuts
    assert OnnxPiperEngine(VOICE.model_path, VOICE.config_path, threads=1, window_frames=0).pending_build() is None


def test_the_int8_build_is_announced_with_its_duration_and_found_in_the_cache_afterwards(tmp_path: Path) -> None:
    def engine() -> Int8OnnxEngine:
        return Int8OnnxEngine(VOICE.model_path, VOICE.config_path, threads=1, cache_dir=tmp_path / "c",
                              max_calibration_sentences=CALIBRATION)

    first = engine()
    need = first.pending_build()
    assert need is not None and "INT8" in need.what and need.about == "about a minute"
    # other calibration inputs are another build: still announced after this one is built
    first.load()
    try:
        assert not first.build.cache_hit  # the announcement was right: it did build
        assert first.pending_build() is None
    finally:
        first.close()
    built = first.build.path.stat().st_mtime_ns
    again = engine()
    assert again.pending_build() is None
    again.load()
    assert again.build.path.stat().st_mtime_ns == built  # ... and right again: nothing was built
    again.close()
    other = Int8OnnxEngine(VOICE.model_path, VOICE.config_path, threads=1, cache_dir=tmp_path / "c",
                           max_calibration_sentences=CALIBRATION + 1)
    assert other.pending_build() is not None
    # a build killed mid-way (a cancelled measurement) leaves its temporary model; the next build clears it
    path = first.build.path
    stale = path.with_name(f"{path.stem}.killed.tmp.onnx")
    stale.write_bytes(b"half a model")
    path.unlink()
    rebuilt = engine()
    assert rebuilt.pending_build() is not None
    rebuilt.load()
    rebuilt.close()
    assert path.is_file() and not stale.exists()


def small_int8(plan):
    return build_engine(replace(plan, options=(("max_calibration_sentences", CALIBRATION),)))


def render_int8(qtbot, tmp_path: Path, name: str) -> tuple[list[EngineStatus], list[bool], object]:
    """A window (the real model process, real builder), the project on int8-cpu, chapter 1 rendered."""
    win = make_window(qtbot, tmp_path, build=small_int8)
    statuses: list[EngineStatus] = []
    shown: list[bool] = []
    win.session.engineStatus.connect(lambda s: (statuses.append(s), shown.append(win.loading.dialog.isVisible())))
    open_and_wait(qtbot, win, write_manuscript(tmp_path / name))
    win.session.update_settings(win.session.settings.with_changes(preset="int8-cpu", backend="onnx"))
    qtbot.waitUntil(lambda: win.session.settings.preset == "int8-cpu", timeout=WAIT)
    win.session.render_chapters([1])
    return statuses, shown, win


def test_a_first_int8_load_shows_the_preparing_dialog_from_the_start_and_a_cached_one_does_not(
        qtbot, tmp_path: Path) -> None:
    statuses, shown, win = render_int8(qtbot, tmp_path, "one")
    try:
        qtbot.waitUntil(lambda: bool(statuses) and statuses[0].busy, timeout=WAIT)
        start = statuses[0]
        assert start.build and "INT8" in start.build and start.build_about == "about a minute"
        assert "Preparing" in start.text
        assert shown[0]  # visible as soon as the build was announced, not after a guess
        assert "Preparing the fast INT8 model" in win.loading.dialog.labelText()
        assert "only once" in win.loading.dialog.labelText()
        wait_jobs_done(qtbot, win)
        assert not statuses[-1].busy and "built" in statuses[-1].text
        assert not win.loading.dialog.isVisible()  # closed by itself when the voice was ready
        assert win.loading.announced == [start.build]
        assert any(win.session.project.cache.root.glob("*/*.wav"))  # and it rendered
    finally:
        win.close()

    statuses, shown, win = render_int8(qtbot, tmp_path, "two")  # same cache folder: built already
    try:
        wait_jobs_done(qtbot, win)
        assert statuses and all(not s.build for s in statuses)
        assert not any(shown) and win.loading.announced == []
        assert "Loading voice" in statuses[0].text
    finally:
        win.close()


def test_the_tensorrt_build_is_announced_until_its_export_and_an_engine_are_on_disk(tmp_path: Path) -> None:
    """The look at the cache only (no GPU needed): building the engine itself is tests/engine/test_tensorrt.py's."""
    pytest.importorskip("torch")
    import torch

    from studio.core.files import sha256_file
    from studio.engine.tensorrt.cache import exported_onnx_path
    from studio.engine.tensorrt.engine import TensorRTEngine

    engine = TensorRTEngine(VOICE, cache_dir=tmp_path)
    need = engine.pending_build()
    assert need is not None and "TensorRT" in need.what and need.about == "a few minutes"
    export = exported_onnx_path(tmp_path, engine.variants[0], sha256_file(VOICE.model_path), torch.__version__)
    export.parent.mkdir(parents=True)
    export.write_bytes(b"exported graph")
    assert engine.pending_build() is not None  # exported, but no engine built yet
    (tmp_path / "tensorrt").mkdir()
    (tmp_path / "tensorrt" / "0123.plan").write_bytes(b"engine")
    assert engine.pending_build() is None
