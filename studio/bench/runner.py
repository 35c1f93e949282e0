"""``studio bench``: every preset this machine can run, measured the same way, against
the ``piper`` command line on the same text and voice.

How: each preset runs in its own spawned process (so memory, first-call time and
imports of one preset never leak into another), kept alive for the whole run. Round 1
loads every preset and times it once; further rounds (``rounds``, default 3) time the
piper CLI and every fast preset once each, interleaved, as long as the time budget
allows, and the median round is reported: on a shared machine the neighbours' load
moves single runs by tens of percent, and interleaving spreads it over all rows.

What is measured, per preset:

* **latency** of one sentence (:data:`LATENCY_SENTENCE`) on the preset's engine as
  :func:`~studio.engine.presets.open_preset` gives it (default threads): load time,
  first call, then repeated calls (p50 / p95).
* **throughput** on a book-like text (the English sentences of
  ``resources/sample.md``) through the preset's *render path*
  (:mod:`studio.jobs.preset_render`): N single-thread streams for ``fp32-cpu`` /
  ``int8-cpu``, length-bucketed batches for the CUDA presets, one sentence at a time
  for the torch CPU presets. Timed region: front end + synthesis of every sentence,
  engines loaded and warmed up. Slow presets (torch on a small CPU) render the text
  from the start until their time budget is spent; the row says how many sentences.
* **speed vs batch size** (:class:`~studio.engine.batching.BatchedEngine`) on a few
  sentences, where batching applies (ONNX Runtime on CPU, the CUDA presets).
* **memory**: peak RSS of the preset's process and its children (sampled every
  0.1 s by the parent, psutil); on CUDA resident / peak VRAM
  (:func:`~studio.engine.cuda_info.vram_stats`).
* **quality** against FP32 (``fp32-cpu``) on the same sentences: log-mel correlation
  (lowest sentence), noise floor in pauses, duration difference
  (:mod:`studio.bench.quality`) and word error rate by pocketsphinx
  (:mod:`studio.engine.asr`, on a subset: it runs at about real time on a busy
  2-core CPU).

Everything, the ``piper`` row included (``--noise-scale 0 --noise-w-scale 0``), is
synthesized at noise 0 with the voice's length scale: deterministic audio, so quality
is comparable and every row speaks the same durations.

The ``piper`` row runs the ``piper`` console script of piper-tts once on the whole
text (one sentence per line on stdin, one process, ONNX Runtime's default threads)
and once on one word; their difference is its steady throughput without start-up
(import + model load). Ratios use the steady figure -- the harder comparison, since
the studio rows exclude model loading too.
"""

from __future__ import annotations

import json
import logging
import math
import multiprocessing as mp
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import wave
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from studio.core.errors import StudioError

log = logging.getLogger(__name__)

SCHEMA = "studio-bench/1"
LATENCY_SENTENCE = "Hello, this is a test for Coqui TTS performance."
REFERENCE_PRESET = "fp32-cpu"
SAMPLE_TEXT = Path(__file__).resolve().parents[2] / "resources" / "sample.md"
BENCH_NAME = "bench.json"
CACHE_ENV = "STUDIO_CACHE_DIR"

#: presets rendered by N single-thread streams (studio.jobs.preset_render.STREAM_PRESETS)
STREAM_PRESETS = ("fp32-cpu", "int8-cpu")


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


# ------------------------------------------------------------------ machine


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    """CPU, cores, memory, OS, library versions, GPU (when torch sees one)."""
    import onnxruntime

    try:
        import psutil

        physical = psutil.cpu_count(logical=False)
        memory = psutil.virtual_memory().total
    except Exception:  # noqa: BLE001
        physical, memory = None, None
    info: dict[str, Any] = {
        "cpu": _cpu_model(),
        "physical_cores": physical,
        "logical_cpus": os.cpu_count(),
        "memory_bytes": memory,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "onnxruntime": onnxruntime.__version__,
        "gpu": None,
    }
    try:
        import torch

        info["torch"] = torch.__version__
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001 - torch is optional
        info["torch"] = None
    return info


def describe_machine(info: dict[str, Any]) -> str:
    mem = f", {info['memory_bytes'] / 2**30:.0f} GiB RAM" if info.get("memory_bytes") else ""
    gpu = f", GPU {info['gpu']}" if info.get("gpu") else ", no CUDA GPU"
    return (
        f"{info['cpu']}, {info.get('physical_cores') or '?'} physical cores / {info['logical_cpus']} logical CPUs"
        f"{mem}{gpu}; {info['os']}, Python {info['python']}, ONNX Runtime {info['onnxruntime']}"
        + (f", torch {info['torch']}" if info.get("torch") else "")
    )


