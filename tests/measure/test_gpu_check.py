"""The GPU check cannot rot: its prepare step and a real dry run, on the CPU, in CI.

``bash bench/gpu_prepare.sh --no-wheels`` writes a reduced prepared folder (the wheels
need the network and are checked by their own test of the list); ``bash
bench/gpu_check.sh --dry-run`` then runs the same code the GPU machine runs, on the
CPU, and its JSON rows and exit status are checked. Also: the prepared voice speaks
like the original, the recorded front end refuses what it has not recorded, the
wheel list covers what the check imports, and the summary's verdict is strict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from studio.measure.gpu import rows as gpu_rows
from studio.measure.gpu.prepare import TRAVEL_LIMIT
from studio.measure.gpu.wheels import GPU_MACHINE_HAS, WHEELS, trim_wheel

pytest.importorskip("torch")
pytest.importorskip("TTS")
pytest.importorskip("safetensors")

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gpu") / ".gpu"
    subprocess.run(["bash", "bench/gpu_prepare.sh", "--no-wheels", "--out", str(out)], cwd=ROOT, env=ENV,
                   check=True, capture_output=True, timeout=300)
    return out


def test_prepared_folder_contents_and_size(prepared):
    manifest = json.loads((prepared / "manifest.json").read_text(encoding="utf-8"))
    files = {p.relative_to(prepared).as_posix(): p.stat().st_size for p in prepared.rglob("*") if p.is_file()}
    voice = manifest["voice"]
    assert {voice["weights"], voice["config"], voice["phoneme_ids"], "sentences.json", "manifest.json"} <= set(files)
    assert voice["weights"].endswith(".safetensors") and 25 * 2**20 < files[voice["weights"]] < 35 * 2**20
    assert manifest["folder_bytes"] == sum(v for k, v in files.items() if k != "manifest.json")
    assert manifest["travel_bytes"] <= TRAVEL_LIMIT == 56 * 2**20
    data = json.loads((prepared / "sentences.json").read_text(encoding="utf-8"))
    assert len(data["sentences"]) >= 120 and len(data["paragraph"]) >= 1500
    assert max(map(len, data["sentences"])) > 2 * np.median([len(s) for s in data["sentences"]])  # long pairs
    # nothing that needs the original .onnx: no ONNX file travels
    assert not [f for f in files if f.endswith(".onnx")]


def test_dry_run_passes_writes_rows_and_stays_under_a_minute(prepared, tmp_path):
    out = tmp_path / "out"
    start = time.monotonic()
    proc = subprocess.run(["bash", "bench/gpu_check.sh", "--dry-run", "--prepared", str(prepared), "--out", str(out)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - start
    rows = gpu_rows.read_rows(out / gpu_rows.ROWS_FILE)
    checks = {r["check"]: r for r in rows}
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert elapsed < 65, f"dry run took {elapsed:.0f} s"
    for name in ("env", "load fp32-torch", "resident fp32-torch", "fp32 (dry run) batched == unbatched", "fp32 (dry run) vs fp32",
                 "throughput batch 1", "throughput batch 3", "streaming", "tensorrt profile",
                 "tensorrt-int8", "goals", "done"):
        assert name in checks, f"no {name!r} row: {list(checks)}"
    # the other families' rows: Kokoro (on the CPU here, with the offline model) and XTTS (no checkpoint here)
    kokoro = ("kokoro load", "kokoro batch 1", "kokoro batch 8") if _kokoro_installed() else ("kokoro",)
    for name in (*kokoro, "xtts"):
        assert name in checks, f"no {name!r} row: {list(checks)}"
    if _kokoro_installed():
        assert checks["kokoro batch 8"]["x_realtime"] > 0 and checks["kokoro batch 1"]["rtf"] > 0
    assert "no XTTS checkpoint" in checks["xtts"]["figures"]
    assert all(r["status"] in ("ok", "info", "unavailable") for r in rows), rows
    assert checks["fp32 (dry run) batched == unbatched"]["min_correlation"] >= 0.999
    assert checks["streaming"]["ttfa_s"] > 0 and checks["throughput batch 3"]["x_realtime"] > 0
    assert "no CUDA device" in checks["tensorrt-int8"]["figures"]
    assert "RESULT: PASS" in proc.stdout and "check" in proc.stdout and "figures" in proc.stdout
    # the check imported nothing the GPU machine lacks beyond the shipped wheels
    allowed = GPU_MACHINE_HAS | {w.dist for w in WHEELS} | {"audiobook-studio", "nvidia-ml-py"}
    normal = {d.lower().replace("_", "-") for d in allowed}
    extra = [d for d in checks["done"]["imported_distributions"] if d.lower().replace("_", "-") not in normal
             and not d.lower().startswith(("nvidia", "cuda"))]  # torch's own CUDA libraries
    assert not extra, f"the check imports packages the GPU machine lacks: {extra}"


def _kokoro_installed() -> bool:
    from studio.engine.kokoro.packs import offline_packs_file

    return offline_packs_file() is not None


def test_check_fails_loudly_without_a_prepared_folder(tmp_path):
    proc = subprocess.run(["bash", "bench/gpu_check.sh", "--dry-run", "--prepared", str(tmp_path / "none"),
                           "--out", str(tmp_path / "out")], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "gpu_prepare.sh" in proc.stderr


def test_verdict_fails_on_skip_failure_timeout_and_unfinished_runs(tmp_path):
    writer = gpu_rows.RowWriter(tmp_path / gpu_rows.ROWS_FILE)
    writer.add("env", "ok", "x")
    writer.add("tensorrt-int8", "unavailable", "TensorRT is not installed")
    assert gpu_rows.verdict(writer.rows)[0] == 1  # no "done" row: killed or crashed
    writer.add("done", "info")
    assert gpu_rows.verdict(writer.rows) == (0, [])
    assert gpu_rows.verdict(writer.rows, require_tensorrt=True)[0] == 1
    for status in ("skip", "fail", "error", "timeout"):
        assert gpu_rows.verdict(writer.rows + [{"check": "x", "status": status}])[0] == 1
    (tmp_path / gpu_rows.ROWS_FILE).write_text('{"check": "env", "status": "ok"}\n{"check": "lo', encoding="utf-8")
    assert [r["check"] for r in gpu_rows.read_rows(tmp_path / gpu_rows.ROWS_FILE)] == ["env"]  # cut by a kill
    assert "env" in gpu_rows.summary_table(writer.rows)


def test_prepared_voice_speaks_like_the_original(prepared):
    """FP16-stored weights, recorded ids: same voice (the durations may move by a frame)."""
    from studio.measure.gpu.check import prepared_voice
    from studio.engine.base import SynthesisSettings
    from studio.engine.presets import open_preset
    from studio.engine.voice.catalog import get_voice

    text = "Somewhere in the house, a clock was ticking."
    original = open_preset("fp32-torch", get_voice(None), threads=1)
    compact = open_preset("fp32-torch", prepared_voice(prepared), threads=1)
    ids = original.text_to_ids(text, "en")
    assert compact.text_to_ids(text, "en") == ids
    with pytest.raises(Exception, match="no recorded phoneme ids"):
        compact.text_to_ids("A sentence nobody recorded.", "en")
    noise_off = SynthesisSettings(0.0, 1.0, 0.0)
    with original, compact:
        a = original.synthesize_batch([ids], noise_off)[0]
        b = compact.synthesize_batch([ids], noise_off)[0]
    assert abs(len(a) - len(b)) <= 2 * 256
    n = min(len(a), len(b))
    assert np.corrcoef(a[:n], b[:n])[0, 1] > 0.9


def test_trimmed_wheel_keeps_what_import_needs(tmp_path):
    whl = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        for name in ("pkg/__init__.py", "pkg/version.py", "pkg/_lib/__init__.py", "pkg/_lib/_x.so",
                     "pkg/_lib/tests/test_a.py", "pkg/stats/__init__.py", "pkg-1.0.dist-info/METADATA",
                     "pkg-1.0.dist-info/RECORD", "pkg.libs/libopenblas.so"):
            zf.writestr(name, "x" * 100)
    trim_wheel(whl, "pkg")
    with zipfile.ZipFile(whl) as zf:
        names = set(zf.namelist())
        record = zf.read("pkg-1.0.dist-info/RECORD").decode()
    assert names == {"pkg/__init__.py", "pkg/version.py", "pkg/_lib/__init__.py", "pkg/_lib/_x.so",
                     "pkg-1.0.dist-info/METADATA", "pkg-1.0.dist-info/RECORD"}
    assert "pkg/stats" not in record and "pkg/__init__.py,sha256=" in record


@pytest.mark.slow
def test_full_prepare_with_wheels_fits_when_present():
    """The real prepare (with wheels, made by `bash bench/gpu_prepare.sh`): checked when .gpu/ exists."""
    folder = ROOT / ".gpu"
    if not (folder / "wheels" / "wheels.json").is_file():
        pytest.skip("no .gpu/ with wheels here (run `bash bench/gpu_prepare.sh`)")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    shipped = json.loads((folder / "wheels" / "wheels.json").read_text(encoding="utf-8"))
    assert {w["dist"] for w in shipped} == {w.dist for w in WHEELS}
    assert all("cp312" in w["file"] or "py3" in w["file"] or "abi3" in w["file"] for w in shipped)
    assert manifest["travel_bytes"] <= TRAVEL_LIMIT


def test_without_cuda_the_real_check_fails_instead_of_skipping(prepared, tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(["bash", "bench/gpu_check.sh", "--prepared", str(prepared), "--out", str(out)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    rows = gpu_rows.read_rows(out / gpu_rows.ROWS_FILE)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert rows[0]["status"] == "skip" and "no CUDA device" in rows[0]["figures"]
    assert "RESULT: FAIL" in proc.stdout


@pytest.mark.gpu
def test_fp16_cuda_batched_equals_unbatched_on_a_gpu():
    """The check's equality measure on a development machine with CUDA and the full install."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: torch.cuda.is_available() is False")
    from studio.measure.gpu import measures
    from studio.engine import calibration as cal
    from studio.stack.build import build_engine, plan_engine

    engine = build_engine(plan_engine("fp16-cuda", None, batch_size=1))
    with engine:
        ids = [engine.text_to_ids(s, "en") for s in cal.BUILTIN_SENTENCES[::3]]
        single = measures.unbatched(engine, ids, measures.NOISE_OFF)
        status, figures, detail = measures.batched_vs_unbatched(engine, ids, "cuda", single)
    assert status == "ok", figures
