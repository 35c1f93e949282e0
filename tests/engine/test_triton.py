"""Rendering on NVIDIA Triton Inference Server, against a real server on 127.0.0.1.

One server (PyTriton, Triton 2.51, the dynamic batcher) serves the exported bundled
voice for the module; the fail-over test starts a second one. The server really
dies (SIGKILL of its process group) and really comes back on the same ports.
"""

from __future__ import annotations

import json
import logging
import socket
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from support.render import studio_cmd
from support.triton import BENCH, MANUSCRIPT, correlation, read_wav, self_signed, start_server

from studio.core.errors import EngineError
from studio.engine.triton.client import TritonEngine, TritonUnavailable
from studio.engine.triton.config import ModelConfig, figures_from_bench, validate_config
from studio.core.triton_target import TritonTarget
from studio.engine.voice.catalog import get_voice
from studio.stack.build import build_engine, plan_for_project
from studio.delivery.export import export_chapter_files
from studio.rendering.render import render_project
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.stack.triton_repository import free_port
from studio.project.store import Project

pytestmark = pytest.mark.timeout(300)

from support.voice import DETERMINISTIC as QUIET


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The bundled voice exported by `studio triton export`, with the figures of :data:`BENCH`."""
    root = tmp_path_factory.mktemp("triton")
    (root / "bench.json").write_text(json.dumps(BENCH), encoding="utf-8")
    done = studio_cmd("triton", "export", "--preset", "fp32-cpu", "-o", str(root / "repo"),
                      "--bench", str(root / "bench.json"))
    assert done.returncode == 0, done.stderr
    assert "validated against Triton's schema" in done.stderr
    return root / "repo", Path(done.stdout.splitlines()[0]).parent.name


@pytest.fixture(scope="module")
def server(repo: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory):
    srv = start_server(repo[0], tmp_path_factory.mktemp("logs"))
    yield srv
    srv.stop()


def _project(tmp_path: Path, name: str, triton: TritonTarget | None = None):
    src = tmp_path / "book.md"
    src.write_text(MANUSCRIPT, encoding="utf-8")
    settings = new_project_settings(get_voice(None)).with_changes(synthesis=QUIET, preset="fp32-cpu", triton=triton)
    return open_for_manuscript(src, tmp_path / f"{name}.studio", settings).project


def _assert_each_sentence_once(folder: Path) -> int:
    """Every sentence done and synthesized exactly once, each with its own cache file."""
    with sqlite3.connect(folder / Project.DB_NAME) as db:
        rows = db.execute("SELECT state, synth_count, cache_key FROM sentences").fetchall()
    assert rows and all(state == "done" for state, _, _ in rows), rows
    assert all(count == 1 for _, count, _ in rows), [r for r in rows if r[1] != 1]
    assert len({key for _, _, key in rows}) == len(rows)
    return len(rows)


# ------------------------------------------------------------------ config and export


def test_config_comes_from_bench_figures_and_passes_tritons_schema() -> None:
    figures = figures_from_bench(BENCH, "fp32-cpu", "cpu")
    cfg = validate_config(ModelConfig("voice.fp32-cpu", figures).to_pbtxt())
    # the sweep: 4.9x at batch 2 is best; 4.6x at 4 is within 85 %, 3.8x at 8 is not
    assert cfg.max_batch_size == 4
    assert list(cfg.dynamic_batching.preferred_batch_size) == [2, 4]
    assert cfg.dynamic_batching.max_queue_delay_microseconds == 20_000  # 10 % of the 0.2 s p50 latency
    assert [(g.count, g.kind) for g in cfg.instance_group] == [(1, 2)]  # KIND_CPU
    assert [i.name for i in cfg.input] == ["phoneme_ids", "phoneme_lengths", "scales"]
    assert [o.name for o in cfg.output] == ["audio", "audio_lengths"]

    plan = validate_config(ModelConfig("voice.fp16-cuda", figures_from_bench(None, "fp16-cuda", "cuda"),
                                       platform="tensorrt_plan").to_pbtxt())
    assert plan.optimization.cuda.graphs and plan.instance_group[0].kind == 1  # KIND_GPU
    fp16 = validate_config(ModelConfig("v", figures_from_bench(None, "fp16-cuda", "cuda"), fp16=True).to_pbtxt())
    assert fp16.optimization.execution_accelerators.gpu_execution_accelerator[0].name == "tensorrt"


@pytest.mark.parametrize("breakage, message", [
    (("max_queue_delay_microseconds", "max_queue_delay_ms"), "schema"),
    (("KIND_CPU", "KIND_TPU"), "schema"),
    (("max_batch_size: 4", "max_batch_size: 1"), "preferred batch size"),
    (("TYPE_FP32 dims: [ 3 ]", "TYPE_FP16 dims: [ 3 ]"), "scales"),
])
def test_a_broken_config_is_refused(breakage: tuple[str, str], message: str) -> None:
    text = ModelConfig("v", figures_from_bench(BENCH, "fp32-cpu", "cpu")).to_pbtxt()
    assert breakage[0] in text
    with pytest.raises(EngineError, match=message):
        validate_config(text.replace(*breakage))


def test_export_writes_a_repository(repo: tuple[Path, str]) -> None:
    folder = repo[0] / repo[1]
    assert repo[1] == "en_US-joe-medium.fp32-cpu"
    assert (folder / "1" / "model.onnx").stat().st_size > 1_000_000
    cfg = validate_config((folder / "config.pbtxt").read_text(encoding="utf-8"))
    assert cfg.name == repo[1] and cfg.max_batch_size == 4


# ------------------------------------------------------------------ against a real server


@pytest.mark.parametrize("protocol", ["grpc", "http"])
def test_triton_engine_speaks_like_the_local_engine(server, repo, onnx_engine, protocol: str) -> None:
    texts = ["Hello there.", "A longer sentence, with clauses, to check padding and cropping.", "Short."]
    ids = [onnx_engine.text_to_ids(t, "en") for t in texts]
    local = onnx_engine.synthesize_batch(ids, QUIET)
    url = server.grpc_url if protocol == "grpc" else server.http_url
    engine = TritonEngine(get_voice(None).config_path, TritonTarget((url,), batch=8), repo[1])
    try:
        engine.load()
        assert engine.batch == 4  # capped by the server's max_batch_size
        remote = engine.synthesize_batch(ids, QUIET)
    finally:
        engine.close()
    for a, b in zip(remote, local):
        assert len(a) == len(b)
        assert correlation(a, b) >= 0.999


def test_the_connection_test_asks_each_server(server, repo) -> None:
    from studio.stack.triton_repository import connection_test, make_target

    dead = f"grpc://127.0.0.1:{free_port()}"
    target = make_target(f"{server.grpc_url}, {server.http_url}, {dead}")
    rows = connection_test(target, "en_US-joe-medium", "fp32-cpu")
    assert [(url, ok) for url, ok, _ in rows] == [(server.grpc_url, True), (server.http_url, True), (dead, False)]
    assert "max batch size 4" in rows[0][2] and "not reachable" in rows[2][2]
    wrong = connection_test(make_target(server.grpc_url, model="no-such-model"), "v", "p")
    assert wrong[0][1] is False and "not ready" in wrong[0][2]
    with pytest.raises(EngineError, match="no Triton server has model"):
        TritonEngine(get_voice(None).config_path, make_target(server.grpc_url), "no-such-model").load()


def test_server_errors_and_timeouts_are_retried_then_the_sentence_fails(server, repo, caplog) -> None:
    caplog.set_level(logging.INFO, logger="studio.engine.triton")
    voice = get_voice(None)
    engine = TritonEngine(voice.config_path, TritonTarget((server.grpc_url,), retries=2, max_backoff_s=0.2), repo[1])
    try:
        engine.load()
        with pytest.raises(EngineError, match="failed after 3 tries") as err:
            engine.synthesize_batch([[1, 10**6, 2]], QUIET)  # an id the voice does not have: the model fails
        assert caplog.text.count("retrying (") == 2
        assert "render paused" not in caplog.text  # the server answered: no outage
        assert "Triton" in str(err.value)
    finally:
        engine.close()
    hurried = TritonEngine(voice.config_path, TritonTarget((server.grpc_url,), timeout_s=0.001, retries=1,
                                                           max_backoff_s=0.2), repo[1])
    try:
        with pytest.raises(EngineError, match="failed after 2 tries.*(DEADLINE|[Dd]eadline)"):
            hurried.synthesize_batch([[1, 20, 2]], QUIET)
    finally:
        hurried.close()


def test_a_chapter_rendered_through_triton_equals_the_local_render(server, onnx_engine, tmp_path: Path) -> None:
    local = _project(tmp_path, "local")
    try:
        render_project(local, onnx_engine)
        files = export_chapter_files(local, tmp_path / "local-wav", "wav", engine=onnx_engine)
    finally:
        local.close()
    _project(tmp_path, "remote").close()
    done = studio_cmd("render", str(tmp_path / "remote.studio"), "-o", str(tmp_path / "remote-wav"),
                      "--format", "wav", "--triton", server.grpc_url, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "on Triton" in done.stderr
    assert files
    for f in files:
        a, b = read_wav(f.path), read_wav(tmp_path / "remote-wav" / f.path.name)
        assert len(a) == len(b)
        assert correlation(a, b) >= 0.999
    _assert_each_sentence_once(tmp_path / "remote.studio")


def _free_port_reading_400() -> int:
    """A free port whose digits start with 400, as a refused connection's text then holds "400"."""
    for port in range(40000, 40100):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip("no free port in 40000-40099")