class LoadMonitor:
    """Samples the 1-minute load average and the peak RSS of the process trees it is given."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.loads: list[float] = []
        self._peaks: dict[int, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="studio-bench-monitor", daemon=True)
        self._last_load = 0.0

    def start(self) -> "LoadMonitor":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)

    def add(self, pid: int) -> None:
        with self._lock:
            self._peaks.setdefault(pid, 0)

    def remove(self, pid: int) -> int:
        with self._lock:
            return self._peaks.pop(pid, 0)

    def peak(self, pid: int) -> int:
        with self._lock:
            return self._peaks.get(pid, 0)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            now = time.monotonic()
            if now - self._last_load >= 1.0:
                self._last_load = now
                self.loads.append(os.getloadavg()[0])
            with self._lock:
                pids = list(self._peaks)
            for pid in pids:
                try:
                    rss = tree_rss(pid)
                except Exception:  # noqa: BLE001 - gone between two samples
                    continue
                with self._lock:
                    if pid in self._peaks:
                        self._peaks[pid] = max(self._peaks[pid], rss)


def tree_rss(pid: int | None = None) -> int:
    """RSS of a process and all its children (bytes)."""
    import psutil

    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            pass
    return total


# ------------------------------------------------------------------ piper CLI


def piper_command() -> list[str]:
    exe = Path(sys.executable).parent / "piper"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("piper")
    return [found] if found else [sys.executable, "-m", "piper"]


def _children_cpu() -> float:
    """CPU seconds of this process's waited-for children (user + system)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_piper_cli(
    model: Path, config: Path, sentences: Sequence[str], *, length_scale: float, monitor: LoadMonitor | None = None
) -> dict[str, Any]:
    """One ``piper`` process on the sentences (one per line on stdin) -> wall s, CPU s, audio s, peak RSS."""
    with tempfile.TemporaryDirectory(prefix="studio-bench-piper-") as tmp:
        out = Path(tmp) / "out.wav"
        cmd = piper_command() + [
            "-m", str(model), "-c", str(config), "-f", str(out),
            "--noise-scale", "0", "--noise-w-scale", "0", "--length-scale", f"{length_scale:g}",
        ]
        text = ("\n".join(sentences) + "\n").encode()
        t0, c0 = time.perf_counter(), _children_cpu()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if monitor is not None:
            monitor.add(proc.pid)
        peak = None
        try:
            _, err = proc.communicate(text, timeout=1800)
        finally:
            if monitor is not None:
                peak = monitor.remove(proc.pid) or None
        wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
        if proc.returncode != 0:
            tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
            raise StudioError(f"piper CLI failed (exit {proc.returncode}): {tail[0]}")
        with wave.open(str(out), "rb") as wav:
            audio_s = wav.getnframes() / wav.getframerate()
    shown = [Path(cmd[0]).name] + cmd[1:]
    shown[shown.index("-m") + 1] = model.name
    shown[shown.index("-c") + 1] = config.name
    shown[shown.index("-f") + 1] = "out.wav"
    return {
        "command": " ".join(shown),
        "seconds": wall,
        "cpu_seconds": cpu,
        "audio_seconds": audio_s,
        "sentences": len(sentences),
        "rss_peak_bytes": peak,
    }


# ------------------------------------------------------------------ child side


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def _engine_describe(engine: Any) -> str:
    try:
        fn = getattr(engine, "describe", None)
        return str(fn()) if callable(fn) else type(engine).__name__
    except Exception as exc:  # noqa: BLE001
        return f"{type(engine).__name__} ({exc})"


