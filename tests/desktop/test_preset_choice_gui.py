"""Presets in plain words: the recommendation for this machine, reasons a producer can act
on, measured figures, and "Measure on this machine" running the real benchmark.

The recommendation and the reasons are plain functions (no Qt); the dialog is the
real Voices & presets dialog on real widgets; measuring runs the real benchmark (one
preset, one sentence) in the background and the dialog reads the figures back from
the file ``studio bench`` writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from studio.engine.presets import PRESETS, Missing, available_presets
from studio.engine.voice.catalog import get_voice
from studio.stack.preset_advice import PresetFacts, recommend
from studio.project.opening import new_project_settings
from studio.desktop.facts import MachineFacts, PresetInfo, list_voice_choices, read_bench
from studio.desktop.measure import MeasureProgress, PresetMeasurer
from studio.desktop.preset_words import PLAIN_NAMES, PLAIN_REASONS, UNKNOWN_REASON, plain_name, plain_reason
from support.presets import CPU_ONLY, SETTINGS, machine
from support.presets import NO_GPU, NO_TRT


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def facts_of(runs: dict[str, str], bench: dict | None = None) -> list[PresetFacts]:
    return [PresetFacts(n, n in runs, (bench or {}).get(n)) for n in PRESETS]


# ------------------------------------------------------------------ no Qt


def test_the_recommendation_follows_the_machine() -> None:
    gpu_trt = {n: "" for n in PRESETS}
    assert recommend(facts_of(gpu_trt)).preset == "tensorrt-int8"
    gpu = {n: "" for n in PRESETS if n != "tensorrt-int8"}
    rec = recommend(facts_of(gpu))
    assert rec.preset == "fp16-cuda" and "NVIDIA GPU" in rec.why and "TensorRT is not installed" in rec.why
    cpu = {n: "" for n in ("fp32-cpu", "int8-cpu", "fp32-torch", "dynamic-int8")}
    rec = recommend(facts_of(cpu))
    assert rec.preset == "int8-cpu" and "Measure" in rec.why  # not measured: the INT8 CPU default
    rec = recommend(facts_of(cpu, {"fp32-cpu": 14.0, "int8-cpu": 21.5, "dynamic-int8": 30.0}))
    assert rec.preset == "int8-cpu" and "21.5" in rec.why  # dynamic-int8 is no choice: FP32 torch on a VITS voice
    assert recommend(facts_of(cpu, {"fp32-cpu": 25.0, "int8-cpu": 21.5})).preset == "fp32-cpu"  # measured wins
    assert recommend(facts_of({"fp32-cpu": ""})).preset == "fp32-cpu"


def test_what_is_missing_becomes_a_plain_sentence_and_every_refusal_on_this_machine_has_one() -> None:
    assert plain_reason(Missing.NO_GPU) == "No NVIDIA GPU was found on this computer."
    assert plain_reason(Missing.TENSORRT) == "TensorRT is not installed."
    assert plain_reason(Missing.TORCH) == "PyTorch is not installed."
    assert plain_reason(Missing.TORCH_NO_CUDA) == "This PyTorch was built without NVIDIA GPU support."
    assert plain_reason("no-gpu") == plain_reason(Missing.NO_GPU)  # as the facts' child process sends it
    assert plain_reason(None) == plain_reason("something new") == UNKNOWN_REASON
    assert set(PLAIN_REASONS) == set(Missing)  # every code has its words
    for name, got in available_presets().items():  # the real checks, on this machine
        assert got.ok == (got.missing is None), (name, got)
        if not got.ok:
            assert plain_reason(got.missing) != UNKNOWN_REASON, (name, got)
    assert set(PLAIN_NAMES) == set(PRESETS)  # every preset has a plain name


# ------------------------------------------------------------------ the dialog


def dialog(qtbot, facts: MachineFacts, measurer: PresetMeasurer | None = None):
    from studio.ui.voices_dialog import VoicesDialog

    dlg = VoicesDialog(SETTINGS, ["en"], measurer=measurer)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.set_facts(facts)
    dlg.tabs.setCurrentWidget(dlg.presets)
    return dlg


def test_the_dialog_names_presets_plainly_marks_the_recommended_one_and_says_why_others_cannot_run(
        qtbot, private_cache: Path) -> None:
    dlg = dialog(qtbot, machine(CPU_ONLY))
    table = dlg.presets
    int8, trt, gpu = table.row_of("int8-cpu"), table.row_of("tensorrt-int8"), table.row_of("fp16-cuda")
    assert int8.text(0).startswith("Fast on CPU") and "recommended" in int8.text(0) and int8.text(1) == "int8-cpu"
    assert "Fast on CPU" in table.recommended.text() and "Measure" in table.recommended.text()
    assert table.row_of("fp32-cpu").text(0) == "Best quality \u2014 engine default"  # the project has no preset
    assert "recommended" not in table.row_of("fp32-cpu").text(0)
    names = [table.tree.topLevelItem(i).text(0) for i in range(table.tree.topLevelItemCount())]
    assert sum(n.startswith("Best quality") and "PyTorch" not in n for n in names) == 1  # once, not twice (issue 32)
    assert table.row_of("") is None and table.chosen() == ("", "onnx")  # its row keeps "no preset": nothing re-renders
    assert trt.text(0).startswith("Fastest on NVIDIA GPU") and trt.text(2) == "TensorRT is not installed."
    assert gpu.text(2) == "No NVIDIA GPU was found on this computer." and gpu.toolTip(2) == NO_GPU  # raw as detail
    assert not gpu.flags() & Qt.ItemFlag.ItemIsSelectable  # greyed, cannot be chosen
    assert all(table.row_of(n).text(3) == "not measured yet" for n in PRESETS)
    assert "Nothing measured" in table.bench_note.text()
    table.tree.setCurrentItem(gpu)
    assert "No NVIDIA GPU" in table.details.text() and "torch.cuda.is_available() is False" in table.details.text()
    assert dlg.chosen_settings().preset == SETTINGS.preset  # an unavailable row changes nothing


def test_stored_figures_are_shown_and_the_fastest_measured_cpu_preset_is_recommended(
        qtbot, private_cache: Path) -> None:
    private_cache.mkdir(parents=True)
    (private_cache / "bench.json").write_text(json.dumps({"presets": {
        "fp32-cpu": {"x_real_time": 25.3, "rtf": 0.04, "log_mel_correlation": 1.0, "noise_floor_dbfs": -96.0},
        "int8-cpu": {"x_real_time": 19.0, "rtf": 0.053, "log_mel_correlation": 0.993, "noise_floor_dbfs": -83.2},
        "fp32-torch": {"error": "RuntimeError: out of memory"},
    }}), encoding="utf-8")
    figures, path, _ = read_bench(None)
    dlg = dialog(qtbot, machine(CPU_ONLY, figures, path))
    table = dlg.presets
    assert table.row_of("fp32-cpu").text(3) == "25.3\u00d7 real time" and table.row_of("fp32-cpu").text(4) == "the reference"
    assert table.row_of("int8-cpu").text(3) == "19.0\u00d7 real time"
    assert table.row_of("int8-cpu").text(4) == "0.993 match with Best quality, floor -83 dB"
    assert table.row_of("fp32-torch").text(3) == "measuring failed"
    assert table.row_of("dynamic-int8").text(3) == "not measured yet"
    assert "recommended" in table.row_of("fp32-cpu").text(0) and "25.3" in table.recommended.text()
    assert str(private_cache / "bench.json") in table.bench_note.text()


def test_measure_on_this_machine_runs_the_benchmark_in_the_background_and_updates_the_dialog(
        qtbot, private_cache: Path) -> None:
    measurer = PresetMeasurer(sentences=1)
    steps: list[MeasureProgress] = []
    measurer.progress.connect(steps.append)
    dlg = dialog(qtbot, machine({"fp32-cpu": "ONNX Runtime on CPU"}), measurer)
    table = dlg.presets
    assert table.row_of("fp32-cpu").text(3) == "not measured yet"
    assert "minutes" in table.measure_note.text()  # says roughly how long it takes
    table.measure_btn.click()
    assert table.progress.isVisible() and table.cancel_btn.isVisible() and not table.measure_btn.isEnabled()
    qtbot.waitUntil(lambda: not measurer.running, timeout=300_000)
    assert steps == [MeasureProgress("fp32-cpu", 1, 1)]
    row = table.row_of("fp32-cpu")
    assert row.text(3).endswith("\u00d7 real time") and row.text(4) == "the reference"
    assert not table.progress.isVisible() and table.measure_btn.isEnabled()
    assert "Measured in" in table.measure_note.text()
    stored = json.loads((private_cache / "bench.json").read_text(encoding="utf-8"))  # where `studio bench` puts it
    assert stored["presets"]["fp32-cpu"]["x_real_time"] > 0 and stored["text"]["sentences"] == 1
    assert f"{stored['presets']['fp32-cpu']['x_real_time']:.1f}" in row.text(3)


def test_cancel_stops_the_measurement_and_keeps_the_figures(qtbot, private_cache: Path) -> None:
    measurer = PresetMeasurer(sentences=1)
    cancelled: list[bool] = []
    measurer.cancelled.connect(lambda: cancelled.append(True))
    dlg = dialog(qtbot, machine({"fp32-cpu": "ONNX Runtime on CPU"}), measurer)
    table = dlg.presets
    table.measure_btn.click()
    table.cancel_btn.click()
    qtbot.waitUntil(lambda: bool(cancelled), timeout=120_000)
    assert not measurer.running and "cancelled" in table.measure_note.text()
    assert table.row_of("fp32-cpu").text(3) == "not measured yet"
    assert not (private_cache / "bench.json").exists()
    assert plain_name("fp32-cpu") in table.row_of("fp32-cpu").text(0)


def test_measuring_from_the_window_pauses_the_render_and_resumes_it(qtbot, tmp_path: Path) -> None:
    from support.gui import write_manuscript
    from support.window import WAIT, make_window, open_and_wait

    win = make_window(qtbot, tmp_path)
    try:
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "books"))
        session, measurer = win.session, win.measurer
        measurer.options = {"sentences": 1}
        assert measurer.start(["fp32-cpu"], None, session.snapshot.folder)
        assert session.queue.paused and not measurer.start(["fp32-cpu"])  # one measurement at a time
        with qtbot.waitSignal(measurer.finished, timeout=300_000) as done:
            pass
        assert not session.queue.paused  # the render goes on
        assert done.args[0].figures["fp32-cpu"].x_real_time > 0
        session.pause()  # paused by the producer: measuring leaves it paused
        assert measurer.start(["fp32-cpu"], None, session.snapshot.folder)
        measurer.cancel()
        qtbot.waitUntil(lambda: not measurer.running, timeout=WAIT)
        assert session.queue.paused
    finally:
        win.close()


def test_the_dialog_and_the_status_bar_name_the_same_active_preset(qtbot, private_cache: Path) -> None:
    """A project without a preset renders with its engine's default; both places name it
    (the dialog said "Engine default (no preset)" while the status bar said "Best quality")."""
    from dataclasses import replace

    from studio.desktop.preset_words import preset_label
    from studio.ui.voices_dialog import VoicesDialog

    for settings, plain in ((replace(SETTINGS, preset="", backend="onnx"), "Best quality"),
                            (replace(SETTINGS, preset="int8-cpu"), "Fast on CPU")):
        dlg = VoicesDialog(settings, ["en"])
        qtbot.addWidget(dlg)
        dlg.set_facts(machine(CPU_ONLY))
        row = dlg.presets.tree.currentItem()
        assert row is not None and row.text(0).startswith(plain)
        assert preset_label(settings.preset, settings.voice_id, settings.backend).startswith(f"Preset: {plain} (")
        assert dlg.chosen_settings().preset == settings.preset  # applying unchanged changes nothing
    assert "engine default" in preset_label("", "v", "onnx") and "fp32-cpu" in preset_label("", "v", "onnx")
