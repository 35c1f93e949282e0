"""``studio bench``: whole processes on long prose first (:mod:`studio.measure.whole`), then
every preset this machine can run, measured the same way, against the ``piper`` command
line on the same text and voice.

How: each preset runs in its own spawned process (so memory, first-call time and
imports of one preset never leak into another), kept alive for the whole run. Round 1
loads every preset and times it once; further rounds (``rounds``, default 3) time the
piper CLI and every fast preset once each, interleaved, as long as the time budget
allows, and the median round is reported: on a shared machine the neighbours' load
moves single runs by tens of percent, and interleaving spreads it over all rows.

What is measured, per preset:

* **latency** of one sentence (:data:`LATENCY_SENTENCE`) on the preset's render
  stack, built by :func:`~studio.stack.build.build_engine` from the plan the app
  renders with (:func:`~studio.measure.child.bench_plan`): load time, first call, then
  repeated calls (p50 / p95).
* **throughput** on a book-like text (the English sentences of
  ``resources/sample.md``) through the same stack and the render loop's synthesizer
  (:func:`~studio.rendering.synthesizer.each_synthesizer`, in the plan's batches): N
  single-thread streams for ``fp32-cpu`` / ``int8-cpu``, length-bucketed batches for
  the CUDA presets, one sentence at a time for the torch CPU presets. Timed region:
  front end + synthesis of every sentence, engines loaded and warmed up. Slow presets (torch on a small CPU) render the text
  from the start until their time budget is spent; the row says how many sentences.
* **speed vs batch size** (:class:`~studio.engine.serving.batched.BatchedEngine`) on a few
  sentences, where batching applies (ONNX Runtime on CPU, the CUDA presets).
* **memory**: peak RSS of the preset's process and its children (sampled every
  0.1 s by the parent, psutil); on CUDA resident / peak VRAM
  (:func:`~studio.engine.cuda_info.vram_stats`).
* **quality** against FP32 (``fp32-cpu``) on the same sentences: log-mel correlation
  (lowest sentence), noise floor in pauses, duration difference
  (:mod:`studio.measure.quality`) and word error rate by pocketsphinx
  (:mod:`studio.measure.asr`, on a subset: it runs at about real time on a busy
  2-core CPU).

Everything, the ``piper`` row included (``--noise-scale 0 --noise-w-scale 0``), is
synthesized at noise 0 with the voice's length scale: deterministic audio, so quality
is comparable and every row speaks the same durations.

The ``piper`` row runs the ``piper`` console script of piper-tts once on the whole
text (one sentence per line on stdin, one process, ONNX Runtime's default threads)
and once on one word; their difference is its steady throughput without start-up
(import + model load). Ratios use the steady figure -- the harder comparison, since
the studio rows exclude model loading too.

Layout: this module holds the configuration and the orchestration (:func:`run_bench`);
its parts are imported from where they are defined: :mod:`studio.measure.child` (a preset in its own process),
:mod:`studio.measure.piper_cli` (the piper row), :mod:`studio.measure.machine` (machine
description, load and memory sampling), :mod:`studio.measure.scoring` (quality vs FP32)
and :mod:`studio.measure.targets` (the verdicts).
"""


from __future__ import annotations

import json
import logging
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from studio.core.system import load_average
from studio.measure.child import LATENCY_SENTENCE, BenchCancelled, ChildFailed, PresetChild
from studio.measure.machine import LoadMonitor, describe_machine, machine_info
from studio.measure.piper_cli import piper_rows, run_piper_cli
from studio.measure.scoring import REFERENCE_PRESET, Transcripts, quality_vs_reference
from studio.measure.targets import targets
from studio.measure.whole import whole_process
from studio.core.errors import StudioError
from studio.core.paths import cache_dir

log = logging.getLogger(__name__)

SCHEMA = "studio-bench/1"
SAMPLE_TEXT = Path(__file__).resolve().parents[2] / "resources" / "sample.md"
BENCH_NAME = "bench.json"


