"""Throughput through Triton at 1, 4 and 16 concurrent clients, beside the local figures.

    python bench/triton_throughput.py [--clients 1,4,16] [--requests 32] [--threads 2]
                                      [--servers URL[,URL]] [--model NAME] [--json out.json]

Without ``--servers`` it exports the bundled voice (fp32-cpu) to a temporary
repository and starts the CPU Triton server (PyTriton, ``.venv-triton``) on
127.0.0.1, with ``--threads`` ONNX Runtime threads (default: the physical cores,
so the server gets the same CPU as the local figures). Each client is a thread
with its own :class:`~studio.engine.triton.client.TritonEngine` sending one
sentence per request (a listener's request, the worst case for batching); the
server's dynamic batcher merges concurrent requests. The same sentences are then
rendered locally, by the fp32-cpu render stack (``studio render``'s: streams of
single-thread sessions) and by one session with the default threads.

Throughput = seconds of audio per wall second ("x real time"); also sentences/s
and the median request latency for the Triton rows. With a real GPU server, pass
``--servers`` and ``--model``.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.engine.base import SynthesisSettings
from studio.engine.triton.client import TritonEngine
from studio.core.triton_target import TritonTarget
from studio.engine.voice.catalog import get_voice

log = logging.getLogger("bench.triton")

SENTENCES = [
    "The rain had stopped.",
    "She folded the letter twice and put it in her coat pocket.",
    "Nobody answered.",
    "Across the valley, the bells of the old church began to ring for evening prayers.",
    "He waited.",
    "The train was late again, and the platform was crowded with tired commuters.",
    "Why not?",
    "Ada showed her up the narrow stairs, one hand on the cold iron rail.",
]
QUIET = SynthesisSettings(noise_scale=0.0, noise_w=0.0)


def triton_level(url: str, model: str, clients: int, jobs: list[list[int]], rate: int) -> dict:
    """``clients`` threads share ``jobs`` (one sentence per request); wall time for all."""
    voice = get_voice(None)
    engines = [TritonEngine(voice.config_path, TritonTarget((url,), batch=1, in_flight=1), model)
               for _ in range(clients)]
    for e in engines:
        e.load()
    lock = threading.Lock()
    todo = list(range(len(jobs)))
    latencies: list[float] = []
    samples = [0]

    def client(engine: TritonEngine) -> None:
        while True:
            with lock:
                if not todo:
                    return
                k = todo.pop()
            t = time.perf_counter()
            audio = engine.synthesize_batch([jobs[k]], QUIET)[0]
            with lock:
                latencies.append(time.perf_counter() - t)
                samples[0] += len(audio)

    threads = [threading.Thread(target=client, args=(e,)) for e in engines]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    for e in engines:
        e.close()
    audio_s = samples[0] / rate
    return {"clients": clients, "requests": len(jobs), "wall_s": wall, "audio_s": audio_s,
            "x_real_time": audio_s / wall, "sentences_per_s": len(jobs) / wall,
            "latency_p50_s": statistics.median(latencies)}


def local_level(label: str, engine, jobs: list[list[int]], rate: int, batch: int) -> dict:
    engine.load()
    started = time.perf_counter()
    samples = 0
    for k in range(0, len(jobs), batch):
        samples += sum(len(a) for a in engine.synthesize_batch(jobs[k: k + batch], QUIET))
    wall = time.perf_counter() - started
    engine.close()
    return {"local": label, "requests": len(jobs), "wall_s": wall, "audio_s": samples / rate,
            "x_real_time": samples / rate / wall, "sentences_per_s": len(jobs) / wall}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", default="1,4,16")
    p.add_argument("--requests", type=int, default=32, help="sentences per level (default: 32)")
    p.add_argument("--threads", type=int, help="server ONNX Runtime threads (default: physical cores)")
    p.add_argument("--servers", help="use these servers instead of starting one here")
    p.add_argument("--model", help="model name on --servers")
    p.add_argument("--json", type=Path, help="write the figures here too")
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    from studio.engine.serving.streams import physical_cores
    from studio.stack.build import build_engine, plan_engine

    voice = get_voice(None)
    local = build_engine(plan_engine("fp32-cpu", voice))
    local.load()
    ids = [local.text_to_ids(s, "en") for s in SENTENCES]
    jobs = [ids[k % len(ids)] for k in range(args.requests)]
    rate = local.sample_rate
    server = None
    rows = []
    try:
        if args.servers:
            url, model = args.servers.split(",")[0], args.model or ""
        else:
            from studio.stack.triton_repository import LocalServer, export_voice, free_port

            tmp = Path(tempfile.mkdtemp(prefix="triton-bench-"))
            model = export_voice(voice, "fp32-cpu", tmp / "repo").folder.name
            server = LocalServer(tmp / "repo", free_port(), free_port(), log_file=tmp / "server.log")
            server.start(threads=args.threads or physical_cores())
            url = server.grpc_url
        triton_level(url, model, 1, jobs[:2], rate)  # warm-up
        for n in [int(c) for c in args.clients.split(",")]:
            rows.append(triton_level(url, model, n, jobs, rate))
            log.warning("triton %2d client(s): %.2fx real time", n, rows[-1]["x_real_time"])
    finally:
        if server is not None:
            server.stop()
    streams = getattr(local, "streams", 1)
    rows.append(local_level(f"fp32-cpu render stack ({streams} streams x 1 thread)", local, jobs, rate, 4 * streams))
    from studio.engine.presets import open_preset

    rows.append(local_level("one ONNX session, default threads", open_preset("fp32-cpu", voice), jobs, rate, 1))
    print("| where | clients | sentences | x real time | sentences/s | p50 latency s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        where = "Triton (gRPC)" if "clients" in r else f"local: {r['local']}"
        print(f"| {where} | {r.get('clients', '-')} | {r['requests']} | {r['x_real_time']:.2f} | "
              f"{r['sentences_per_s']:.2f} | {r['latency_p50_s']:.2f} |" if "clients" in r else
              f"| {where} | - | {r['requests']} | {r['x_real_time']:.2f} | {r['sentences_per_s']:.2f} | - |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