@pytest.mark.parametrize("port", [free_port, _free_port_reading_400], ids=["any-port", "port-400xx"])
def test_all_servers_down_fails_the_sentences_with_the_reason(tmp_path: Path, port) -> None:  # noqa: ANN001
    target = TritonTarget((f"grpc://127.0.0.1:{port()}",), outage_s=1.0, max_backoff_s=0.2, batch=2)
    project = _project(tmp_path, "down", target)
    started = time.monotonic()
    try:
        engine = build_engine(plan_for_project(project.settings()))
        assert isinstance(engine, TritonEngine)
        with pytest.raises(TritonUnavailable, match="no Triton server answered"):
            engine.synthesize_batch([[1, 2, 3]], QUIET)
        result = render_project(project, engine, batch_size=4)
        rows = project.sentences()
    finally:
        project.close()
    assert result.failed == len(rows)
    assert all("no Triton server answered" in (r.reason or "") for r in rows)
    assert time.monotonic() - started < 30  # after one outage, later requests fail fast


def _render_killing(project, engine, kill, after: int = 2) -> tuple[object, list[str]]:
    """Render ``project``; call ``kill()`` once ``after`` sentences are done."""
    events: list[str] = []

    def progress(p) -> None:
        if p.done >= after and not events:
            events.append(f"killed at {p.done}/{p.total}")
            kill()

    result = render_project(project, engine, progress=progress, batch_size=4)
    return result, events