@dataclass
class BenchConfig:
    """What one ``studio bench`` run measures. :meth:`full` / :meth:`quick` are the presets."""

    presets: list[str] | None = None
    out_dir: Path = Path("bench-results")
    quick: bool = False
    #: sentences of the book text (the English ones of resources/sample.md, in order)
    sentences: int = 36
    text_path: Path | None = None
    #: timed rounds of the whole text, interleaved (piper, then each fast preset), median shown
    rounds: int = 3
    #: no further round starts when it would end the measurements past this many seconds
    time_budget_s: float = 420.0
    child_timeout_s: float = 900.0
    streams: int | None = None
    latency_reps: int = 12
    latency_budget_s: float = 12.0
    #: wall seconds of throughput a one-sentence-at-a-time CPU preset may spend
    slow_budget_s: float = 30.0
    #: batch sizes of the speed-vs-batch sweep (CPU / CUDA) and its sentences
    cpu_batches: tuple[int, ...] = (1, 2, 4)
    cuda_batches: tuple[int, ...] = (1, 4, 8, 16, 32, 64)
    sweep_sentences: int = 4
    #: the text is repeated this many times on CUDA (one pass takes well under a second)
    cuda_repeat: int = 8
    #: sentences scored by speech recognition (0: no WER)
    wer_sentences: int = 5
    piper: bool = True
    #: pairs of whole processes (studio render, piper) per CPU stream preset on long prose; 0: none
    whole_pairs: int = 3
    voice: str | None = None
    copy_to_cache: bool = True
    plots: bool = True
    #: extra open_preset keywords per preset, e.g. {"int8-cpu": {"cache_dir": ...}}
    preset_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def quick_config(cls, **kw: Any) -> "BenchConfig":
        base = dict(
            quick=True, rounds=1, sentences=3, latency_reps=3, latency_budget_s=3.0, slow_budget_s=8.0,
            cpu_batches=(1, 2), cuda_batches=(1, 8), sweep_sentences=2, cuda_repeat=2, wer_sentences=1,
            whole_pairs=0,
        )
        base.update(kw)
        return cls(**base)


# ------------------------------------------------------------------ text


def book_sentences(path: Path | None = None, count: int = 36, language: str = "en") -> list[str]:
    """The first ``count`` speakable sentences in ``language`` of the manuscript."""
    from studio.text.importer import load_manuscript

    path = Path(path) if path else SAMPLE_TEXT
    if not path.is_file():
        raise StudioError(f"{path}: benchmark text not found; give one with --text")
    book = load_manuscript(path)
    out = [
        s.text.strip()
        for c in book.chapters
        for p in c.paragraphs
        for s in p.sentences
        if s.language.split("_")[0].lower() == language and any(ch.isalnum() for ch in s.text)
    ]
    if not out:
        raise StudioError(f"{path}: no {language!r} sentences to benchmark")
    return out[:count]


def spread(n: int, k: int) -> list[int]:
    """``k`` indices spread evenly over ``range(n)`` (all of them when ``k >= n``)."""
    if k <= 0 or n <= 0:
        return []
    if k >= n:
        return list(range(n))
    return sorted({int(round(i * (n - 1) / (k - 1))) if k > 1 else 0 for i in range(k)})


# ------------------------------------------------------------------ the run


def select_presets(names: Sequence[str] | None) -> tuple[list[str], dict[str, str]]:
    """(presets to run, in table order; {unavailable preset: reason}) for this machine."""
    from studio.engine.presets import PRESETS, availability, get_preset

    wanted = [get_preset(n).name for n in names] if names else list(PRESETS)
    run: list[str] = []
    unavailable: dict[str, str] = {}
    for name in PRESETS:  # display order; unknown names were refused by get_preset
        if name not in wanted:
            continue
        try:
            ok, why, _missing = availability(name)
        except Exception as exc:  # noqa: BLE001 - a broken optional install
            ok, why = False, f"{type(exc).__name__}: {exc}"
        if ok:
            run.append(name)
        else:
            unavailable[name] = why
    return run, unavailable


