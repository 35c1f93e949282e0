"""One render path: the desktop app and ``studio render`` get the same engine stack,
and the sample still sounds as its stored reference render (exact lengths, log-mel
within float noise: bytes differ across CPUs and library versions).

The desktop side is the real :class:`~studio.desktop.render_worker.RenderWorker` (not
started: planning and building need no thread); the CLI side is the real parser and
``render_plan``. Where no GPU exists the CUDA presets are planned and built on a
fake device: ``torch.cuda`` says a device is there, and nothing is loaded on it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from studio.engine.base import SynthesisSettings
from studio.engine.presets import PRESETS
from studio.engine.voice.catalog import get_voice
from studio.stack.build import build_engine
from studio.stack.isolation.engine import IsolatedEngine
from studio.project.opening import new_project_settings, open_for_manuscript
from support.render import REPO
from support.sample_reference import fingerprint, load_reference, render_sample

CUDA_PRESETS = tuple(name for name, p in PRESETS.items() if p.device == "cuda")


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CUDA device for planning and constructing (never loading) the GPU presets."""
    torch = pytest.importorskip("torch", reason="the CUDA presets are torch presets")
    if not torch.cuda.is_available():
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Fake GPU (test)")
        monkeypatch.setattr(torch.version, "cuda", torch.version.cuda or "13.0")


def _stack(engine) -> tuple:  # noqa: ANN001
    """What decides how a render runs: wrapper types, streams, batch size, model process."""
    layers = []
    while engine is not None:
        layers.append(type(engine).__name__)
        engine = getattr(engine, "engine", None)  # BatchedEngine wraps .engine
    return tuple(layers)


@pytest.mark.parametrize("in_process", [False, True], ids=["model-process", "in-process"])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_desktop_and_cli_build_the_same_engine_stack(qtbot, tmp_path: Path, preset: str, in_process: bool,  # noqa: ANN001
                                                     request: pytest.FixtureRequest) -> None:
    from studio.cli import build_parser
    from studio.cli.render import render_plan
    from studio.engine.presets import availability, get_preset
    from studio.stack.build import Isolation
    from studio.desktop.jobqueue import JobQueue
    from studio.desktop.monitor import RenderStats
    from studio.desktop.render_worker import RenderWorker

    if preset in CUDA_PRESETS:
        request.getfixturevalue("fake_cuda")
    p = get_preset(preset)
    settings = new_project_settings(get_voice(None)).with_changes(
        preset=preset, backend="onnx" if p.engine == "onnx" else "torch")
    args = build_parser().parse_args(["render", "book.md", "-o", str(tmp_path)] + (["--in-process"] if in_process else []))
    cli = render_plan(args, settings)

    project = open_for_manuscript(REPO / "resources" / "sample.md", tmp_path / "p.studio", settings).project
    try:
        worker = RenderWorker(project, JobQueue(), RenderStats(), isolation=None if in_process else Isolation())
        desktop = worker.plan_for(project.settings())
    finally:
        project.close()

    assert desktop == cli  # preset, voice, device, streams, batch size, threads, isolation
    assert desktop.device == p.device
    assert desktop.batch_size == (32 if p.device == "cuda" else 8 if p.name in ("fp32-cpu", "int8-cpu", "bf16-cpu") else 1)
    if in_process and not availability(preset).ok:
        pytest.skip(f"{preset} cannot be constructed here: {availability(preset).reason}")
    a, b = build_engine(desktop), build_engine(cli)
    try:
        assert _stack(a) == _stack(b)
        if in_process:
            want = {"fp32-cpu": "MultiStreamEngine", "int8-cpu": "MultiStreamEngine", "bf16-cpu": "MultiStreamEngine"}.get(
                preset, "BatchedEngine" if p.device == "cuda" else None)
            assert want is None or _stack(a)[0] == want
            assert getattr(a, "streams", 1) == getattr(b, "streams", 1) == desktop.streams
            assert getattr(a, "max_batch_size", desktop.batch_size) == desktop.batch_size
        else:
            assert isinstance(a, IsolatedEngine) and isinstance(b, IsolatedEngine)
            assert a.spec == b.spec and a.spec.plan == desktop.in_process()
            assert a.recycle_after == b.recycle_after == 1000
            assert a.child_pid is None  # constructed only: nothing runs until the first sentence
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_benchmark_measures_the_stack_the_app_renders_with(qtbot, tmp_path: Path, preset: str,  # noqa: ANN001
                                                               request: pytest.FixtureRequest) -> None:
    """`studio bench` and "Measure on this machine" plan a preset as the desktop app does
    and build it with build_engine: the model process's stack, layer for layer."""
    from studio.measure.child import bench_plan
    from studio.engine.presets import availability, get_preset
    from studio.stack.build import Isolation
    from studio.desktop.jobqueue import JobQueue
    from studio.desktop.monitor import RenderStats
    from studio.desktop.render_worker import RenderWorker

    if preset in CUDA_PRESETS:
        request.getfixturevalue("fake_cuda")
    p = get_preset(preset)
    settings = new_project_settings(get_voice(None)).with_changes(
        preset=preset, backend="onnx" if p.engine == "onnx" else "torch")
    project = open_for_manuscript(REPO / "resources" / "sample.md", tmp_path / "p.studio", settings).project
    try:
        desktop = RenderWorker(project, JobQueue(), RenderStats(), isolation=Isolation()).plan_for(project.settings())
    finally:
        project.close()
    bench = bench_plan(preset, get_voice(None))
    assert bench == desktop.in_process()  # what the app's model process builds
    if not availability(preset).ok:
        pytest.skip(f"{preset} cannot be constructed here: {availability(preset).reason}")
    a, b = build_engine(bench), build_engine(desktop.in_process())
    try:
        assert _stack(a) == _stack(b)
        assert getattr(a, "streams", 1) == getattr(b, "streams", 1)
    finally:
        a.close()
        b.close()


