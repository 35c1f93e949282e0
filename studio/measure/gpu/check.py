"""The GPU check: every GPU figure and GPU correctness check, in one run of a few minutes.

Run by ``bash bench/gpu_check.sh`` (see there for the machine it is made for);
``--dry-run`` runs the same code on the CPU with a few sentences (the test suite
does, so the check cannot rot while no GPU is around). It loads the voice from the
prepared folder (:mod:`studio.measure.gpu.prepare`: compact weights and recorded
phoneme ids, so no espeak-ng, ONNX parsing, PySide6 or python-docx is imported),
then writes one JSON row per result (:mod:`studio.measure.gpu.rows`):

1. ``env``: Python, torch, CUDA, GPU, TensorRT, NVML, wheels unpacked;
2. ``load <preset>``: load time and device memory the load added, for FP32 and FP16,
   and ``resident fp16-cuda``: what the FP16 model keeps once it has spoken;
3. ``fp16 batched == unbatched``: same lengths, correlation >= 0.999, noise off;
4. ``fp16 vs fp32``: log-mel correlation and durations, noise off;
5. ``throughput batch N`` (1, 8, 32, 64): x real time on length-sorted sentences,
   activations per batch size (device level and torch);
6. ``streaming``: time to first audio of a ~2,000-character paragraph;
7. ``tensorrt profile``: the TensorRT build's profile from its calibration set and
   how many benchmark sentences would fall back to torch (no TensorRT needed);
8. ``tensorrt-int8``: unavailable with the reason, or built and measured;
9. ``kokoro ...`` and ``xtts ...``: the other families at batch 1 and 8 when their models are
   on this machine (:mod:`studio.measure.gpu.families`), else one ``unavailable`` row each;
10. ``goals``: >= 1,000x real time batched, <= 0.5 GB resident (reported).

Every step has a share of the time budget; one that cannot finish in time is a
``timeout`` row, and any ``skip``/``fail``/``error``/``timeout`` row makes the exit
status non-zero.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np

from studio.measure.gpu import measures as m
from studio.measure.gpu.families import family_goals, kokoro_rows, xtts_rows
from studio.measure.gpu.rows import ROWS_FILE, RowWriter, verdict
from studio.stack.build import batch_engine

log = logging.getLogger(__name__)

#: the whole check must finish in 6 minutes; the shell's hard limit is a little above this
DEFAULT_BUDGET_S = 330.0


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


def prepared_voice(folder: Path):
    """The prepared voice as a VoiceInfo: compact weights, config, recorded ids."""
    from studio.engine.piper.voices import FAMILY_NAME, piper_abilities
    from studio.engine.voice.config import VoiceConfig
    from studio.engine.voice.info import VoiceInfo

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    v = manifest["voice"]
    config = VoiceConfig.from_file(folder / v["config"])
    return VoiceInfo(id=v["id"], name=v["name"], family=FAMILY_NAME, language=v["language"],
                     sample_rate=int(v["sample_rate"]), model_path=folder / v["weights"],
                     config_path=folder / v["config"], source="prepared", phoneme_ids=folder / v["phoneme_ids"],
                     abilities=piper_abilities(config), default_settings=config.default_settings)


def environment(device: str, out: Path) -> tuple[str, dict[str, Any]]:
    import torch

    from studio.engine.cuda_info import nvml_memory
    from studio.engine.presets import availability
    from studio.engine.tensorrt.runtime import tensorrt_version

    info: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                            "cuda_build": torch.version.cuda, "device": device}
    if device.startswith("cuda"):
        p = torch.cuda.get_device_properties(torch.device(device))
        info.update(gpu=p.name, gpu_memory_gib=round(p.total_memory / 2**30), capability=f"sm_{p.major}{p.minor}",
                    cudnn=torch.backends.cudnn.version())
    from studio.engine.cuda_info import device_memory

    start = device_memory(device) if device.startswith("cuda") else None  # creates the CUDA context
    info["context_bytes"] = None if start is None else start[0]  # not counted as any preset's resident memory
    info["tensorrt"] = tensorrt_version()
    info["nvml"] = nvml_memory() is not None
    wheels = out / "wheels-installed.json"
    info["wheels"] = json.loads(wheels.read_text(encoding="utf-8")) if wheels.is_file() else "none unpacked"
    info["presets"] = {name: availability(name, device if name == "fp32-torch" else None).reason
                       for name in ("fp32-torch", "fp16-cuda", "tensorrt-int8")}
    where = f"{info.get('gpu', 'CPU')}" + (f" {info['capability']}, {info['gpu_memory_gib']} GiB" if "gpu" in info else "")
    figures = (f"Python {info['python']}, torch {info['torch']} (CUDA {info['cuda_build']}), {where}, "
               f"TensorRT {info['tensorrt'] or 'absent'}, NVML {'yes' if info['nvml'] else 'no'}"
               + (f"; {info['context_bytes'] / 2**20:.0f} MiB in use before loading (CUDA context)"
                  if info["context_bytes"] is not None else ""))
    return figures, info


def imported_distributions() -> list[str]:
    """Third-party distributions this process imported (a test compares them with the wheel list)."""
    import importlib.metadata

    owners = importlib.metadata.packages_distributions()
    tops = {name.split(".")[0] for name in list(sys.modules)}
    return sorted({d for t in tops for d in owners.get(t, [])})


def run(folder: Path, out: Path, *, dry_run: bool, budget_s: float, models: dict[str, Path] | None = None) -> int:
    """Every row into ``out``; ``models``: the Kokoro voices folder and XTTS checkpoint folder found
    on this machine (``kokoro``, ``xtts``), which cannot travel in the prepared folder."""
    models = models or {}
    deadline = Deadline(budget_s)
    writer = RowWriter(out / ROWS_FILE)
    started = time.monotonic()
    import torch

    device = "cpu" if dry_run else "cuda"
    if not dry_run and not torch.cuda.is_available():
        writer.add("env", "skip", "no CUDA device: torch.cuda.is_available() is False (use --dry-run on a CPU)")
        writer.add("done", "info", elapsed_s=round(time.monotonic() - started, 1))
        return verdict(writer.rows)[0]

    scale = 0.2 if dry_run else 1.0  # a dry run's steps are a few short sentences

    def step(name: str, need_s: float, fn: Callable[[], tuple[str, str, dict]], **extra: Any) -> dict | None:
        """Run one measurement as one row; a step that cannot finish in time is a timeout row."""
        need_s *= scale
        if deadline.left() < need_s:
            writer.add(name, "timeout", f"not run: {deadline.left():.0f} s left of the budget, needs ~{need_s:.0f} s")
            return None
        try:
            status, figures, detail = fn()
        except Exception as exc:  # one failing measurement must not hide the others
            log.error("%s failed:\n%s", name, traceback.format_exc())
            return writer.add(name, "error", f"{type(exc).__name__}: {exc}"[:300], **extra)
        return writer.add(name, status, figures, **extra, **detail)

    figures, info = environment(device, out)
    writer.add("env", "ok", figures, **info)
    if dry_run:
        torch.set_num_threads(1)  # a shared, busy CPU: more threads only spin against each other
    data = json.loads((folder / "sentences.json").read_text(encoding="utf-8"))
    language, sentences, paragraph = data["language"], data["sentences"], data["paragraph"]
    test_preset = "fp32-torch" if dry_run else "fp16-cuda"
    if dry_run:  # three short sentences of different lengths, a short paragraph: < 60 s on a busy CPU
        ordered = sorted(sentences, key=len)
        sentences = [ordered[i] for i in (1, 5, 9)]
        paragraph = data["dry_run_paragraph"]
    batches = (1, 3) if dry_run else (1, 8, 32, 64)
    voice = prepared_voice(folder)

    loaded: dict[str, m.Loaded] = {}

    def load(preset: str) -> tuple[str, str, dict]:
        got = m.load(preset, voice, device)
        loaded[preset] = got
        described = got.engine.describe()
        return "ok", (f"loaded in {got.load_s:.1f} s; resident {m.mib(got.resident)} device, "
                      f"{m.mib(got.torch_allocated)} torch; {described.split('; weights')[0]}"), \
            {"resident_bytes": got.resident, "load_s": got.load_s, "describe": described}

    step("load fp32-torch", 20, lambda: load("fp32-torch"), kind="load", preset="fp32-torch")
    if test_preset != "fp32-torch":  # a dry run's stand-in for fp16-cuda is fp32-torch itself: loaded once
        step(f"load {test_preset}", 20, lambda: load(test_preset), kind="load", preset=test_preset)
    if "fp32-torch" not in loaded or test_preset not in loaded:
        writer.add("load", "skip", "a preset did not load: nothing else can run")
        writer.add("done", "info", elapsed_s=round(time.monotonic() - started, 1))
        return verdict(writer.rows)[0]
    ref, test = loaded["fp32-torch"].engine, loaded[test_preset].engine
    ids = [test.text_to_ids(s, language) for s in sentences]
    sr = test.sample_rate
    by_length = sorted(ids, key=len)  # 32 sentences spread over all lengths, shortest to longest
    equal_ids = ids if dry_run else [by_length[int(i)] for i in np.linspace(0, len(ids) - 1, 32).round()]
    m.unbatched(test, equal_ids[:1 if dry_run else 2], m.NOISE_OFF)  # warm-up: kernels, cuDNN, allocator
    # and batched shapes; then what the fp16 model keeps resident once it has spoken
    batch_engine(test, 8, device).synthesize_batch(by_length[::8], test.default_settings)
    step(f"resident {test_preset}", 5, lambda: m.resident_after_warm_up(loaded[test_preset], device),
         kind="resident", preset=test_preset)
    single: list = []

    def equality() -> tuple[str, str, dict]:
        single.extend(m.unbatched(test, equal_ids, m.NOISE_OFF))
        return m.batched_vs_unbatched(test, equal_ids, device, single)

    label = "fp16" if not dry_run else "fp32 (dry run)"
    step(f"{label} batched == unbatched", 30, equality)
    step(f"{label} vs fp32", 20, lambda: m.precision_vs_fp32(
        single if ref is test else m.unbatched(ref, equal_ids, m.NOISE_OFF), single, sr)
        if single else ("skip", "no unbatched output to compare", {}))
    settings = test.default_settings
    row_budget = 1.0 if dry_run else 25.0
    for b in batches:
        step(f"throughput batch {b}", row_budget + 5,
             lambda b=b: m.throughput(test, ids * (1 if dry_run else 2), b, device, sr, settings, row_budget),
             kind="throughput")
    step("streaming", 15, lambda: m.streaming(test, paragraph, language, device, settings, strict=not dry_run))
    step("tensorrt profile", 20, lambda: m.tensorrt_profile(ref, sentences, ids, language, 8 if dry_run else 64))
    tensorrt_row(writer, step, voice, device, sentences, ids, sr, out, dry_run)
    for got in loaded.values():
        got.engine.close()
    kokoro_rows(writer, step, folder, device, dry_run, models.get("kokoro"))
    xtts_rows(writer, step, device, dry_run, models.get("xtts"), sentences)
    status, figures, detail = m.goals(writer.rows, dry_run=dry_run)
    if not dry_run:
        figures = "; ".join([figures, *family_goals(writer.rows)])
    writer.add("goals", status, figures, **detail)
    writer.add("done", "info", f"{time.monotonic() - started:.0f} s", elapsed_s=round(time.monotonic() - started, 1),
               imported_distributions=imported_distributions())
    return verdict(writer.rows)[0]


def tensorrt_row(writer: RowWriter, step, voice, device: str, sentences, ids, sr: int, out: Path,
                 dry_run: bool) -> None:
    """``tensorrt-int8`` built and measured, or unavailable with the reason."""
    from studio.engine.presets import availability

    ok, why, _missing = availability("tensorrt-int8", None if dry_run else device)
    if not ok or dry_run:
        writer.add("tensorrt-int8", "unavailable", why if not ok else "not built on a dry run")
        return
    from studio.stack.build import build_engine, plan_engine

    holder: dict[str, Any] = {}

    def build() -> tuple[str, str, dict]:
        options = (("calibration_sentences", tuple(sentences)), ("cache_dir", str(out / "cache")))
        start = time.perf_counter()
        engine = build_engine(plan_engine("tensorrt-int8", voice, device=device, batch_size=1, options=options))
        engine.load()
        holder["engine"] = engine
        return "ok", f"ready in {time.perf_counter() - start:.0f} s: {engine.describe()}", {
            "activation_bytes": engine.activation_bytes}

    if step("tensorrt-int8 build", 120, build) is None or "engine" not in holder:
        return
    engine = holder["engine"]
    for b in (8, 32):
        step(f"tensorrt-int8 batch {b}", 30,
             lambda b=b: m.throughput(engine, ids, b, device, sr, engine.default_settings, 20.0), kind="throughput")
    n, total = engine.stats["torch_fallback_items"], engine.stats["items"]
    writer.add("tensorrt-int8 fallback", "ok" if n == 0 else "fail", f"{n} of {total} items ran on torch FP32")
    engine.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bash bench/gpu_check.sh", description=__doc__.split("\n")[0])
    parser.add_argument("--prepared", type=Path, required=True, help="the folder bench/gpu_prepare.sh wrote")
    parser.add_argument("--out", type=Path, required=True, help="where the JSON rows go")
    parser.add_argument("--dry-run", action="store_true", help="CPU, a few sentences, same code path")
    parser.add_argument("--budget-s", type=float, default=DEFAULT_BUDGET_S)
    parser.add_argument("--kokoro-voices", type=Path, help="a voices folder on this machine holding Kokoro's "
                        "FP16 export as kokoro/kokoro-v1.0.fp16.onnx")
    parser.add_argument("--xtts-model", type=Path, help="an XTTS v2 checkpoint folder on this machine")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if not (args.prepared / "manifest.json").is_file():
        print(f"no prepared folder at {args.prepared}: run `bash bench/gpu_prepare.sh` first", file=sys.stderr)
        return 2
    models = {k: v for k, v in (("kokoro", args.kokoro_voices), ("xtts", args.xtts_model)) if v is not None}
    return run(args.prepared, args.out, dry_run=args.dry_run, budget_s=args.budget_s, models=models)


if __name__ == "__main__":
    sys.exit(main())
