#!/usr/bin/env python
"""What dynamic INT8 quantization does where it applies: a coqui Tacotron 2.

A randomly initialised ``TTS.tts.models.tacotron2.Tacotron2`` (default
``Tacotron2Config``, built offline) is timed in FP32 and after
``quantize_dynamic`` (Linear + LSTM/LSTMCell -> int8 weights) on CPU:

* decoder only: ``model.decoder.inference(encoder_outputs)`` on the same
  encoder output, exactly ``--steps`` autoregressive steps (stop token disabled);
* whole ``model.inference(ids)`` on the same ids;
* serialized size of the state dict;
* how close the quantized mel output stays (correlation, max abs diff).

Runs are interleaved (fp32, int8, fp32, int8, ...) and medians reported, so a
noisy shared machine biases both sides alike. Random weights make the output
meaningless as speech, but the arithmetic per step is the real model's.

    python bench/dynamic_quant_tacotron.py --steps 200 --repeats 5 --threads 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--steps", type=int, default=200, help="decoder steps per run (fixed)")
    parser.add_argument("--length", type=int, default=80, help="input characters")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args(argv)

    import torch

    from studio.engine.torchvits.dynamic_quant import quantize_dynamic_model
    from tacotron import copy_model, random_tacotron2, tacotron2_input

    torch.set_num_threads(args.threads)
    fp32 = random_tacotron2(seed=0, max_decoder_steps=args.steps)
    int8, report = quantize_dynamic_model(copy_model(fp32), inplace=True, measure_size=True)
    ids = tacotron2_input(fp32, args.length)

    with torch.inference_mode():
        enc = fp32.encoder.inference(fp32.embedding(ids).transpose(1, 2))

        def decoder(model):
            return lambda: model.decoder.inference(enc)

        def whole(model):
            return lambda: model.inference(ids)

        def timed(fn) -> float:
            start = time.perf_counter()
            fn()
            return time.perf_counter() - start

        results = {}
        for label, make in (("decoder", decoder), ("inference", whole)):
            runs = {"fp32": make(fp32), "int8": make(int8)}
            for fn in runs.values():  # warm-up (allocator, fbgemm packing)
                fn()
            times: dict[str, list[float]] = {"fp32": [], "int8": []}
            for _ in range(args.repeats):
                for name, fn in runs.items():
                    times[name].append(timed(fn))
            results[label] = {k: statistics.median(v) for k, v in times.items()}

        out_fp32 = fp32.inference(ids)["model_outputs"]
        out_int8 = int8.inference(ids)["model_outputs"]
        corr = torch.corrcoef(torch.stack([out_fp32.flatten(), out_int8.flatten()]))[0, 1].item()
        max_diff = (out_fp32 - out_int8).abs().max().item()

    print(f"Tacotron2 (random init), CPU, torch {torch.__version__}, {args.threads} thread(s), "
          f"{args.steps} decoder steps, {args.length} input chars, median of {args.repeats}")
    print(f"quantization: {report.summary()}")
    print(f"{'part':<10} {'fp32 s':>9} {'int8 s':>9} {'speedup':>8} {'fp32 ms/step':>13} {'int8 ms/step':>13}")
    for label, r in results.items():
        print(
            f"{label:<10} {r['fp32']:>9.3f} {r['int8']:>9.3f} {r['fp32'] / r['int8']:>7.2f}x "
            f"{1000 * r['fp32'] / args.steps:>13.2f} {1000 * r['int8'] / args.steps:>13.2f}"
        )
    print(f"size: {report.size_fp32_bytes / 2**20:.1f} MiB -> {report.size_quantized_bytes / 2**20:.1f} MiB "
          f"({report.size_fp32_bytes / report.size_quantized_bytes:.2f}x smaller)")
    print(f"output: shape {tuple(out_fp32.shape)} vs {tuple(out_int8.shape)}, "
          f"correlation {corr:.5f}, max |diff| {max_diff:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