def test_a_benchmark_child_renders_through_the_built_stack(tmp_path: Path) -> None:
    """The measuring process itself: its engine is build_engine's, its rounds go through
    the render loop's synthesizer (one result per sentence, in order)."""
    from studio.measure.child import PresetSession, bench_plan

    job = {"preset": "fp32-cpu", "voice": None, "language": "en", "streams": 2,
           "settings": {"noise_scale": 0.0, "length_scale": 1.0, "noise_w": 0.0, "speaker_id": None},
           "sentences": ["The lamp turned.", "Twice he thought they would not make it, and then they did."],
           "latency_reps": 1, "latency_budget_s": 0.0, "slow_budget_s": 30.0, "cuda_repeat": 1,
           "batches": [], "sweep_indices": [], "work_dir": str(tmp_path), "options": {}}
    session = PresetSession(job)
    reference = build_engine(bench_plan("fp32-cpu", get_voice(None), streams=2))
    try:
        assert _stack(session.engine) == _stack(reference) and session.engine.streams == 2
        assert session.res["mode"] == "2 streams x 1 thread"
        session.round()
        got = session.audio
        reference.load()
        want = reference.synthesize_batch([reference.text_to_ids(s, "en") for s in job["sentences"]],
                                          SynthesisSettings(noise_scale=0.0, length_scale=1.0, noise_w=0.0))
        assert [len(a) for a in got] == [len(w) for w in want]
        assert all(float(abs(a - w).max()) < 1e-4 for a, w in zip(got, want))
        assert all(s is not None and int(s.sum()) == len(a) for s, a in zip(session.align, got))  # the reference's pauses
        row = session.finish()
    finally:
        reference.close()
    assert row["x_real_time"] > 0 and row["sentences"] == 2 and (tmp_path / "fp32-cpu.npz").is_file()


def test_sample_render_sounds_as_the_reference(tmp_path: Path) -> None:
    """`studio render` of the sample, noise off: every chapter exactly as long as the
    reference render (to the sample) and saying the same thing the same way (its coarse
    log-mel spectrogram within float noise of the stored one, on any CPU)."""
    rate, reference = load_reference()
    got = render_sample(tmp_path)
    assert sorted(got) == sorted(reference)
    for name, audio in got.items():
        samples, logmel = reference[name]
        assert audio.size == samples, name
        mine = fingerprint(audio, rate)
        assert mine.shape == logmel.shape, name
        # float noise across CPUs moves a log-mel bin by ~1e-4; a changed word, voice or
        # pacing moves whole frames by whole units
        assert np.corrcoef(mine.ravel(), logmel.ravel())[0, 1] > 0.999, name
        assert float(np.mean(np.abs(mine - logmel))) < 0.05, name


@pytest.mark.parametrize(("preset", "threshold", "trim", "arenas"), [
    ("fp32-cpu", "33554432", "33554432", "2"), ("fp32-torch", "131072", None, None),
    ("bf16-cpu", "33554432", "33554432", "2")])
def test_the_model_process_runs_with_its_engines_allocator_bounds(preset: str, threshold: str, trim: str | None,
                                                                  arenas: str | None) -> None:
    """The serving presets (ONNX Runtime's windows, the BF16 engine) repeat a few buffer
    sizes: their model process keeps everything below 32 MiB in the heap and the heap's
    top up to 32 MiB (no page faults per window), in two glibc arenas; torch's whole
    sentences, of every size, get the 128 KiB threshold."""
    if preset != "fp32-cpu":
        pytest.importorskip("TTS")
    if preset == "bf16-cpu":
        from studio.engine.presets import availability

        if not availability(preset).ok:
            pytest.skip(availability(preset).reason)
    from studio.stack.build import Isolation, plan_engine

    engine = build_engine(plan_engine(preset, get_voice(None), streams=1, isolation=Isolation()))
    assert isinstance(engine, IsolatedEngine)
    try:
        engine.load()
        environ = Path(f"/proc/{engine.child_pid}/environ").read_bytes().split(b"\0")
    finally:
        engine.close()
    env = dict(item.decode().split("=", 1) for item in environ if b"=" in item)
    assert env.get("MALLOC_MMAP_THRESHOLD_") == threshold
    assert env.get("MALLOC_TRIM_THRESHOLD_") == trim
    assert env.get("MALLOC_ARENA_MAX") == arenas
