"""``studio bench``: one quick real run (fp32-cpu + int8-cpu + the piper CLI) checked for
shape, not speed -- the JSON fields, the Markdown tables, the plots, the target
verdicts -- plus the command line's handling of unknown and unavailable presets.

No timing is asserted: the numbers depend on the machine and its load.
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
from pathlib import Path

import pytest

from studio.measure import report
from studio.measure.runner import BenchConfig, run_bench, spread
from studio.measure.targets import targets
from support.render import studio_cmd

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: the INT8 tests' calibration size and cache folder: one small build serves both files
TEST_CALIBRATION = 6


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path.name} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory, monkeypatch_module):
    cache = tmp_path_factory.mktemp("studio-cache")
    monkeypatch_module.setenv("STUDIO_CACHE_DIR", str(cache))
    out = tmp_path_factory.mktemp("bench-out")
    int8_cache = tmp_path_factory.getbasetemp() / "studio-int8-cache"
    config = BenchConfig.quick_config(
        presets=["fp32-cpu", "int8-cpu"], out_dir=out, rounds=2,
        preset_options={"int8-cpu": {"cache_dir": str(int8_cache), "max_calibration_sentences": TEST_CALIBRATION}},
    )
    messages: list[str] = []
    result = run_bench(config, progress=messages.append)
    return result, out, cache, messages


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.slow
def test_quick_bench_writes_json_with_every_field(quick_run, tmp_path_factory) -> None:
    result, out, cache, messages = quick_run
    data = json.loads((out / "bench.json").read_text())
    assert data["schema"] == "studio-bench/1"
    assert data["quick"] is True and data["measured_at"] and data["machine"]["logical_cpus"] >= 1
    assert data["machine_description"] and "load_average" in data and data["duration_s"] > 0
    assert data["text"]["latency_sentence"] == "Hello, this is a test for Coqui TTS performance."
    assert data["settings"]["noise_scale"] == 0.0 and data["settings"]["noise_w"] == 0.0
    assert list(data["presets"]) == ["fp32-cpu", "int8-cpu"]
    for name, row in data["presets"].items():
        assert not row.get("error"), f"{name}: {row.get('error')}"
        for key in ("x_real_time", "rtf", "sentences_per_s", "audio_seconds", "compute_seconds", "load_s",
                    "first_call_s", "latency_p50_s", "latency_p95_s", "rss_peak_bytes", "vs_piper", "vs_fp32",
                    "audio_per_cpu_s"):
            assert isinstance(row[key], (int, float)) and row[key] > 0, (name, key, row.get(key))
        assert row["sentences"] == data["text"]["sentences"] == 3
        assert row["mode"].endswith("x 1 thread") and row["streams"] >= 1
        assert len(row["latency_samples_s"]) >= 3
        assert row["rounds"] == 2 and len(row["round_seconds"]) == 2  # interleaved with the piper CLI
        assert [p["batch_size"] for p in row["batch_sweep"]] == [1, 2]
        assert row["device"] == "cpu" and "vram" not in row  # no CUDA figures on a CPU preset
        q = row["quality"]
        for key in ("log_mel_correlation", "log_mel_correlation_mean", "duration_diff_samples",
                    "identical_durations", "wer", "wer_reference", "items"):
            assert key in q, (name, key)
        # flat copies for the desktop app's preset picker (studio.desktop.facts)
        assert row["log_mel_correlation"] == q["log_mel_correlation"]
    ref = data["presets"]["fp32-cpu"]["quality"]
    assert ref["log_mel_correlation"] == pytest.approx(1.0) and ref["identical_durations"]
    assert data["presets"]["int8-cpu"]["quality"]["identical_durations"]  # INT8 keeps FP32 durations
    int8 = data["presets"]["int8-cpu"]
    assert int8["prepare_cache_hit"] is (int8.get("prepare_s") is None)  # a build is timed only when one ran
    assert all(row["plan"].startswith(f"preset {name}: 2 stream(s)") or row["streams"] != 2
               for name, row in data["presets"].items())  # the app's render plan, from build_engine
    assert any((tmp_path_factory.getbasetemp() / "studio-int8-cache").rglob("*.int8-*.onnx"))
    # unavailable presets are listed with the reason, not measured
    for name, why in data["unavailable"].items():
        assert name in ("fp16-cuda", "tensorrt-int8", "fp32-torch", "dynamic-int8", "bf16-cpu") and why
    assert any(m.startswith("int8-cpu: ") for m in messages)


@pytest.mark.slow
def test_quick_bench_has_the_piper_row_and_target_verdicts(quick_run) -> None:
    result, out, _cache, _messages = quick_run
    piper = result["piper_cli"]
    assert piper["command"].startswith("piper -m en_US-joe-medium.onnx")
    assert "--noise-scale 0" in piper["command"]
    for kind in ("steady", "total"):
        assert piper[kind]["x_real_time"] > 0 and piper[kind]["sentences"] == 3
    assert piper["startup_s"] > 0 and piper["total"]["rss_peak_bytes"] > 0 and piper["rounds"] == 2
    assert piper["steady"]["x_real_time"] >= piper["total"]["x_real_time"]

    by_id = {t["id"]: t for t in result["targets"]}
    assert set(by_id) == {"fp32-vs-piper", "int8-vs-piper", "int8-vs-fp32", "int8-noise-floor", "int8-log-mel",
                          "int8-durations", "int8-wer", "bf16-vs-piper", "bf16-log-mel", "bf16-noise-floor",
                          "bf16-durations", "fp32-whole-vs-piper", "bf16-whole-vs-piper", "int8-whole-vs-piper",
                          "fp16-cuda-xrt"}
    for tid in ("fp32-whole-vs-piper", "bf16-whole-vs-piper", "int8-whole-vs-piper"):  # quick: no whole run
        assert by_id[tid]["met"] is None and by_id[tid]["verdict"].startswith("not measured: "), by_id[tid]
    for tid in ("fp32-vs-piper", "int8-vs-piper", "int8-vs-fp32", "int8-log-mel", "int8-durations", "int8-wer"):
        t = by_id[tid]
        assert t["met"] in (True, False) and t["measured"] is not None, t
        assert t["verdict"].startswith("met (") or t["verdict"].startswith("missed by "), t
    assert by_id["int8-durations"]["met"] is True
    cuda = by_id["fp16-cuda-xrt"]
    assert cuda["met"] is None and cuda["verdict"].startswith("not measured: ")


@pytest.mark.slow
def test_quick_bench_markdown_plots_and_cache_copy(quick_run) -> None:
    result, out, cache, _messages = quick_run
    md = (out / "bench.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    speed = [r for r in rows if r.startswith(("| piper CLI", "| fp32-cpu", "| int8-cpu"))]
    labels = [r.split("|")[1].strip() for r in speed]
    for label in ("piper CLI (steady)", "piper CLI (with start-up)", "fp32-cpu", "int8-cpu"):
        assert label in labels, md
    header = next(r for r in rows if r.startswith("| Preset | Mode |"))
    width = header.count("|")
    assert all(r.count("|") - r.count("\\|") == width for r in speed[:4])
    assert "## Targets" in md and "FP32 on" in md and "1.3x piper CLI" in md
    assert ("met (" in md or "missed by" in md) and "not measured: " in md
    assert "## Quality against FP32" in md and "## Speed (x real time) vs batch size" in md
    if result["unavailable"]:
        assert "## Not measured" in md and all(name in md for name in result["unavailable"])

    # the machine-wide copy the GUI reads ($STUDIO_CACHE_DIR/bench.json), same content
    assert json.loads((cache / "bench.json").read_text()) == json.loads((out / "bench.json").read_text())
    if importlib.util.find_spec("matplotlib") is None:  # the `bench` extra
        assert result["plots_error"].startswith("matplotlib unavailable")
        pytest.skip("matplotlib is not installed: no plots to check")
    for name in report.PLOT_FILES.values():
        w, h = png_size(out / name)
        assert w >= 300 and h >= 200, name
        assert f"]({name})" in md


@pytest.mark.slow
def test_gui_reads_the_bench_file(quick_run) -> None:
    pytest.importorskip("studio.desktop.facts")
    from studio.desktop.facts import read_bench

    _result, out, cache, _messages = quick_run
    figures, path, note = read_bench(None)  # $STUDIO_CACHE_DIR/bench.json
    assert path == str(cache / "bench.json") and not note
    fp32 = figures["fp32-cpu"]
    assert fp32.x_real_time and fp32.rtf and fp32.quality == pytest.approx(1.0)
    assert figures["int8-cpu"].noise_floor_dbfs is None or figures["int8-cpu"].noise_floor_dbfs < 0


def test_summary_printing_and_report_of_a_failed_preset(capsys, tmp_path: Path) -> None:
    """The CLI summary and the Markdown cope with a preset that failed and no piper row."""
    from studio.cli.bench import _print_summary

    result = {
        "machine_description": "test box", "machine": {"logical_cpus": 2, "physical_cores": 2, "cpu": "x"},
        "load_average": {"start": [5.0, 5.0, 5.0], "mean_1min": 5.0, "max_1min": 6.0},
        "presets": {"fp32-cpu": {"error": "RuntimeError: boom"}}, "unavailable": {"fp16-cuda": "no CUDA device"},
        "duration_s": 1.0, "text": {}, "settings": {},
    }
    result["targets"] = targets(result)
    _print_summary(result, tmp_path)
    printed = capsys.readouterr().out
    assert "failed: RuntimeError: boom" in printed and "unavailable: fp16-cuda: no CUDA device" in printed
    assert "machine was shared" in printed
    md = report.markdown(result)
    assert "failed: RuntimeError: boom" in md and "fp16-cuda: unavailable here: no CUDA device" in md
    verdicts = {t["id"]: t["verdict"] for t in result["targets"]}
    assert verdicts["fp32-vs-piper"] == "not measured: fp32-cpu failed: RuntimeError: boom"
    assert verdicts["fp16-cuda-xrt"] == "not measured: fp16-cuda unavailable: no CUDA device"


def test_target_verdicts_say_by_how_much() -> None:
    from studio.measure.targets import Target

    assert Target("a", "p", "d", 1.5, 1.3, ">=", "x").verdict()["verdict"] == "met (1.50x >= 1.30x)"
    missed = Target("a", "p", "d", 1.17, 1.3, ">=", "x").verdict()
    assert missed["met"] is False and missed["verdict"] == "missed by 0.13x, 10% (1.17x < 1.30x)"
    floor = Target("f", "p", "d", -55.0, -60.0, "<=", "dBFS").verdict()
    assert floor["verdict"].startswith("missed by 5.0 dBFS")
    assert Target("d", "p", "d", 0, 0, "==", "samples").verdict()["met"] is True
    assert Target("n", "p", "d", None, 1.0, ">=", "x", "no CUDA").verdict()["verdict"] == "not measured: no CUDA"
    assert spread(10, 3) == [0, 4, 9] and spread(2, 5) == [0, 1] and spread(5, 0) == []


def test_cli_unknown_preset_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = studio_cmd("bench", "--presets", "fp32-cpu,warp-speed", "--out", str(tmp_path / "b"))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("studio: error: unknown preset 'warp-speed'"), proc.stderr
    assert not (tmp_path / "b").exists()


def test_cli_bench_of_only_unavailable_presets_lists_why(tmp_path: Path) -> None:
    """Real CLI: nothing measurable -> a report that says why, and no measurement at all."""
    try:
        import torch

        if torch.cuda.is_available():
            pytest.skip("CUDA is available here: the CUDA presets would be measured")
    except ImportError:
        pass
    env_cache = tmp_path / "cache"
    proc = studio_cmd("bench", "--quick", "--presets", "fp16-cuda,tensorrt-int8", "--no-piper",
                      "--out", str(tmp_path / "b"), env={**os.environ, "STUDIO_CACHE_DIR": str(env_cache)},
                      timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "unavailable: fp16-cuda: " in proc.stdout and "unavailable: tensorrt-int8: " in proc.stdout
    data = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert data["presets"] == {} and set(data["unavailable"]) == {"fp16-cuda", "tensorrt-int8"}
    md = (tmp_path / "b" / "bench.md").read_text()
    assert "fp16-cuda: unavailable here: " in md
    assert (env_cache / "bench.json").is_file()
