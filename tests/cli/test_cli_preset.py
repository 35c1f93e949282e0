"""``studio render --preset``: every preset renders or says in one line why it cannot,
the preset is stored in the project and keys the audio cache, and the CPU presets
render through the multi-stream path.

The CLI tests run ``python -m studio`` for real on tiny manuscripts; the rules of
:mod:`studio.stack.preset_choice` and :mod:`studio.stack.build` are checked directly on real projects.
"""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import PresetUnavailable, StudioError
from studio.engine.base import SynthesisSettings
from studio.engine.presets import availability
from studio.engine.voice.catalog import get_voice
from studio.engine.serving.streams import MultiStreamEngine
from studio.stack.build import build_engine, effective_preset, engine_spec, plan_engine
from studio.stack.preset_choice import check_choice, choose_preset
from studio.stack.preset_speed import TRIALS_ENV
from studio.project.opening import apply_choices, new_project_settings
from studio.project.store import Project
from support.render import make_book, studio_cmd
from support.trials import measured

CUDA_PRESETS = ("fp16-cuda", "tensorrt-int8")


def tiny(path: Path, sentences: str = "The lamp was lit. The sea was calm, and the night was long.") -> Path:
    path.write_text(f"# Tiny\n\n## One\n\n{sentences}\n", encoding="utf-8")
    return path


def settings_of(project: Path) -> dict[str, str]:
    conn = sqlite3.connect(f"file:{project / 'project.sqlite'}?mode=ro", uri=True)
    try:
        return {k: v.strip('"') for k, v in conn.execute("SELECT key, value FROM settings WHERE key IN ('preset', 'backend')")}
    finally:
        conn.close()


def keys_of(project: Project) -> list[str]:
    return [r.expected_key for r in project.sentences()]


@pytest.fixture
def project(tmp_path: Path):
    p = Project.create(tmp_path / "p.studio", make_book(), new_project_settings(get_voice(None)))
    yield p
    p.close()


# ------------------------------------------------------------------ rules


def test_new_project_names_its_preset_and_presets_key_the_cache(project: Project) -> None:
    settings = project.settings()
    assert settings.preset == "" and effective_preset(settings).name == "fp32-cpu"
    settings = choose_preset(project, settings)  # nothing cached yet: the default is named
    assert (settings.preset, settings.backend) == ("fp32-cpu", "onnx")
    fp32_keys = keys_of(project)

    settings = choose_preset(project, settings, "int8-cpu")
    assert (project.settings().preset, project.settings().backend) == ("int8-cpu", "onnx")
    int8_keys = keys_of(project)
    assert not set(fp32_keys) & set(int8_keys), "another preset must be another cache entry"

    settings = choose_preset(project, settings, "fp32-torch")
    assert (settings.preset, settings.backend) == ("fp32-torch", "torch")
    settings = choose_preset(project, settings, "fp32-cpu")
    assert keys_of(project) == fp32_keys  # back to the first preset: the same keys, cached audio reused

    settings = choose_preset(project, settings, "dynamic-int8")
    settings = apply_choices(project, backend="onnx")  # `--engine onnx` alone, as the CLI applies it
    settings = choose_preset(project, settings, engine="onnx")
    assert (settings.preset, settings.backend) == ("fp32-cpu", "onnx")  # that backend's default


def test_a_preset_asked_for_is_kept_where_another_is_measured_faster(project: Project, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TRIALS_ENV, str(tmp_path / "trials"))
    measured(None, {"fp32-cpu": 0.09, "int8-cpu": 0.07})  # int8-cpu measured fastest here
    settings = choose_preset(project, project.settings(), "fp32-cpu")  # `studio render --preset fp32-cpu`
    assert (settings.preset, project.settings().preset) == ("fp32-cpu", "fp32-cpu")
    assert effective_preset(settings).name == "fp32-cpu"
    settings = choose_preset(project, settings.with_changes(preset=""))  # none asked for: the measured one
    assert settings.preset == "int8-cpu"


def test_project_with_audio_and_no_preset_keeps_its_keys(project: Project) -> None:
    before = keys_of(project)
    row = project.sentences()[0]
    entry = project.cache.store(row.expected_key, np.zeros(100, np.float32), 22050)
    project.mark_done(row.id, entry, synthesized=True)
    settings = choose_preset(project, project.settings())
    assert settings.preset == "" and keys_of(project) == before  # renders as fp32-cpu, nothing re-renders
    settings = choose_preset(project, settings, "fp32-cpu")  # what it already renders with: no change
    assert settings.preset == "" and keys_of(project) == before
    settings = choose_preset(project, settings, "int8-cpu")
    assert settings.preset == "int8-cpu" and keys_of(project) != before


def test_unavailable_and_conflicting_choices_are_refused(project: Project) -> None:
    for name in CUDA_PRESETS:
        ok, why, _missing = availability(name)
        if ok:
            continue
        with pytest.raises(PresetUnavailable) as err:
            check_choice(name, None)
        assert str(err.value) == f"preset {name} is unavailable: {why}"
        # a project made on a GPU machine, opened here
        project.update_settings(project.settings().with_changes(preset=name, backend="torch"))
        with pytest.raises(PresetUnavailable, match=f"preset {name} is unavailable: "):
            choose_preset(project, project.settings())
    with pytest.raises(StudioError, match="does not fit preset int8-cpu"):
        check_choice("int8-cpu", "torch")
    with pytest.raises(StudioError, match="--streams 0"):
        check_choice(None, None, 0)
    with pytest.raises(PresetUnavailable, match="unknown preset 'turbo'"):
        check_choice("turbo", None)


