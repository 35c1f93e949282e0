#!/usr/bin/env bash
# Every GPU measurement and GPU test of the studio, in one command (< 8 minutes on
# one CUDA GPU). On a machine without CUDA it still runs and says what it skipped.
#
#   bash bench/gpu_check.sh            # results also written to $OUT (default /tmp/gpu_check)
#
# Steps (each with its own time limit, so one hang cannot eat the budget):
#   1. environment: torch / CUDA / GPU / TensorRT / NVML versions            (~10 s)
#   2. pytest -m gpu over the whole suite: every GPU test, plus our tests that
#      skip without CUDA / TensorRT (fp16 vs fp32, TensorRT build + cache)    (<= 240 s)
#   3. benchmark: fp32-torch on CUDA, fp16-cuda batched by length buckets at
#      batch 1/8/32/64, tensorrt-int8 (if TensorRT is installed) at the same
#      batch sizes; x real time and VRAM peak per row                         (<= 210 s)
#   4. a short table of everything
# The TensorRT engine built by the tests is cached in $STUDIO_CACHE_DIR and
# reused by the benchmark (same voice, calibration set and profile).
set -u
cd "$(dirname "$0")/.."
if [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi
OUT="${OUT:-/tmp/gpu_check}"
mkdir -p "$OUT"
export OUT
export STUDIO_CACHE_DIR="${STUDIO_CACHE_DIR:-$OUT/cache}"
export PYTHONUNBUFFERED=1
T0=$(date +%s)

echo "== 1/3 environment"
timeout 60 python - <<'EOF' | tee "$OUT/env.txt"
import importlib.util, torch
print(f"torch {torch.__version__}, CUDA build {torch.version.cuda}, cuda available {torch.cuda.is_available()}")
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print(f"GPU {p.name}, {p.total_memory / 2**30:.0f} GiB, sm_{p.major}{p.minor}, cuDNN {torch.backends.cudnn.version()}")
spec = importlib.util.find_spec("tensorrt")
if spec:
    import tensorrt
    print(f"TensorRT {tensorrt.__version__}")
else:
    print("TensorRT not installed (pip install tensorrt): tensorrt-int8 rows and tests are skipped")
print("NVML (pynvml):", "yes" if importlib.util.find_spec("pynvml") else "no (VRAM from the torch allocator only)")
from studio.engine.presets import available_presets
for name, (ok, why) in available_presets().items():
    print(f"  preset {name:<14} {'OK ' if ok else 'no '} {why}")
EOF

echo "== 2/3 GPU tests"
timeout 240 python -m pytest -m gpu tests -q -rs -p no:cacheprovider 2>&1 | tee "$OUT/pytest_gpu.txt" | tail -25
PYTEST_RC=${PIPESTATUS[0]}

echo "== 3/3 benchmark"
timeout 210 python - <<'EOF' 2>&1 | tee "$OUT/bench.txt"
import gc, json, os, time, warnings
import numpy as np
warnings.filterwarnings("ignore")
import torch
from studio.engine import calibration as cal
from studio.engine.base import SynthesisSettings
from studio.engine.cuda_info import release_cuda_cache, reset_peak, vram_stats
from studio.engine.presets import availability, open_preset

OUT = os.environ.get("OUT", "/tmp/gpu_check")
rows = []


def record(preset, batch, status, **kw):
    rows.append({"preset": preset, "batch": batch, "status": status, **kw})
    print(json.dumps(rows[-1]), flush=True)


if not torch.cuda.is_available():
    record("all GPU presets", "-", "skipped: no CUDA device (torch.cuda.is_available() is False)")
else:
    # 128 narration sentences of varied length (the built-in calibration set, and pairs of it)
    base = list(cal.BUILTIN_SENTENCES)
    sentences = (base + [a + " " + b for a, b in zip(base, base[7:] + base[:7])]) * 2
    settings = SynthesisSettings()  # the voice's normal sampling: noise on

    def run(engine, ids, batch):
        """Length buckets: sort by length, consecutive batches of `batch`; returns audio seconds."""
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        samples = 0
        for s in range(0, len(order), batch):
            for audio in engine.synthesize_batch([ids[i] for i in order[s:s + batch]], settings):
                samples += audio.size
        torch.cuda.synchronize()
        return samples / engine.sample_rate

    plan = [("fp32-torch", {"device": "cuda"}, (1, 8)), ("fp16-cuda", {}, (1, 8, 32, 64))]
    trt_kw = {"calibration_sentences": list(cal.BUILTIN_SENTENCES[:16]), "max_calibration_sentences": 16}
    plan.append(("tensorrt-int8", trt_kw, (1, 8, 32, 64)))
    for name, kw, batches in plan:
        ok, why = availability(name, kw.get("device"))
        if not ok:
            record(name, "-", f"skipped: {why}")
            continue
        try:
            t = time.perf_counter()
            engine = open_preset(name, None, **kw)
            engine.load()
            ids = [engine.text_to_ids(s, "en") for s in sentences]
            load_s = time.perf_counter() - t
            desc = engine.describe()
            print(f"{name}: loaded in {load_s:.1f} s: {desc}", flush=True)
            run(engine, ids[:8], 8)  # warm-up: kernels, allocator, cuDNN
            for batch in batches:
                gc.collect()
                reset_peak()
                t = time.perf_counter()
                audio_s = run(engine, ids, batch)
                wall = time.perf_counter() - t
                v = vram_stats()
                record(name, batch, "ok", sentences=len(ids), audio_s=round(audio_s, 1), wall_s=round(wall, 2),
                       x_realtime=round(audio_s / wall, 1),
                       vram_peak_mib=round(v.peak_allocated / 2**20) if v.peak_allocated is not None else None,
                       vram_reserved_mib=round(v.peak_reserved / 2**20) if v.peak_reserved is not None else None,
                       nvml_used_mib=round(v.nvml_used / 2**20) if v.nvml_used is not None else None,
                       load_s=round(load_s, 1))
            engine.close()
        except Exception as exc:  # one preset failing must not hide the others
            record(name, "-", f"failed: {type(exc).__name__}: {exc}"[:300])
        release_cuda_cache("benchmark preset done")

with open(os.path.join(OUT, "bench.json"), "w") as fh:
    json.dump(rows, fh, indent=1)
EOF

echo
echo "== summary ($(( $(date +%s) - T0 )) s)"
grep -E "^(torch|GPU|TensorRT)" "$OUT/env.txt"
echo "pytest -m gpu: $(tail -1 "$OUT/pytest_gpu.txt") (exit $PYTEST_RC)"
python - <<'EOF'
import json, os
path = os.path.join(os.environ.get("OUT", "/tmp/gpu_check"), "bench.json")
try:
    rows = json.load(open(path))
except (OSError, ValueError):
    rows = []
    print("benchmark: no results (timed out or crashed; see bench.txt)")
print(f"{'preset':<14} {'batch':>5} {'x realtime':>10} {'wall s':>7} {'VRAM peak MiB':>13} {'reserved':>9} {'NVML used':>9}")
for r in rows:
    if r["status"] != "ok":
        print(f"{r['preset']:<14} {r['batch']!s:>5}  {r['status']}")
        continue
    f = lambda v: "n/a" if v is None else v
    print(f"{r['preset']:<14} {r['batch']:>5} {r['x_realtime']:>10} {r['wall_s']:>7} {f(r['vram_peak_mib'])!s:>13} "
          f"{f(r['vram_reserved_mib'])!s:>9} {f(r['nvml_used_mib'])!s:>9}")
EOF
exit $PYTEST_RC