class PresetSession:
    """One preset measured in this process (the child side of :class:`PresetChild`).

    Construction loads the engine and measures latency; :meth:`round` times the whole
    text once through the render path (the first round keeps the noise-0 audio for the
    quality comparison); :meth:`finish` runs the batch sweep, writes the audio to
    ``<work_dir>/<preset>.npz`` and returns the figures as a JSON-able dict.
    """

    def __init__(self, job: dict[str, Any]) -> None:
        from studio.engine.base import SynthesisSettings
        from studio.engine.presets import get_preset, open_preset
        from studio.engine.voices import get_voice

        self.job = job
        self.open_preset = open_preset
        self.preset = preset = get_preset(job["preset"])
        self.name = name = preset.name
        self.voice = get_voice(job.get("voice"))
        self.settings = SynthesisSettings(**job["settings"])
        self.lang = job["language"]
        self.sentences: list[str] = job["sentences"]
        self.cuda = preset.device == "cuda"
        self.options = dict(job.get("options") or {})
        self.vram: dict[str, Any] = {}
        self.times: list[float] = []
        self.cpu_times: list[float] = []
        self.audio: list[np.ndarray | None] = [None] * len(self.sentences)
        self.align: list[np.ndarray | None] = [None] * len(self.sentences)
        self.done = len(self.sentences)
        self.synth = None
        self.batched = None
        res = self.res = {
            "preset": name, "engine": preset.engine, "device": preset.device, "precision": preset.precision,
        }

        # ---------------------------------------------------------- latency
        engine = open_preset(name, self.voice, **self.options)
        prepare = getattr(engine, "prepare", None)
        if callable(prepare):  # INT8: build or fetch the quantized model (cached on disk)
            t = time.perf_counter()
            build = prepare()
            res["prepare_s"] = time.perf_counter() - t
            res["prepare_cache_hit"] = bool(getattr(build, "cache_hit", False))
        t = time.perf_counter()
        engine.load()
        res["load_s"] = time.perf_counter() - t
        if self.cuda:
            from studio.engine.cuda_info import reset_peak, vram_stats

            self.vram["after_load"] = vram_stats().as_dict()
            reset_peak()
        res["describe"] = _engine_describe(engine)
        settings, lang = self.settings, self.lang
        t = time.perf_counter()
        first = engine.synthesize(LATENCY_SENTENCE, lang, settings)
        res["first_call_s"] = time.perf_counter() - t
        res["latency_audio_s"] = first.size / engine.sample_rate
        samples: list[float] = []
        deadline = time.perf_counter() + job["latency_budget_s"]
        while len(samples) < job["latency_reps"] and (len(samples) < 3 or time.perf_counter() < deadline):
            t = time.perf_counter()
            engine.synthesize(LATENCY_SENTENCE, lang, settings)
            samples.append(time.perf_counter() - t)
        res["latency_samples_s"] = samples
        res["latency_p50_s"] = _percentile(samples, 50)
        res["latency_p95_s"] = _percentile(samples, 95)
        res["rss_after_load_bytes"] = _rss()
        self.sample_rate = engine.sample_rate
        self.ids_all = [engine.text_to_ids(s, lang) for s in self.sentences]

        # ---------------------------------------------------------- the render path
        if name in STREAM_PRESETS:
            from studio.engine.cpu_streams import MultiStreamSynthesizer

            engine.close()
            engine = None
            opts = self.options
            self.synth = MultiStreamSynthesizer(lambda: open_preset(name, self.voice, threads=1, **opts),
                                                streams=job.get("streams"))
            self.synth.load()
            res["mode"] = f"{self.synth.streams} streams x 1 thread"
            res["streams"] = self.synth.streams
            self.synth.synthesize_all(self.ids_all[:2], settings)  # warm-up
        elif self.cuda:
            from studio.engine.batching import BatchedEngine

            self.batched = BatchedEngine(engine, device="cuda", close_engine=False)
            res["mode"] = f"batches of up to {self.batched.max_batch_size} (length buckets)"
            res["text_repeat"] = max(1, int(job["cuda_repeat"]))
            self.batched.synthesize_many(self.ids_all[:2], settings)
        else:
            res["mode"] = "one sentence at a time"
            engine.synthesize_batch([self.ids_all[0]], settings)
        self.engine = engine

    def round(self) -> dict[str, float]:
        """Time the text once through the render path; returns this round's seconds."""
        settings, lang, first = self.settings, self.lang, not self.times
        t, c = time.perf_counter(), time.process_time()
        if self.synth is not None:
            ids = [self.synth.text_to_ids(s, lang) for s in self.sentences]
            got = list(self.synth.synthesize_results(ids, settings))
            if first:
                for item in got:
                    self.audio[item.index] = item.audio
                    self.align[item.index] = item.samples_per_id
        elif self.batched is not None:
            ids = [self.engine.text_to_ids(s, lang) for s in self.sentences] * self.res["text_repeat"]
            got = self.batched.synthesize_many(ids, settings)
            if first:
                self.audio = list(got[: len(self.sentences)])
        else:  # torch on CPU: one sentence at a time; the first round sets how many fit the budget
            budget = float(self.job["slow_budget_s"])
            for i, s in enumerate(self.sentences[: self.done]):
                ids = self.engine.text_to_ids(s, lang)
                audio = self.engine.synthesize_batch([ids], settings)[0]
                if first:
                    self.audio[i] = audio
                    if time.perf_counter() - t >= budget and i >= 1:
                        self.done = i + 1
                        break
        seconds, cpu = time.perf_counter() - t, time.process_time() - c
        self.times.append(seconds)
        self.cpu_times.append(cpu)
        return {"seconds": seconds, "cpu_seconds": cpu}

    def finish(self) -> dict[str, Any]:
        res, name, settings = self.res, self.name, self.settings
        if self.cuda:
            from studio.engine.cuda_info import vram_stats

            self.vram["peak"] = vram_stats().as_dict()
        if self.batched is not None:
            res["batcher"] = {"mean_batch_size": self.batched.stats().mean_batch_size}
            self.batched.close()
        res["rss_bytes"] = _rss()
        if self.synth is not None:
            self.synth.close()
        if self.done < len(self.sentences):
            res["note"] = (f"{self.done} of {len(self.sentences)} sentences within its "
                           f"{float(self.job['slow_budget_s']):g} s budget")
        done, repeat = self.done, res.get("text_repeat", 1)
        n_audio = sum(a.size for a in self.audio[:done] if a is not None) / self.sample_rate * repeat
        seconds, cpu = statistics.median(self.times), statistics.median(self.cpu_times)
        best = min(self.times)
        res.update(
            rounds=len(self.times), sentences=done * repeat, audio_seconds=n_audio, compute_seconds=seconds,
            round_seconds=self.times, round_cpu_seconds=self.cpu_times, cpu_seconds=cpu,
            sentences_per_s=done * repeat / seconds, x_real_time=n_audio / seconds, rtf=seconds / n_audio,
            best_x_real_time=n_audio / best, audio_per_cpu_s=n_audio / cpu if cpu > 0 else None,
        )

        # ---------------------------------------------------------- batch sweep
        sweep = list(self.job.get("batches") or [])
        points = []
        engine = self.engine
        if sweep and engine is None:
            engine = self.open_preset(name, self.voice, **self.options)
            engine.load()
        if sweep:
            from studio.engine.batching import BatchedEngine

            sub = [self.ids_all[i] for i in self.job["sweep_indices"]]
            if self.cuda:
                sub = sub * max(1, int(self.job["cuda_repeat"]))
            for b in sweep:
                batched = BatchedEngine(engine, max_batch_size=b, device=self.preset.device, close_engine=False,
                                        max_batch_tokens=512 * b if self.cuda else None)
                batched.synthesize_many(sub[:1], settings)
                t = time.perf_counter()
                got = batched.synthesize_many(sub, settings)
                dt = time.perf_counter() - t
                secs = sum(a.size for a in got) / self.sample_rate
                points.append({"batch_size": b, "seconds": dt, "sentences": len(sub),
                               "x_real_time": secs / dt, "sentences_per_s": len(sub) / dt})
                batched.close()
        res["batch_sweep"] = points
        if self.cuda:
            from studio.engine.cuda_info import vram_stats

            self.vram["end"] = vram_stats().as_dict()
            res["vram"] = self.vram
        if engine is not None:
            engine.close()

        # ---------------------------------------------------------- audio for quality
        arrays: dict[str, np.ndarray] = {}
        for i in range(done):
            a = self.audio[i]
            if a is None:
                continue
            arrays[f"a{i}"] = np.asarray(a, dtype=np.float32)
            arrays[f"i{i}"] = np.asarray(self.ids_all[i], dtype=np.int64)
            if self.align[i] is not None:
                arrays[f"s{i}"] = np.asarray(self.align[i], dtype=np.int64)
        np.savez(Path(self.job["work_dir"]) / f"{name}.npz", **arrays)
        res["sample_rate"] = self.sample_rate
        res["quality_items"] = done
        return res


