"""A real Triton server for a model repository on a machine without a GPU server.

Run as ``python -m studio.engine.triton.server REPO [--grpc-port N ...]`` (``studio
triton serve`` does it) with the interpreter of the server environment: PyTriton
0.7.0 ships Triton Inference Server 2.51, whose Python-backend stub fails to start
under newer Python 3.11 builds (``RLock._recursion_count``) but runs under Debian's
own 3.11.2, so the installer makes a separate virtual environment for it
(:func:`server_python` finds it).

Why PyTriton and not the ONNX Runtime backend: the pip-installable Triton has no
ONNX Runtime backend, only the Python one. So this module reads the exported
repository itself -- the same ``config.pbtxt`` (max batch size, preferred sizes,
queue delay, instance count) and the same ``model.onnx`` a GPU server loads -- and
binds one ONNX Runtime session per instance behind Triton's dynamic batcher. The
client cannot tell the difference: same model name, tensors and protocol.

Only numpy, onnxruntime and pytriton are needed here (ids come precomputed from
the client), so the server environment stays small: no espeak, no torch.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from studio.engine.triton.config import (
    INPUT_IDS,
    INPUT_LENGTHS,
    INPUT_SCALES,
    OUTPUT_AUDIO,
    OUTPUT_LENGTHS,
    validate_config,
)

log = logging.getLogger("studio.triton.server")

#: where the installer puts the server environment, relative to the checkout
SERVER_VENV = ".venv-triton"
SERVER_PYTHON_ENV = "STUDIO_TRITON_PYTHON"


def server_python(checkout: Path | None = None) -> Path | None:
    """The interpreter of the server environment: ``$STUDIO_TRITON_PYTHON``, else
    ``<checkout>/.venv-triton/bin/python``; None when neither exists."""
    env = os.environ.get(SERVER_PYTHON_ENV)
    if env:
        return Path(env) if Path(env).exists() else None
    root = checkout or Path(__file__).resolve().parents[3]
    candidate = root / SERVER_VENV / "bin" / "python"
    return candidate if candidate.exists() else None


def find_model(repo: Path, name: str | None) -> Path:
    """The model folder in ``repo`` (the only one when ``name`` is None)."""
    models = sorted(p.parent for p in repo.glob("*/config.pbtxt"))
    if name:
        models = [m for m in models if m.name == name]
    if len(models) != 1:
        raise SystemExit(f"{repo}: expected one model{' named ' + name if name else ''}, found "
                         f"{[m.name for m in models] or 'none'}")
    return models[0]


def make_infer(model_file: Path, threads: int) -> Callable[[list[Any]], list[dict[str, np.ndarray]]]:
    """One instance: an ONNX Runtime session that runs the requests Triton batched together.

    Requests may differ in id length (the client pads to buckets, but a batch can
    still mix buckets), so they are padded to the longest here and each request gets
    its own rows back, audio cut to its own longest item.
    """
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(model_file), sess_options=options,
                                           providers=["CPUExecutionProvider"])

    def infer(requests: list[Any]) -> list[dict[str, np.ndarray]]:
        ids = [np.asarray(r[INPUT_IDS], dtype=np.int64) for r in requests]
        rows = [a.shape[0] for a in ids]
        width = max(a.shape[1] for a in ids)
        batch = np.zeros((sum(rows), width), dtype=np.int64)
        at = 0
        for a in ids:
            batch[at: at + a.shape[0], : a.shape[1]] = a
            at += a.shape[0]
        lengths = np.concatenate([np.asarray(r[INPUT_LENGTHS], dtype=np.int64).reshape(-1, 1) for r in requests])
        scales = np.concatenate([np.asarray(r[INPUT_SCALES], dtype=np.float32).reshape(-1, 3) for r in requests])
        audio, audio_lengths = session.run([OUTPUT_AUDIO, OUTPUT_LENGTHS], {
            INPUT_IDS: batch, INPUT_LENGTHS: lengths, INPUT_SCALES: scales})
        out, at = [], 0
        for n in rows:
            own = audio_lengths[at: at + n]
            out.append({OUTPUT_AUDIO: audio[at: at + n, : int(own.max())], OUTPUT_LENGTHS: own})
            at += n
        log.debug("ran %d request(s), %d item(s), %d ids wide", len(requests), at, width)
        return out

    return infer


def serve(args: argparse.Namespace) -> None:
    if bool(args.tls_cert) != bool(args.tls_key):
        raise SystemExit("--tls-cert and --tls-key go together")
    from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
    from pytriton.triton import Triton, TritonConfig

    folder = find_model(args.repo, args.model)
    cfg = validate_config((folder / "config.pbtxt").read_text(encoding="utf-8"))
    model_file = folder / "1" / "model.onnx"
    if not model_file.is_file():
        raise SystemExit(f"{model_file}: no ONNX model (a TensorRT plan needs a GPU Triton server)")
    instances = max(1, sum(g.count for g in cfg.instance_group) or 1) if args.instances is None else args.instances
    batcher = DynamicBatcher(max_queue_delay_microseconds=cfg.dynamic_batching.max_queue_delay_microseconds,
                             preferred_batch_size=list(cfg.dynamic_batching.preferred_batch_size) or None)
    triton_cfg = TritonConfig(
        http_address=args.host, http_port=args.http_port, grpc_address=args.host, grpc_port=args.grpc_port,
        metrics_port=args.metrics_port, allow_metrics=args.metrics_port is not None,
        exit_on_error=True, log_verbose=0,
        grpc_use_ssl=bool(args.tls_cert) or None,
        grpc_server_cert=args.tls_cert, grpc_server_key=args.tls_key,
    )
    with Triton(config=triton_cfg) as triton:
        triton.bind(
            model_name=cfg.name,
            infer_func=[make_infer(model_file, args.threads) for _ in range(instances)],
            inputs=[Tensor(name=INPUT_IDS, dtype=np.int64, shape=(-1,)),
                    Tensor(name=INPUT_LENGTHS, dtype=np.int64, shape=(1,)),
                    Tensor(name=INPUT_SCALES, dtype=np.float32, shape=(3,))],
            outputs=[Tensor(name=OUTPUT_AUDIO, dtype=np.float32, shape=(-1,)),
                     Tensor(name=OUTPUT_LENGTHS, dtype=np.int64, shape=(1,))],
            config=ModelConfig(max_batch_size=cfg.max_batch_size, batcher=batcher),
            strict=False,
        )
        log.info("serving %s (max batch %d, preferred %s, queue delay %d us, %d instance(s) x %d thread(s)) "
                 "on %s: grpc %s, http %s", cfg.name, cfg.max_batch_size, list(batcher.preferred_batch_size or []),
                 batcher.max_queue_delay_microseconds, instances, args.threads, args.host, args.grpc_port,
                 args.http_port)
        triton.serve()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m studio.engine.triton.server",
                                description="Serve an exported voice repository with Triton (PyTriton, CPU).")
    p.add_argument("repo", type=Path, help="model repository written by `studio triton export`")
    p.add_argument("--model", help="model name in the repository (default: the only one)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--grpc-port", type=int, default=8001)
    p.add_argument("--http-port", type=int, default=8000)
    p.add_argument("--metrics-port", type=int, help="Prometheus metrics port (default: no metrics)")
    p.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads per instance (default: 1)")
    p.add_argument("--instances", type=int, help="model instances (default: the config's instance_group)")
    p.add_argument("--tls-cert", type=Path, help="serve gRPC over TLS with this certificate (PEM)")
    p.add_argument("--tls-key", type=Path, help="... and this private key (PEM)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="triton-server: %(levelname)s: %(message)s", stream=sys.stderr)
    # A plain SIGTERM (the studio stopping its server) ends serve() like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        serve(args)
    except KeyboardInterrupt:
        log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
