#!/usr/bin/env python
"""Coqui checkpoints through the studio's Coqui engine: seconds per sentence and real-time factor.

Tiny checkpoints of each architecture are built offline with coqui-tts's own classes
(``bench/coqui_checkpoints.py``; random weights: the audio is not speech, the arithmetic
per step is the model's). Tacotron 2 has coqui's default sizes and its stop token is
disabled, so every sentence runs exactly ``--steps`` decoder steps (a fixed amount of
work, ``steps * 256 / 22050`` s of audio); the others have small sizes (their figures
say little about the real models and are printed for completeness).

Printed, per architecture and preset, at batch 1 and batch 8 (Tacotron 2 only: the
others speak one sentence at a time):

* the latency sentence ("Hello, this is a test for Coqui TTS performance."): the first
  call after loading and the median of ``--repeats`` later calls;
* seconds per sentence and the real-time factor over ``--sentences`` sentences;
* on Tacotron 2, dynamic-int8 against fp32: speed, serialized weights, mel distance;
* batched against one-by-one: the largest difference of any item's mel (exactness).

    python bench/coqui.py --steps 120 --sentences 8 --repeats 3 --threads 1
    python bench/coqui.py --device cuda --out rows.jsonl      # Tacotron 2 rows of the GPU check

On ``--device cuda`` only Tacotron 2 is measured, as ``fp32-torch`` on CUDA and ``fp16-cuda``
(batch 1 and 8), and a TensorRT INT8 row says it is not built yet (the ONNX export it starts
from is :mod:`studio.engine.coqui.onnx_export`). ``--out`` also writes every row as a JSON line.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

LATENCY_SENTENCE = "Hello, this is a test for Coqui TTS performance."
SENTENCES = (
    "The river was quiet today, and the garden was green and still.",
    "She opened the heavy wooden door and stepped into the garden.",
    "The old sailor lit his pipe and watched the grey sea.",
    "Nobody had seen the lighthouse keeper since the storm began.",
    "A small boat drifted past the harbour wall without a sound.",
    "He counted the lamps along the quay and found one missing.",
    "The wind rose over the water, cold and full of salt.",
    "By morning the fog had lifted and the bay was bright again.",
)


def _machine() -> str:
    model = flags = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("Flags:"):
                have = set(line.split(":", 1)[1].split())
                flags = " ".join(f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if f in have)
    except OSError:
        pass
    return f"{model} ({os.cpu_count()} CPUs; {flags or 'no avx2'}); load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"


def _build(root: Path, steps: int) -> dict[str, Path]:
    import coqui_checkpoints as build

    build.tacotron2(root / "tacotron2", max_decoder_steps=steps, stop_below=-1e9)
    build.hifigan(root / "tacotron2" / "vocoder")
    build.glow_tts(root / "glow_tts")
    build.vits(root / "vits")
    return {"tacotron2": root / "tacotron2", "glow_tts": root / "glow_tts", "vits": root / "vits"}


def _engine(folder: Path, preset: str, threads: int, device: str | None = None):
    from studio.engine.presets import open_preset
    from studio.engine.coqui.voices import coqui_voice_info

    engine = open_preset(preset, coqui_voice_info(folder), threads=threads, device=device)
    started = time.perf_counter()
    engine.load()
    return engine, time.perf_counter() - started


def _timed(fn) -> tuple[object, float]:
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


def _run(engine, ids: list[list[int]], batch: int) -> tuple[float, float]:
    """(seconds, seconds of audio) for all ``ids`` in batches of ``batch``."""
    from studio.engine.base import SynthesisSettings

    audio, seconds = 0.0, 0.0
    for i in range(0, len(ids), batch):
        out, took = _timed(lambda: engine.synthesize_batch(ids[i:i + batch], SynthesisSettings()))
        seconds += took
        audio += sum(len(a) for a in out) / engine.sample_rate
    return seconds, audio


def _weights_mb(model) -> float:
    import torch

    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return buffer.tell() / 2**20


def _mels(engine, ids: list[list[int]]):
    import torch

    from studio.engine.coqui.batching import tacotron2_mels

    with torch.inference_mode():
        return tacotron2_mels(engine.model, ids, [0] * len(ids), list(range(len(ids))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--steps", type=int, default=120, help="Tacotron 2 decoder steps per sentence (fixed)")
    parser.add_argument("--sentences", type=int, default=8, help="sentences per measurement (at most 8)")
    parser.add_argument("--repeats", type=int, default=3, help="later calls of the latency sentence")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="cuda: the GPU check's Tacotron 2 rows")
    parser.add_argument("--out", type=Path, default=None, help="also write the rows here, one JSON line each")
    args = parser.parse_args(argv)
    import logging

    logging.disable(logging.WARNING)
    print(f"machine: {_machine()}", flush=True)
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="coqui-bench-") as tmp:
        folders = _build(Path(tmp), args.steps)
        cuda = args.device == "cuda"
        for arch, folder in folders.items():
            if cuda and arch != "tacotron2":
                continue
            presets = (("fp32-torch", "fp16-cuda") if cuda else ("fp32-torch", "dynamic-int8")) \
                if arch == "tacotron2" else ("fp32-torch",)
            for preset in presets:
                engine, load_s = _engine(folder, preset, args.threads, "cuda" if cuda else None)
                ids = [engine.text_to_ids(t, "en") for t in SENTENCES[: args.sentences]]
                latency_ids = [engine.text_to_ids(LATENCY_SENTENCE, "en")]
                _, first = _timed(lambda: engine.synthesize_batch(latency_ids, __import__(
                    "studio.engine.base", fromlist=["SynthesisSettings"]).SynthesisSettings()))
                steady = statistics.median(_run(engine, latency_ids, 1)[0] for _ in range(args.repeats))
                for batch in ((1, 8) if arch == "tacotron2" else (1,)):
                    seconds, audio = _run(engine, ids, batch)
                    row = {"model": arch, "preset": preset, "batch": batch, "load_s": round(load_s, 2),
                           "first_latency_s": round(first, 3), "steady_latency_s": round(steady, 3),
                           "s_per_sentence": round(seconds / len(ids), 3), "rtf": round(seconds / audio, 3)}
                    if arch == "tacotron2" and not cuda:
                        row["weights_mb"] = round(_weights_mb(engine.model), 1)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                if arch == "tacotron2" and not cuda:
                    batched = _mels(engine, ids)
                    alone = [_mels(engine, [one])[0] for one in ids]
                    gap = max(float((b - a).abs().max()) for b, a in zip(batched, alone))
                    print(json.dumps({"model": arch, "preset": preset, "batched_vs_alone_max_mel_diff": gap}), flush=True)
                    if preset == "fp32-torch":
                        reference = alone
                    else:
                        distance = statistics.mean(float((q - r).abs().mean()) for q, r in zip(alone, reference))
                        print(json.dumps({"model": arch, "int8_vs_fp32_mean_abs_mel_diff": round(distance, 4)}),
                              flush=True)
                engine.close()
    if args.device == "cuda":
        rows.append({"model": "tacotron2", "preset": "tensorrt-int8", "status": "not built yet",
                     "why": "the ONNX graphs export and match torch on ONNX Runtime; calibration and engines are to do"})
        print(json.dumps(rows[-1]), flush=True)
    if args.out is not None:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    fp32 = {r["batch"]: r for r in rows if r["model"] == "tacotron2" and r["preset"] == "fp32-torch"}
    int8 = {r["batch"]: r for r in rows if r["model"] == "tacotron2" and r["preset"] == "dynamic-int8"}
    for batch in sorted(set(fp32) & set(int8)):
        speed = fp32[batch]["s_per_sentence"] / int8[batch]["s_per_sentence"]
        size = 1 - int8[batch]["weights_mb"] / fp32[batch]["weights_mb"]
        print(f"tacotron2 batch {batch}: dynamic-int8 {speed:.2f}x fp32's speed, weights {size:.0%} smaller")
    print(f"machine after: {_machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