def _describe_error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:500]


def _child_entry(job: dict[str, Any], conn: Any) -> None:
    """Runs in the spawned child: load + latency + the first round, then serve
    ``"round"`` / ``"finish"`` requests; every failure goes back as ``("error", text)``."""
    import warnings

    logging.basicConfig(level=logging.WARNING)
    warnings.filterwarnings("ignore")
    try:
        session = PresetSession(job)
        conn.send(("ok", session.round()))
        while True:
            cmd = conn.recv()
            if cmd == "round":
                conn.send(("ok", session.round()))
            elif cmd == "finish":
                conn.send(("ok", session.finish()))
                break
            else:
                raise ValueError(f"unknown request {cmd!r}")
    except EOFError:  # the parent went away
        pass
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as the row's error
        try:
            conn.send(("error", _describe_error(exc)))
        except OSError:
            pass
    finally:
        conn.close()


class ChildFailed(Exception):
    pass


class PresetChild:
    """The parent's handle on one preset's process (spawned: no state leaks between presets)."""

    def __init__(self, job: dict[str, Any], monitor: "LoadMonitor") -> None:
        ctx = mp.get_context("spawn")
        self.name = job["preset"]
        self.monitor = monitor
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_child_entry, args=(job, child), name=f"studio-bench-{self.name}")
        self.t0 = time.perf_counter()
        self.proc.start()
        child.close()
        monitor.add(self.proc.pid)

    def wait(self, timeout_s: float) -> Any:
        """The answer to the last request; ChildFailed with the reason otherwise."""
        try:
            if not self.conn.poll(timeout_s):
                raise ChildFailed(f"no answer within {timeout_s:g} s")
            kind, payload = self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(5)
            raise ChildFailed(f"benchmark process died (exit code {self.proc.exitcode})") from None
        if kind != "ok":
            raise ChildFailed(payload)
        return payload

    def request(self, cmd: str, timeout_s: float) -> Any:
        try:
            self.conn.send(cmd)
        except OSError:
            raise ChildFailed(f"benchmark process died (exit code {self.proc.exitcode})") from None
        return self.wait(timeout_s)

    @property
    def peak_rss(self) -> int | None:
        return self.monitor.peak(self.proc.pid) or None

    def close(self) -> None:
        self.proc.join(30)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.monitor.remove(self.proc.pid)
        self.conn.close()