def test_render_paths_per_preset() -> None:
    def batch(preset: str, streams: int | None = None) -> int:
        return plan_engine(preset, streams=streams).batch_size

    assert batch("fp32-cpu", 2) == 8 and batch("int8-cpu", 3) == 12
    assert batch("fp32-torch") == 1 and batch("dynamic-int8") == 1
    assert batch("fp16-cuda") == 32 and batch("tensorrt-int8") == 32
    spec = engine_spec(plan_engine("int8-cpu", get_voice(None), streams=2))
    again = pickle.loads(pickle.dumps(spec))  # travels to the spawned model process
    assert again == spec and again.plan.streams == 2 and again.label == "int8-cpu"


def test_multi_stream_engine_returns_each_item_in_order() -> None:
    from studio.engine.presets import open_preset

    settings = SynthesisSettings(noise_scale=0.0, length_scale=1.0, noise_w=0.0)
    texts = ["Yes.", "The lamp turned, steady as a heartbeat, across the water.", "No, not yet."]
    with build_engine(plan_engine("fp32-cpu", streams=2)) as multi:
        assert isinstance(multi, MultiStreamEngine)
        ids = [multi.text_to_ids(t, "en") for t in texts]
        got = multi.synthesize_batch(ids, settings)
        assert multi.name == "fp32-cpux2" and "2 stream(s) x 1 thread" in multi.describe()
    single = open_preset("fp32-cpu", threads=1)
    with single:
        want = [single.synthesize_batch([x], settings)[0] for x in ids]
    assert [a.size for a in got] == [a.size for a in want]
    for a, b in zip(got, want):
        assert np.allclose(a, b, atol=1e-4)


# ------------------------------------------------------------------ the real CLI


def render(ms: Path, out: Path, *extra: str, timeout: int = 300):
    return studio_cmd("render", str(ms), "-o", str(out), "--format", "wav", *extra, timeout=timeout)


@pytest.mark.slow
def test_cli_cpu_presets_render_through_streams_and_switching_back_reuses_audio(tmp_path: Path) -> None:
    ms = tiny(tmp_path / "tiny.md")
    out = tmp_path / "out"
    project = out / "tiny.studio"

    first = render(ms, out, "--streams", "2")  # no --preset: fp32-cpu
    assert first.returncode == 0, first.stderr
    assert "studio: preset fp32-cpu: 2 stream(s) x 1 thread" in first.stderr
    assert "3 synthesized" in first.stdout and (out / "01 - One.wav").is_file()
    assert settings_of(project) == {"preset": "fp32-cpu", "backend": "onnx"}

    int8 = render(ms, out, "--preset", "int8-cpu", "--streams", "2")
    assert int8.returncode == 0, int8.stderr
    assert "studio: preset int8-cpu: 2 stream(s) x 1 thread" in int8.stderr
    assert "3 synthesized" in int8.stdout and "0 from cache" in int8.stdout  # other cache entries
    assert settings_of(project) == {"preset": "int8-cpu", "backend": "onnx"}

    back = render(ms, out, "--preset", "fp32-cpu")
    assert back.returncode == 0, back.stderr
    assert "0 synthesized" in back.stdout and "3 from cache" in back.stdout
    assert settings_of(project)["preset"] == "fp32-cpu"


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["fp32-torch", "dynamic-int8"])
def test_cli_torch_presets_render(tmp_path: Path, preset: str) -> None:
    ok, why, _missing = availability(preset)
    if not ok:
        pytest.skip(why)
    ms = tiny(tmp_path / "short.md", "Yes.")
    proc = render(ms, tmp_path / "out", "--preset", preset)
    assert proc.returncode == 0, proc.stderr
    assert f"studio: preset {preset}: one sentence at a time" in proc.stderr
    assert "2 synthesized" in proc.stdout and (tmp_path / "out" / "01 - One.wav").is_file()
    assert settings_of(tmp_path / "out" / "short.studio") == {"preset": preset, "backend": "torch"}


@pytest.mark.parametrize("preset", CUDA_PRESETS)
def test_cli_unavailable_preset_is_one_line_exit_2(tmp_path: Path, preset: str) -> None:
    ok, why, _missing = availability(preset)
    if ok:
        pytest.skip(f"{preset} runs here")
    proc = render(tiny(tmp_path / "tiny.md"), tmp_path / "out", "--preset", preset, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [f"studio: error: preset {preset} is unavailable: {why}"]
    assert not (tmp_path / "out").exists(), "no project is made for a preset that cannot run"


def test_cli_engine_that_does_not_fit_the_preset(tmp_path: Path) -> None:
    proc = render(tiny(tmp_path / "tiny.md"), tmp_path / "out", "--preset", "int8-cpu", "--engine", "torch")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "studio: error: --engine torch does not fit preset int8-cpu (it runs on onnx); leave out --engine"
    ]