def test_a_killed_server_pauses_the_render_which_resumes_when_it_is_back(
        server, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="studio.engine.triton")
    target = TritonTarget((server.grpc_url,), batch=2, in_flight=2, outage_s=120, max_backoff_s=1.0)
    project = _project(tmp_path, "killed", target)
    restarted: list[BaseException | None] = []

    def kill() -> None:
        server.kill()

        def restart() -> None:
            time.sleep(1.0)
            try:
                server.start(wait_s=120)
                restarted.append(None)
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                restarted.append(exc)

        threading.Thread(target=restart, daemon=True).start()

    try:
        engine = build_engine(plan_for_project(project.settings()))
        try:
            result, events = _render_killing(project, engine, kill)
        finally:
            engine.close()
    finally:
        project.close()
    assert events and restarted == [None]
    assert result.failed == 0 and result.done == result.total
    assert caplog.text.count("render paused: no Triton server answers") == 1
    assert caplog.text.count("render resumed on Triton server") == 1
    _assert_each_sentence_once(tmp_path / "killed.studio")


def test_with_two_servers_the_render_finishes_on_the_other(server, repo, tmp_path: Path) -> None:
    """The second server speaks gRPC over TLS (the project's CA setting), the first plain HTTP."""
    cert, key = self_signed(tmp_path)
    second = start_server(repo[0], tmp_path, tls=(cert, key))
    assert second.grpc_url.startswith("grpcs://")
    target = TritonTarget((second.grpc_url, server.http_url), ca_file=str(cert), batch=2, in_flight=2, outage_s=60,
                          max_backoff_s=1.0)
    project = _project(tmp_path, "failover", target)
    try:
        engine = build_engine(plan_for_project(project.settings()))
        try:
            result, events = _render_killing(project, engine, second.kill)
            served = [s.served for s in engine.rotation.servers]
        finally:
            engine.close()
    finally:
        project.close()
        second.stop()
    assert events and result.failed == 0 and result.done == result.total
    assert served[0] > 0 and served[1] > 0, served  # requests were spread, then went to the survivor
    assert _assert_each_sentence_once(tmp_path / "failover.studio") == result.total
    assert np.isfinite(result.audio_seconds) and result.audio_seconds > 0