# ------------------------------------------------------------------ quality (parent)


class Transcripts:
    """Speech recognition of reference / test audio, remembered per (label, index)."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self.cache: dict[tuple[str, int], float] = {}
        self.seconds = 0.0
        self.error: str | None = None

    def wer(self, label: str, index: int, text: str, audio: np.ndarray) -> float | None:
        key = (label, index)
        if key not in self.cache:
            if self.error is not None:
                return None
            try:
                from studio.engine.asr import transcribe, word_error_rate

                t = time.perf_counter()
                self.cache[key] = word_error_rate(text, transcribe(audio, self.sample_rate))
                self.seconds += time.perf_counter() - t
            except ImportError as exc:
                self.error = f"pocketsphinx unavailable: {exc}"
                return None
        return self.cache[key]


def _load_npz(path: Path) -> dict[int, dict[str, np.ndarray]]:
    out: dict[int, dict[str, np.ndarray]] = {}
    with np.load(path) as data:
        for key in data.files:
            out.setdefault(int(key[1:]), {})[key[0]] = data[key]
    return out


def quality_vs_reference(
    name: str,
    work_dir: Path,
    sentences: Sequence[str],
    pause_ids: Any,
    sample_rate: int,
    wer_indices: Sequence[int],
    transcripts: Transcripts | None,
) -> dict[str, Any]:
    """Compare ``<name>.npz`` with the reference's audio, sentence by sentence."""
    from studio.bench import quality as Q

    ref = _load_npz(work_dir / f"{REFERENCE_PRESET}.npz")
    tst = ref if name == REFERENCE_PRESET else _load_npz(work_dir / f"{name}.npz")
    common = sorted(set(ref) & set(tst))
    if not common:
        return {"error": "no sentences to compare"}
    reports = []
    floor_pauses = 0
    for i in common:
        r, t = ref[i], tst[i]
        spans: list[tuple[int, int]] = []
        test_spans = None
        if "s" in r:
            spans = Q.pause_spans(r["i"], r["s"], pause_ids)
            if "s" in t and len(t["s"]) == len(t["i"]):
                test_spans = Q.pause_spans(t["i"], t["s"], pause_ids)
                if len(test_spans) != len(spans):
                    spans, test_spans = [], None
            elif t["a"].size != r["a"].size:
                spans = []  # no alignment and another length: the pauses are elsewhere
        reports.append(Q.compare(r["a"], t["a"], sample_rate, spans, test_spans))
        floor_pauses += reports[-1].pauses
    s = Q.summarize(reports)
    out: dict[str, Any] = {
        "items": len(common),
        "log_mel_correlation": s.logmel_corr,
        "log_mel_correlation_mean": s.logmel_corr_mean,
        "noise_floor_dbfs": s.noise_floor_dbfs,
        "reference_noise_floor_dbfs": s.reference_noise_floor_dbfs,
        "pauses": s.pauses,
        "duration_diff_samples": s.duration_diff_samples,
        "duration_diff_pct": s.duration_diff_pct,
        "max_item_duration_diff_samples": s.max_abs_item_diff_samples,
        "identical_durations": s.identical_durations,
    }
    if transcripts is not None:
        chosen = [i for i in wer_indices if i in common] or common[: max(1, min(len(common), len(wer_indices)))]
        wers, refs = [], []
        for i in chosen:
            w = transcripts.wer(name, i, sentences[i], tst[i]["a"])
            w0 = transcripts.wer(REFERENCE_PRESET, i, sentences[i], ref[i]["a"])
            if w is None or w0 is None:
                break
            wers.append(w)
            refs.append(w0)
        if wers:
            out["wer"] = float(np.mean(wers))
            out["wer_reference"] = float(np.mean(refs))
            out["wer_items"] = len(wers)
        elif transcripts.error:
            out["wer_error"] = transcripts.error
    return out


