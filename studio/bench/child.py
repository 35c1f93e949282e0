"""One preset measured in its own spawned process: the child side and the parent's handle.

Why a process per preset: memory, first-call time and imports of one preset must
not leak into another's figures, and a preset that crashes (a broken optional
install, CUDA out of memory) must cost only its own row. The child
(:class:`PresetSession`, entered through :func:`_child_entry`, which ``spawn``
finds by this module's path) loads the engine, measures latency, times rounds
of the text on request and finally runs the batch sweep and saves its audio for
the quality comparison; :class:`PresetChild` is the parent's end of the pipe.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from studio.bench.machine import LoadMonitor
from studio.core.errors import StudioError
from studio.engine.base import Engine

__all__ = ["LATENCY_SENTENCE", "STREAM_PRESETS", "PresetSession", "ChildFailed", "PresetChild"]

LATENCY_SENTENCE = "Hello, this is a test for Coqui TTS performance."

#: presets rendered by N single-thread streams (studio.jobs.engines.STREAM_PRESETS)
STREAM_PRESETS = ("fp32-cpu", "int8-cpu")


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def _engine_describe(engine: Engine) -> str:
    try:
        return engine.describe()
    except Exception as exc:  # noqa: BLE001 - the row still reports the speed
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
        from studio.engine.voice.catalog import get_voice

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
            from studio.engine.serving.streams import MultiStreamSynthesizer

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
            from studio.engine.serving.batched import BatchedEngine

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
            from studio.engine.serving.batched import BatchedEngine

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


class BenchCancelled(StudioError):
    """The person measuring asked to stop (the desktop app's Cancel)."""


#: how often a waiting parent looks whether it was asked to stop
STOP_POLL_S = 0.2


class PresetChild:
    """The parent's handle on one preset's process (spawned: no state leaks between presets).

    ``stop()`` True makes a wait raise :class:`BenchCancelled` within
    :data:`STOP_POLL_S` instead of waiting for the child's answer.
    """

    def __init__(self, job: dict[str, Any], monitor: LoadMonitor, stop: Callable[[], bool] | None = None) -> None:
        ctx = mp.get_context("spawn")
        self.name = job["preset"]
        self.monitor = monitor
        self.stop = stop or (lambda: False)
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_child_entry, args=(job, child), name=f"studio-bench-{self.name}")
        self.t0 = time.perf_counter()
        self.proc.start()
        child.close()
        monitor.add(self.proc.pid)

    def wait(self, timeout_s: float) -> Any:
        """The answer to the last request; ChildFailed with the reason otherwise."""
        try:
            deadline = time.monotonic() + timeout_s
            while not self.conn.poll(min(STOP_POLL_S, max(0.0, deadline - time.monotonic()))):
                if self.stop():
                    raise BenchCancelled("measuring was cancelled")
                if time.monotonic() >= deadline:
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
        self.proc.join(0 if self.stop() else 30)  # cancelled: no point waiting for the child to finish
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.monitor.remove(self.proc.pid)
        self.conn.close()