def run_bench(config: BenchConfig, progress: Callable[[str], None] | None = None, *,
              step: Callable[[str, int, int], None] | None = None,
              stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Measure, compare, judge and write ``bench.json`` / ``bench.md`` / plots; return the result.

    ``step(preset, n, of)`` is called as each preset's process starts (the app's "2 of 3");
    ``stop()`` True cancels: :class:`BenchCancelled` within a fraction of a second, the
    preset processes killed, nothing written.
    """
    from studio.engine.presets import get_preset
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.config import VoiceConfig

    say = progress or (lambda _msg: None)
    started = time.perf_counter()
    load_start = load_average()
    voice = get_voice(config.voice)
    if not voice.abilities.piper_cli:
        raise StudioError(f"studio bench compares against the piper CLI, which cannot speak {voice.id}")
    voice_config = VoiceConfig.from_file(voice.config_path)
    language = voice.language_family
    sentences = book_sentences(config.text_path, config.sentences, language)
    from studio.measure.quality import PauseIds

    pause_ids = PauseIds.from_id_map(voice_config.phoneme_id_map)
    defaults = voice_config.default_settings
    settings = {"noise_scale": 0.0, "length_scale": defaults.length_scale, "noise_w": 0.0,
                "speaker_id": defaults.speaker_id}

    run, unavailable = select_presets(config.presets)
    requested = list(run)
    if run and REFERENCE_PRESET not in run:
        run.insert(0, REFERENCE_PRESET)  # the quality reference
    for name, why in unavailable.items():
        say(f"{name}: unavailable: {why}")
    children: dict[str, PresetChild] = {}
    machine = machine_info()
    monitor = LoadMonitor().start()
    out_dir = Path(config.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "schema": SCHEMA,
        "measured_at": datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds"),
        "machine": machine,
        "machine_description": describe_machine(machine),
        "quick": config.quick,
        "voice": {"id": voice.id, "model": voice.model_path.name, "sample_rate": voice.sample_rate},
        "settings": settings,
        "text": {
            "source": str(config.text_path or "resources/sample.md"), "sentences": len(sentences),
            "characters": sum(len(s) for s in sentences), "language": language,
            "latency_sentence": LATENCY_SENTENCE,
        },
        "rounds": config.rounds,
        "presets": {},
        "unavailable": unavailable,
        "requested": requested,
    }
    try:
        with tempfile.TemporaryDirectory(prefix="studio-bench-") as work:
            piper_runs: list[tuple[dict[str, Any], dict[str, Any]]] = []
            piper_error: list[str] = []

            def piper_round() -> None:
                if not config.piper or piper_error:
                    return
                try:
                    startup = run_piper_cli(voice.model_path, voice.config_path, ["Hi."],
                                            length_scale=defaults.length_scale, monitor=monitor)
                    total = run_piper_cli(voice.model_path, voice.config_path, sentences,
                                          length_scale=defaults.length_scale, monitor=monitor)
                    piper_runs.append((startup, total))
                except (OSError, StudioError) as exc:
                    piper_error.append(str(exc))

            if config.piper and config.whole_pairs > 0:  # the leading table: whole processes on long prose
                result["whole_process"] = whole_process(config.text_path, voice, [n for n in run if get_preset(n).cpu_streams],
                                                        config.whole_pairs, Path(work), say)
            if config.piper:
                say("piper CLI: start-up run, then the whole text")
            piper_round()
            rows: dict[str, dict[str, Any]] = {}
            first_round: dict[str, float] = {}
            sweep_indices = _sweep_indices(sentences, config.sweep_sentences)
            try:
                # round 1: each preset in its own process (load, latency, the whole text once)
                for n, name in enumerate(run, 1):
                    _check_stop(stop)
                    if step is not None:
                        step(name, n, len(run))
                    preset = get_preset(name)
                    job = {
                        "preset": name, "voice": config.voice, "settings": settings, "language": language,
                        "sentences": sentences, "latency_reps": config.latency_reps,
                        "latency_budget_s": config.latency_budget_s, "slow_budget_s": config.slow_budget_s,
                        "streams": config.streams, "batches": list(_batches_for(name, preset, config)),
                        "sweep_indices": sweep_indices, "cuda_repeat": config.cuda_repeat, "work_dir": work,
                        "options": dict(config.preset_options.get(name, {})),
                    }
                    say(f"{name}: loading, latency, first round ({preset.engine}, {preset.device}, {preset.precision})")
                    child = children[name] = PresetChild(job, monitor, stop)
                    try:
                        first_round[name] = child.wait(config.child_timeout_s)["seconds"]
                        say(f"{name}: first round {first_round[name]:.1f} s")
                    except ChildFailed as exc:
                        rows[name] = {"preset": name, "error": str(exc)}
                        children.pop(name).close()
                        say(f"{name}: error: {exc}")
                # more rounds, interleaved (every row once per round), while the time budget allows
                again = [n for n in children if get_preset(n).cpu_streams or get_preset(n).device == "cuda"]
                cost = sum(first_round.get(n, 0.0) for n in again)
                cost += sum(s["seconds"] + t["seconds"] for s, t in piper_runs[:1])
                for r in range(1, max(1, config.rounds)):
                    _check_stop(stop)
                    if not (again or piper_runs):
                        break
                    if time.perf_counter() - started + cost > config.time_budget_s:
                        result["rounds_note"] = (f"{r} of {config.rounds} rounds: the next one would have run past "
                                                 f"the {config.time_budget_s:g} s time budget")
                        say(result["rounds_note"])
                        break
                    say(f"round {r + 1} of {config.rounds}: " + ", ".join((["piper CLI"] if piper_runs else []) + again))
                    t = time.perf_counter()
                    piper_round()
                    for name in list(again):
                        try:
                            children[name].request("round", config.child_timeout_s)
                        except ChildFailed as exc:
                            rows[name] = {"preset": name, "error": str(exc)}
                            children.pop(name).close()
                            again.remove(name)
                    cost = time.perf_counter() - t
                # finish: batch sweeps, figures, audio for the quality comparison
                for name in list(children):
                    child = children[name]  # closed by the finally below if this request is cancelled
                    try:
                        if get_preset(name).device == "cuda" or get_preset(name).engine == "onnx":
                            say(f"{name}: batch sweep")
                        row = child.request("finish", config.child_timeout_s)
                    except ChildFailed as exc:
                        row = {"preset": name, "error": str(exc)}
                    row["rss_peak_bytes"] = child.peak_rss
                    children.pop(name).close()
                    row["added_as_reference"] = name not in requested
                    if not row.get("error") and not row.get("batch_sweep"):
                        row["batch_sweep_note"] = "skipped: a torch CPU preset speaks one sentence at a time (time budget)"
                    rows[name] = row
                    say(f"{name}: " + (f"error: {row['error']}" if row.get("error") else
                                       f"{row['x_real_time']:.2f}x real time (median of {row['rounds']} round(s)), "
                                       f"{row['sentences']} sentences"))
            finally:
                for child in children.values():
                    child.close()
            result["presets"] = {n: rows[n] for n in run if n in rows}
            if piper_runs:
                result["piper_cli"] = piper_rows(piper_runs)
            elif piper_error:
                result["piper_cli"] = {"error": piper_error[0]}
            # quality against the reference, then speech recognition
            ref_ok = REFERENCE_PRESET in result["presets"] and not result["presets"][REFERENCE_PRESET].get("error")
            transcripts = Transcripts(voice.sample_rate) if config.wer_sentences > 0 else None
            wer_indices = spread(len(sentences), config.wer_sentences)
            for name, row in result["presets"].items():
                _check_stop(stop)
                if row.get("error"):
                    continue
                if not ref_ok:
                    row["quality"] = {"error": f"no {REFERENCE_PRESET} reference"}
                    continue
                say(f"{name}: quality vs {REFERENCE_PRESET}" + (" (and word error rate)" if transcripts else ""))
                q = quality_vs_reference(name, Path(work), sentences, pause_ids, voice.sample_rate,
                                         wer_indices, transcripts)
                row["quality"] = q
                # flat copies for readers of the machine-wide file (the GUI's preset picker)
                row["log_mel_correlation"] = q.get("log_mel_correlation")
                row["noise_floor_dbfs"] = q.get("noise_floor_dbfs")
                row["wer"] = q.get("wer")
            if transcripts is not None:
                result["asr_seconds"] = transcripts.seconds
    finally:
        monitor.stop()
    _ratios(result)
    result["targets"] = targets(result)
    result["load_average"] = {
        "start": list(load_start), "end": list(load_average()),
        "mean_1min": statistics.fmean(monitor.loads) if monitor.loads else None,
        "max_1min": max(monitor.loads) if monitor.loads else None,
    }
    result["duration_s"] = time.perf_counter() - started
    result["recommendation"] = recommendation(result)
    write_outputs(result, out_dir, plots=config.plots)
    if config.copy_to_cache:
        result_path = copy_to_cache(out_dir / BENCH_NAME)
        result["cache_copy"] = str(result_path) if result_path else None
    return result


def recommendation(result: dict[str, Any]) -> dict[str, str]:
    """The preset to use here by these figures: the desktop's own rule
    (:func:`studio.stack.preset_advice.recommend`) on every preset's availability here."""
    from studio.engine.presets import available_presets
    from studio.stack.preset_advice import bench_facts, recommend

    rec = recommend(bench_facts(result, {n: got.ok for n, got in available_presets().items()}))
    return {"preset": rec.preset, "why": rec.why}