# ------------------------------------------------------------------ targets


@dataclass
class Target:
    id: str
    preset: str
    description: str
    measured: float | None
    goal: float
    op: str  # ">=", "<=", "=="
    unit: str = ""
    reason: str = ""  # why it was not measured
    detail: str = ""  # other views of the same figure, appended to the verdict

    def verdict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "preset": self.preset, "description": self.description,
                               "target": f"{self.op} {_fmt(self.goal, self.unit)}", "goal": self.goal, "op": self.op,
                               "measured": self.measured, "unit": self.unit}
        if self.measured is None or (isinstance(self.measured, float) and math.isnan(self.measured)):
            out.update(met=None, verdict=f"not measured: {self.reason or 'no figure'}")
            return out
        m, g = float(self.measured), float(self.goal)
        if self.op == ">=":
            met = m >= g
            miss = g - m
        elif self.op == "<=":
            met = m <= g
            miss = m - g
        else:
            met = m == g
            miss = abs(m - g)
        shown = f"{_fmt(m, self.unit)} {self.op if met else _negate(self.op)} {_fmt(g, self.unit)}"
        if self.detail:
            shown += f"; {self.detail}"
        if met:
            out.update(met=True, verdict=f"met ({shown})")
        else:
            pct = f", {100 * miss / abs(g):.0f}%" if g and self.op != "==" else ""
            out.update(met=False, verdict=f"missed by {_fmt(miss, self.unit)}{pct} ({shown})")
        return out


def _negate(op: str) -> str:
    return {">=": "<", "<=": ">", "==": "!="}[op]


def _fmt(v: float, unit: str) -> str:
    if unit == "x":
        return f"{v:.2f}x"
    if unit == "dBFS":
        return f"{v:.1f} dBFS"
    if unit == "samples":
        return f"{v:.0f} samples"
    return f"{v:.3f}"


