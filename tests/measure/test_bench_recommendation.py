"""`studio bench` and the desktop recommend the same preset from the same figures (issue 41, point 8).

The desktop recommended by steady-state speed among int8/fp32, so `bf16-cpu`, measured slower than
`fp32-cpu` as a whole process on an AMX machine, was still offered as the fast one; now both faces
run one rule (:func:`studio.stack.preset_advice.recommend`) on bench.json, whole processes first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.desktop.facts import gather_facts
from studio.engine.presets import available_presets
from studio.measure.runner import recommendation
from studio.project.opening import new_project_settings
from studio.engine.voice.catalog import get_voice
from studio.stack.preset_advice import PresetFacts, recommend
from studio.ui.preset_table import PresetTable


def whole(speed: float) -> dict:
    return {"speed_vs_piper": {"median": speed, "min": speed, "max": speed}, "wall_s": {}, "peak_mib": {}}


#: the shape `studio bench` writes: steady state says bf16 is fastest, whole processes say int8, then fp32
RESULT = {
    "measured_at": "2026-12-05", "machine_description": "test machine",
    "presets": {"fp32-cpu": {"x_real_time": 9.0}, "bf16-cpu": {"x_real_time": 14.0},
                "int8-cpu": {"x_real_time": 12.0}},
    "whole_process": {"presets": {"fp32-cpu": whole(1.31), "bf16-cpu": whole(1.19), "int8-cpu": whole(1.6)}},
}


def test_whole_processes_decide_and_bf16_is_no_choice_when_slower() -> None:
    facts = [PresetFacts("fp32-cpu", True, 9.0, 1.31), PresetFacts("bf16-cpu", True, 14.0, 1.19)]
    rec = recommend(facts)
    assert rec.preset == "fp32-cpu" and "1.31" in rec.why  # not the steady state's bf16
    assert recommend([PresetFacts("fp32-cpu", True, 9.0), PresetFacts("bf16-cpu", True, 14.0)]).preset == "bf16-cpu"


def test_bench_and_desktop_agree(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    result = dict(RESULT, recommendation=recommendation(RESULT))
    expected = "int8-cpu" if available_presets()["int8-cpu"].ok else "fp32-cpu"
    gpu = [n for n in ("tensorrt-int8", "fp16-cuda") if available_presets()[n].ok]
    expected = gpu[0] if gpu else expected
    assert result["recommendation"]["preset"] == expected

    (tmp_path / "cache").mkdir()  # bench.json where `studio bench` copies it for the desktop
    (tmp_path / "cache" / "bench.json").write_text(json.dumps(result), encoding="utf-8")
    facts = gather_facts(None)
    assert facts.bench_path.endswith("bench.json")
    table = PresetTable()
    qtbot.addWidget(table)
    table.set_facts(facts, new_project_settings(get_voice(None)))
    assert table.recommendation.preset == expected
