"""Triton for the studio's presets: export a voice's repository, start a local server.

Why here and not in the engine: exporting a preset needs that preset's model (the
INT8 build comes from the ONNX backend) and the benchmark's figures, and the
Triton backend must stay independent of the other backends (import-linter), so the
one place that knows both is this job.

Presets and what the repository holds (no TensorRT here without a GPU: a plan is
built on the GPU it runs on, so ``fp16-cuda`` exports the ONNX with Triton's
TensorRT accelerator in FP16, which builds the engine on the server's GPU):

* ``fp32-cpu``: the voice's own graph (interface added), CPU instances;
* ``int8-cpu``: the calibrated INT8 build (:mod:`studio.engine.onnx.int8`), CPU;
* ``fp16-cuda``: the FP32 graph, GPU instances, TensorRT FP16 accelerator.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.errors import StudioError
from studio.core.system import kill_process_group, new_process_group
from studio.engine.triton.config import ModelConfig, figures_from_bench
from studio.engine.triton.export import ExportedModel, model_name_for, write_repository
from studio.engine.triton.model import interface_model_bytes
from studio.engine.triton.server import server_python

log = logging.getLogger(__name__)

EXPORT_PRESETS = {"fp32-cpu": "cpu", "int8-cpu": "cpu", "fp16-cuda": "cuda"}


def load_bench(path: Path | None) -> tuple[dict[str, Any] | None, str]:
    """``bench.json`` (``path``, else the machine-wide one ``studio bench`` keeps); (None, why) if absent."""
    from studio.core.paths import cache_dir

    path = path or cache_dir() / "bench.json"
    if not path.is_file():
        return None, f"no benchmark at {path}"
    try:
        return json.loads(path.read_text(encoding="utf-8")), str(path)
    except (OSError, ValueError) as exc:
        return None, f"unreadable benchmark {path} ({exc})"


def export_voice(voice: Any, preset: str, repo: Path, *, bench_file: Path | None = None,
                 name: str | None = None) -> ExportedModel:
    """Write ``repo/<voice.preset>/`` for ``voice`` (a VoiceInfo) in ``preset``."""
    from studio.engine.voice.config import VoiceConfig

    if preset not in EXPORT_PRESETS:
        raise StudioError(f"preset {preset!r} cannot be exported for Triton (choose: {', '.join(EXPORT_PRESETS)})")
    if not voice.abilities.triton:
        raise StudioError(f"voice {voice.id} cannot be exported for Triton (its model has no Triton export)")
    device = EXPORT_PRESETS[preset]
    source = Path(voice.model_path)
    if preset == "int8-cpu":
        from studio.engine.onnx.int8_build import build_int8

        source = build_int8(voice.model_path, config_path=voice.config_path).path  # the cached build, else built
    config = VoiceConfig.from_file(voice.config_path)
    bench, bench_source = load_bench(bench_file)
    figures = figures_from_bench(bench, preset, device)
    model = ModelConfig(name=name or model_name_for(voice.id, preset), figures=figures, fp16=preset == "fp16-cuda",
                        extra_notes=(f"benchmark: {bench_source}", f"voice {voice.id}, preset {preset}"))
    info = {"voice": voice.id, "preset": preset, "sample_rate": config.sample_rate, "source": source.name,
            "figures": figures.source}
    return write_repository(repo, model, interface_model_bytes(source, config.hop_length), info)


# ------------------------------------------------------------------ local server


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _studio_only_path() -> Path:
    """A folder holding only a link to the ``studio`` package, for the server's PYTHONPATH.

    Why not the folder ``studio`` lives in: installed, that is the app's
    site-packages, whose numpy/onnxruntime builds would shadow the server
    environment's own (it runs another Python).
    """
    import hashlib
    import tempfile

    package = Path(__file__).resolve().parents[1]
    tag = hashlib.sha256(str(package).encode()).hexdigest()[:12]  # one folder per checkout
    folder = Path(tempfile.gettempdir()) / f"studio-triton-path-{tag}"
    link = folder / "studio"
    folder.mkdir(exist_ok=True)
    if not (link.is_symlink() and link.resolve() == package):
        tmp = folder / f".studio-{os.getpid()}"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(package, target_is_directory=True)
        os.replace(tmp, link)  # atomic: another process may be starting a server too
    return folder


@dataclass
class LocalServer:
    """A PyTriton server process on 127.0.0.1 (``studio triton serve``, tests, benchmark)."""

    repo: Path
    grpc_port: int
    http_port: int
    process: subprocess.Popen | None = None
    log_file: Path | None = None
    #: (certificate, key) PEM files: gRPC over TLS (``grpcs://``)
    tls: tuple[Path, Path] | None = None
    ca_file: str = ""

    @property
    def grpc_url(self) -> str:
        return f"{'grpcs' if self.tls else 'grpc'}://127.0.0.1:{self.grpc_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def start(self, *, threads: int = 1, wait_s: float = 120.0, python: Path | None = None) -> LocalServer:
        """Start the server in its own process group and wait until its model is ready."""
        python = python or server_python()
        if python is None:
            raise StudioError("no Triton server environment (.venv-triton); run installer/install.sh --triton")
        env = dict(os.environ, PYTHONPATH=str(_studio_only_path()))
        cmd = [str(python), "-m", "studio.engine.triton.server", str(self.repo), "--grpc-port", str(self.grpc_port),
               "--http-port", str(self.http_port), "--metrics-port", str(free_port()), "--threads", str(threads)]
        if self.tls:
            cmd += ["--tls-cert", str(self.tls[0]), "--tls-key", str(self.tls[1])]
        out = open(self.log_file, "ab") if self.log_file else subprocess.DEVNULL  # noqa: SIM115 - owned by the child
        self.process = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                        **new_process_group())
        self.wait_ready(wait_s)
        return self

    def wait_ready(self, wait_s: float) -> None:
        from studio.engine.triton.client import check_servers
        from studio.core.triton_target import TritonTarget

        model = next(self.repo.glob("*/config.pbtxt")).parent.name
        deadline = time.monotonic() + wait_s
        while True:
            if self.process is not None and self.process.poll() is not None:
                tail = self.log_file.read_text(encoding="utf-8", errors="replace")[-2000:] if self.log_file else ""
                raise StudioError(f"the Triton server exited with {self.process.returncode}: {tail}")
            status = check_servers(TritonTarget((self.grpc_url,), ca_file=self.ca_file), model, timeout_s=2.0)[0]
            if status.ready:
                return
            if time.monotonic() > deadline:
                self.stop()
                raise StudioError(f"the Triton server did not get ready in {wait_s:.0f} s ({status.message})")
            time.sleep(0.5)

    def kill(self) -> None:
        """Kill the whole server (Triton and its backend stubs) at once, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            kill_process_group(self.process)
            self.process.wait(30)

    def stop(self, timeout_s: float = 20.0) -> None:
        """Stop politely (SIGTERM to the group, or the tree on Windows), then kill what is left."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            kill_process_group(self.process, polite=True)
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            log.warning("Triton server did not stop in %.0f s; killing it", timeout_s)
        finally:
            kill_process_group(self.process)  # backend stubs left behind, if any
            self.process.wait(30)


def serve_forever(server: LocalServer, threads: int) -> int:
    """``studio triton serve``: start, print the URLs, wait for Ctrl-C, stop."""
    server.start(threads=threads)
    sys.stdout.write(f"serving {server.repo}: {server.grpc_url} (gRPC), {server.http_url} (HTTP); Ctrl-C stops\n")
    sys.stdout.flush()
    try:
        while server.process is not None and server.process.poll() is None:
            time.sleep(1.0)
    finally:
        server.stop()
    return 0


# ------------------------------------------------------------------ settings, connection test


def make_target(servers: str, *, model: str = "", ca_file: str = "", cert_file: str = "", key_file: str = "",
                outage_s: float | None = None, base: Any = None) -> Any:
    """The project's Triton setting from what a person typed (None: render on this
    machine); ``base`` (the current setting) keeps the fields not shown. StudioError
    with the reason for a bad address."""
    from dataclasses import replace

    from studio.core.triton_target import TritonTarget

    urls = tuple(u.strip() for u in servers.replace("\n", ",").split(",") if u.strip())
    if not urls:
        return None
    fields: dict[str, Any] = {"model": model.strip(), "ca_file": ca_file.strip(), "cert_file": cert_file.strip(),
                              "key_file": key_file.strip()}
    if outage_s is not None:
        fields["outage_s"] = float(outage_s)
    return replace(base, servers=urls, **fields) if base is not None else TritonTarget(urls, **fields)


def connection_test(target: Any, voice_id: str, preset: str) -> list[tuple[str, bool, str]]:
    """(url, model ready, what was found) per server of ``target`` (a TritonTarget):
    the desktop settings' "Test connection" and ``studio triton check``."""
    from studio.engine.triton.client import check_servers

    model = target.model or model_name_for(voice_id, preset)
    return [(st.url, st.ready, st.message) for st in check_servers(target, model)]