def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets, each met / missed (by how much) / not measured (why)."""
    rows = result["presets"]
    piper = (result.get("piper_cli") or {}).get("steady") or {}
    piper_xrt = piper.get("x_real_time")
    fp32 = rows.get("fp32-cpu", {})
    int8 = rows.get("int8-cpu", {})
    cores = result["machine"].get("physical_cores")

    def ratio(row: dict, base: float | None, key: str = "x_real_time") -> float | None:
        x = row.get(key)
        return x / base if x and base else None

    def views(row: dict, base: dict) -> str:
        """The same ratio from the best rounds and per CPU second (other jobs move those less)."""
        parts = []
        best = ratio(row, base.get("best_x_real_time"), "best_x_real_time")
        if best:
            parts.append(f"best rounds {best:.2f}x")
        cpu = ratio(row, base.get("audio_per_cpu_s"), "audio_per_cpu_s")
        if cpu:
            parts.append(f"per CPU second {cpu:.2f}x")
        return ", ".join(parts)

    def why(row: dict, name: str, what: str = "") -> str:
        if name in result.get("unavailable", {}):
            return f"{name} unavailable: {result['unavailable'][name]}"
        if row.get("error"):
            return f"{name} failed: {row['error']}"
        if not row:
            return f"{name} not in this run"
        return what or "no figure"

    no_piper = "piper CLI not run" if not piper_xrt else ""
    q8 = int8.get("quality") or {}
    wer_goal = (q8.get("wer_reference") or 0.0) + 0.05
    out = [
        Target("fp32-vs-piper", "fp32-cpu", f"FP32 on {cores or '?'} CPU cores >= 1.3x piper CLI throughput",
               ratio(fp32, piper_xrt), 1.3, ">=", "x", why(fp32, "fp32-cpu", no_piper), views(fp32, piper)),
        Target("int8-vs-piper", "int8-cpu", "CPU INT8 >= 1.9x piper CLI throughput",
               ratio(int8, piper_xrt), 1.9, ">=", "x", why(int8, "int8-cpu", no_piper), views(int8, piper)),
        Target("int8-vs-fp32", "int8-cpu", "CPU INT8 ~1.45x FP32 throughput",
               ratio(int8, fp32.get("x_real_time")), 1.45, ">=", "x", why(int8, "int8-cpu"), views(int8, fp32)),
        Target("int8-noise-floor", "int8-cpu", "CPU INT8 noise floor in pauses <= -60 dBFS",
               q8.get("noise_floor_dbfs"), -60.0, "<=", "dBFS", why(int8, "int8-cpu", "no silent pause measured")),
        Target("int8-log-mel", "int8-cpu", "CPU INT8 log-mel correlation >= 0.98 (lowest sentence)",
               q8.get("log_mel_correlation"), 0.98, ">=", "", why(int8, "int8-cpu")),
        Target("int8-durations", "int8-cpu", "CPU INT8 durations identical to FP32 (largest sentence difference)",
               q8.get("max_item_duration_diff_samples"), 0, "==", "samples", why(int8, "int8-cpu")),
        Target("int8-wer", "int8-cpu", "CPU INT8 WER <= FP32 WER + 0.05",
               q8.get("wer"), wer_goal, "<=", "", why(int8, "int8-cpu", q8.get("wer_error", "WER not measured"))),
    ]
    cuda = rows.get("fp16-cuda", {})
    out.append(Target("fp16-cuda-xrt", "fp16-cuda", "CUDA batched FP16 >= 1000x real time",
                      cuda.get("x_real_time"), 1000.0, ">=", "x", why(cuda, "fp16-cuda")))
    return [t.verdict() for t in out]


# ------------------------------------------------------------------ the run


def _default_cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "studio"


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
            ok, why = availability(name)
        except Exception as exc:  # noqa: BLE001 - a broken optional install
            ok, why = False, f"{type(exc).__name__}: {exc}"
        if ok:
            run.append(name)
        else:
            unavailable[name] = why
    return run, unavailable


def run_bench(config: BenchConfig, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure, compare, judge and write ``bench.json`` / ``bench.md`` / plots; return the result."""
    from studio.engine.presets import get_preset
    from studio.engine.voice_config import VoiceConfig
    from studio.engine.voices import get_voice

    say = progress or (lambda _msg: None)
    started = time.perf_counter()
    load_start = os.getloadavg()
    voice = get_voice(config.voice)
    if voice.backend != "piper":
        raise StudioError(f"studio bench needs a Piper voice (it compares against the piper CLI); {voice.id} is {voice.backend}")
    voice_config = VoiceConfig.from_file(voice.config_path)
    language = voice.language_family
    sentences = book_sentences(config.text_path, config.sentences, language)
    from studio.bench.quality import PauseIds

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

            if config.piper:
                say("piper CLI: start-up run, then the whole text")
            piper_round()
            rows: dict[str, dict[str, Any]] = {}
            first_round: dict[str, float] = {}
            sweep_indices = _sweep_indices(sentences, config.sweep_sentences)
            try:
                # round 1: each preset in its own process (load, latency, the whole text once)
                for name in run:
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
                    child = children[name] = PresetChild(job, monitor)
                    try:
                        first_round[name] = child.wait(config.child_timeout_s)["seconds"]
                        say(f"{name}: first round {first_round[name]:.1f} s")
                    except ChildFailed as exc:
                        rows[name] = {"preset": name, "error": str(exc)}
                        children.pop(name).close()
                        say(f"{name}: error: {exc}")
                # more rounds, interleaved (every row once per round), while the time budget allows
                again = [n for n in children if n in STREAM_PRESETS or get_preset(n).device == "cuda"]
                cost = sum(first_round.get(n, 0.0) for n in again)
                cost += sum(s["seconds"] + t["seconds"] for s, t in piper_runs[:1])
                for r in range(1, max(1, config.rounds)):
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
                    child = children.pop(name)
                    try:
                        if get_preset(name).device == "cuda" or get_preset(name).engine == "onnx":
                            say(f"{name}: batch sweep")
                        row = child.request("finish", config.child_timeout_s)
                    except ChildFailed as exc:
                        row = {"preset": name, "error": str(exc)}
                    row["rss_peak_bytes"] = child.peak_rss
                    child.close()
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
                result["piper_cli"] = _piper_rows(piper_runs)
            elif piper_error:
                result["piper_cli"] = {"error": piper_error[0]}
            # quality against the reference, then speech recognition
            ref_ok = REFERENCE_PRESET in result["presets"] and not result["presets"][REFERENCE_PRESET].get("error")
            transcripts = Transcripts(voice.sample_rate) if config.wer_sentences > 0 else None
            wer_indices = spread(len(sentences), config.wer_sentences)
            for name, row in result["presets"].items():
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
        "start": list(load_start), "end": list(os.getloadavg()),
        "mean_1min": statistics.fmean(monitor.loads) if monitor.loads else None,
        "max_1min": max(monitor.loads) if monitor.loads else None,
    }
    result["duration_s"] = time.perf_counter() - started
    write_outputs(result, out_dir, plots=config.plots)
    if config.copy_to_cache:
        result_path = copy_to_cache(out_dir / BENCH_NAME)
        result["cache_copy"] = str(result_path) if result_path else None
    return result


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