def _check_stop(stop: Callable[[], bool] | None) -> None:
    if stop is not None and stop():
        raise BenchCancelled("measuring was cancelled")


def _sweep_indices(sentences: Sequence[str], k: int) -> list[int]:
    """``k`` mid-length sentences (batching is about similar lengths, not outliers)."""
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    mid = len(order) // 2
    lo = max(0, mid - k // 2)
    return sorted(order[lo: lo + k])


def _batches_for(name: str, preset: Any, config: BenchConfig) -> tuple[int, ...]:
    if preset.device == "cuda":
        return config.cuda_batches
    if preset.engine == "onnx":
        return config.cpu_batches
    return ()


def _ratios(result: dict[str, Any]) -> None:
    piper = ((result.get("piper_cli") or {}).get("steady") or {}).get("x_real_time")
    fp32 = result["presets"].get(REFERENCE_PRESET, {}).get("x_real_time")
    for row in result["presets"].values():
        x = row.get("x_real_time")
        row["vs_piper"] = x / piper if x and piper else None
        row["vs_fp32"] = x / fp32 if x and fp32 else None


def copy_to_cache(path: Path) -> Path | None:
    """Copy ``bench.json`` to ``$STUDIO_CACHE_DIR`` (else ``~/.cache/studio``) for the GUI."""
    dest_dir = cache_dir()
    try:
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = dest_dir / BENCH_NAME
        tmp = dest.with_suffix(".json.tmp")
        shutil.copyfile(path, tmp)
        os.replace(tmp, dest)
        return dest
    except OSError as exc:
        log.warning("could not copy %s to %s: %s", path, dest_dir, exc)
        return None


def write_outputs(result: dict[str, Any], out_dir: Path, *, plots: bool = True) -> dict[str, Path]:
    """``bench.json``, ``bench.md`` and the PNG plots in ``out_dir``."""
    from studio.measure import report

    out_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    if plots:
        try:
            files.update(report.write_plots(result, out_dir))
        except ImportError as exc:
            result["plots_error"] = f"matplotlib unavailable: {exc}"
    result["files"] = {k: p.name for k, p in files.items()}
    files["markdown"] = out_dir / "bench.md"
    files["markdown"].write_text(report.markdown(result), encoding="utf-8")
    files["json"] = out_dir / BENCH_NAME
    tmp = files["json"].with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1, default=_jsonable), encoding="utf-8")
    os.replace(tmp, files["json"])
    return files


def _jsonable(value: Any) -> Any:
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON-able: {type(value).__name__}")


__all__ = [
    "BenchConfig",
    "book_sentences",
    "run_bench",
    "select_presets",
    "write_outputs",
]