def _piper_rows(runs: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """piper CLI rows from (start-up run, whole-text run) pairs: medians over the rounds."""
    med = statistics.median
    startup_s = med([s["seconds"] for s, _ in runs])
    total_s = med([t["seconds"] for _, t in runs])
    steadies = [max(1e-3, t["seconds"] - s["seconds"]) for s, t in runs]
    steady_s = med(steadies)
    total_cpu = med([t["cpu_seconds"] for _, t in runs])
    steady_cpu = med([max(1e-3, t["cpu_seconds"] - s["cpu_seconds"]) for s, t in runs])
    first = runs[0][1]
    audio, n = first["audio_seconds"], first["sentences"]
    rss = max((t.get("rss_peak_bytes") or 0) for _, t in runs) or None
    return {
        "command": first["command"],
        "rounds": len(runs),
        "startup_s": startup_s,
        "round_seconds": [t["seconds"] for _, t in runs],
        "total": {
            "seconds": total_s, "audio_seconds": audio, "sentences": n,
            "x_real_time": audio / total_s, "rtf": total_s / audio, "sentences_per_s": n / total_s,
            "cpu_seconds": total_cpu, "audio_per_cpu_s": audio / total_cpu if total_cpu else None,
            "rss_peak_bytes": rss,
        },
        "steady": {
            "seconds": steady_s, "audio_seconds": audio, "sentences": n,
            "x_real_time": audio / steady_s, "rtf": steady_s / audio, "sentences_per_s": n / steady_s,
            "best_x_real_time": audio / min(steadies), "cpu_seconds": steady_cpu, "audio_per_cpu_s": audio / steady_cpu, "rss_peak_bytes": rss,
        },
    }


def _ratios(result: dict[str, Any]) -> None:
    piper = ((result.get("piper_cli") or {}).get("steady") or {}).get("x_real_time")
    fp32 = result["presets"].get(REFERENCE_PRESET, {}).get("x_real_time")
    for row in result["presets"].values():
        x = row.get("x_real_time")
        row["vs_piper"] = x / piper if x and piper else None
        row["vs_fp32"] = x / fp32 if x and fp32 else None


def copy_to_cache(path: Path) -> Path | None:
    """Copy ``bench.json`` to ``$STUDIO_CACHE_DIR`` (else ``~/.cache/studio``) for the GUI."""
    dest_dir = _default_cache_dir()
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
    from studio.bench import report

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
    "LATENCY_SENTENCE",
    "book_sentences",
    "machine_info",
    "run_bench",
    "run_piper_cli",
    "select_presets",
    "targets",
    "write_outputs",
]
