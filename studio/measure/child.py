"""One preset measured in its own spawned process: the child side and the parent's handle.

Why a process per preset: memory, first-call time and imports of one preset must
not leak into another's figures, and a preset that crashes (a broken optional
install, CUDA out of memory) must cost only its own row. The child
(:class:`PresetSession`, entered through :func:`_child_entry`, which ``spawn``
finds by this module's path) builds the preset's render stack the way the app
does (:func:`studio.stack.build.build_engine`, no stack of its own), measures
latency on it, times rounds of the text on request through the render loop's
synthesizer and finally runs the batch sweep and saves its audio for the quality
comparison; :class:`PresetChild` is the parent's end of the pipe.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from studio.measure.machine import LoadMonitor
from studio.measure.scoring import REFERENCE_PRESET
from studio.core.errors import StudioError
from studio.engine.base import Engine
from studio.engine.presets import get_preset

if TYPE_CHECKING:
    from studio.stack.build import EnginePlan

__all__ = ["LATENCY_SENTENCE", "bench_plan", "PresetSession", "ChildFailed", "PresetChild"]

LATENCY_SENTENCE = "Hello, this is a test for Coqui TTS performance."


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


def bench_plan(preset: str, voice: Any = None, *, streams: int | None = None,
               options: dict[str, Any] | None = None) -> "EnginePlan":
    """The plan a preset is measured with: the app's render plan for that preset, as its
    model process builds it (:meth:`~studio.stack.build.EnginePlan.in_process`: this
    benchmark child *is* the model process). ``streams`` overrides the per-core default
    exactly as ``studio render --streams`` does; ``options`` go to the preset's engine."""
    from studio.stack.build import plan_engine

    return plan_engine(preset, voice, streams=streams, options=tuple(sorted((options or {}).items())))


class PresetSession:
    """One preset measured in this process (the child side of :class:`PresetChild`).

    Construction builds the preset's render stack with :func:`~studio.stack.build.build_engine`
    (the plan of :func:`bench_plan`), loads it and measures latency on it; :meth:`round`
    times the whole text once through the render loop's synthesizer
    (:func:`~studio.rendering.synthesizer.each_synthesizer`, in the plan's batches; the first
    round keeps the noise-0 audio for the quality comparison); :meth:`finish` runs the
    batch sweep, writes the audio to ``<work_dir>/<preset>.npz`` and returns the figures
    as a JSON-able dict.
    """

    def __init__(self, job: dict[str, Any]) -> None:
        from studio.engine.base import SynthesisSettings
        from studio.engine.presets import get_preset
        from studio.engine.voice.catalog import get_voice
        from studio.stack.build import build_engine
        from studio.rendering.synthesizer import each_synthesizer

        self.job = job
        self.preset = preset = get_preset(job["preset"])
        self.name = name = preset.name
        self.voice = get_voice(job.get("voice"))
        self.settings = SynthesisSettings(**job["settings"])
        self.lang = job["language"]
        self.sentences: list[str] = job["sentences"]
        self.cuda = preset.device == "cuda"
        self.plan = plan = bench_plan(name, self.voice, streams=job.get("streams"), options=job.get("options"))
        self.vram: dict[str, Any] = {}
        self.times: list[float] = []
        self.cpu_times: list[float] = []
        self.audio: list[np.ndarray | None] = [None] * len(self.sentences)
        self.align: list[np.ndarray | None] = [None] * len(self.sentences)
        self.done = len(self.sentences)
        res = self.res = {
            "preset": name, "engine": preset.engine, "device": preset.device, "precision": preset.precision,
            "plan": plan.describe(),
        }

        # ---------------------------------------------------------- load + latency, on the render stack
        engine = self.engine = build_engine(plan)
        pending = engine.pending_build()
        res["prepare_cache_hit"] = pending is None
        t = time.perf_counter()
        engine.load()
        res["load_s"] = time.perf_counter() - t
        if pending is not None:  # INT8: the one-time build was part of that load
            res["prepare_s"] = res["load_s"]
        if self.cuda:
            from studio.engine.cuda_info import reset_peak, vram_stats

            self.vram["after_load"] = vram_stats().as_dict()
            reset_peak()
        res["describe"] = _engine_describe(engine)
        settings, lang = self.settings, self.lang
        self.synth = each_synthesizer(engine, settings)
        t = time.perf_counter()
        first = self._speak([LATENCY_SENTENCE])[0]
        res["first_call_s"] = time.perf_counter() - t
        res["latency_audio_s"] = first.size / engine.sample_rate
        samples: list[float] = []
        deadline = time.perf_counter() + job["latency_budget_s"]
        while len(samples) < job["latency_reps"] and (len(samples) < 3 or time.perf_counter() < deadline):
            t = time.perf_counter()
            self._speak([LATENCY_SENTENCE])
            samples.append(time.perf_counter() - t)
        res["latency_samples_s"] = samples
        res["latency_p50_s"] = _percentile(samples, 50)
        res["latency_p95_s"] = _percentile(samples, 95)
        res["rss_after_load_bytes"] = _rss()
        self.sample_rate = engine.sample_rate
        self.ids_all = [engine.text_to_ids(s, lang) for s in self.sentences]

        # ---------------------------------------------------------- how the render path runs it
        if get_preset(name).cpu_streams:
            res["mode"] = f"{plan.streams} streams x 1 thread"
            res["streams"] = plan.streams
        elif self.cuda:
            res["mode"] = f"batches of up to {plan.batch_size} (length buckets)"
            res["text_repeat"] = max(1, int(job["cuda_repeat"]))
        else:
            res["mode"] = "one sentence at a time"
        self._speak(self.sentences[:2])  # warm-up

    def _speak(self, sentences: Sequence[str]) -> list[np.ndarray]:
        """The render loop's synthesizer on ``sentences``; a failed sentence fails the row."""
        from studio.rendering.synthesizer import SynthRequest

        out = self.synth([SynthRequest(i, s, self.lang) for i, s in enumerate(sentences)])
        for result in out:
            if isinstance(result, Exception):
                raise result
        return out  # type: ignore[return-value] - no exceptions left

    def _batches(self, items: Sequence[str]) -> list[Sequence[str]]:
        size = max(1, self.plan.batch_size)
        return [items[k: k + size] for k in range(0, len(items), size)]

    def round(self) -> dict[str, float]:
        """Time the text once through the render path; returns this round's seconds."""
        first = not self.times
        budget = float(self.job["slow_budget_s"])
        slow = not get_preset(self.name).cpu_streams and not self.cuda  # torch on CPU: within a time budget
        todo = self.sentences[: self.done] * int(self.res.get("text_repeat", 1))
        got: list[np.ndarray] = []
        t, c = time.perf_counter(), time.process_time()
        for batch in self._batches(todo):
            got.extend(self._speak(batch))
            if first and slow and time.perf_counter() - t >= budget and len(got) >= 2:
                self.done = len(got)
                break
        seconds, cpu = time.perf_counter() - t, time.process_time() - c
        if first:
            self.audio[: len(got)] = got[: len(self.sentences)]
            if self.name == REFERENCE_PRESET:  # the pauses of the quality comparison: untimed
                with_align = self.engine.synthesize_batch_with_alignments(self.ids_all, self.settings)
                self.align = [samples for _audio, samples in with_align]
        self.times.append(seconds)
        self.cpu_times.append(cpu)
        return {"seconds": seconds, "cpu_seconds": cpu}

    def finish(self) -> dict[str, Any]:
        from studio.stack.build import batch_engine, build_engine

        res, settings = self.res, self.settings
        if self.cuda:
            from studio.engine.cuda_info import vram_stats

            self.vram["peak"] = vram_stats().as_dict()
            res["batcher"] = {"mean_batch_size": self.engine.stats().mean_batch_size}
        res["rss_bytes"] = _rss()
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
        # one engine of the preset (one stream: batching competes with streams, not
        # with their sum) under the render path's batching layer at each size
        sweep = list(self.job.get("batches") or [])
        points = []
        if sweep:
            if self.cuda:
                inner, owned = self.engine.engine, False  # the render stack's own model: one GPU copy
            else:
                self.engine.close()
                inner, owned = build_engine(replace(self.plan, streams=1, batch_size=1)), True
                inner.load()
            sub = [self.ids_all[i] for i in self.job["sweep_indices"]]
            if self.cuda:
                sub = sub * max(1, int(self.job["cuda_repeat"]))
            for b in sweep:
                batched = batch_engine(inner, b, self.preset.device, max_batch_tokens=512 * b if self.cuda else None)
                batched.synthesize_many(sub[:1], settings)
                t = time.perf_counter()
                got = batched.synthesize_many(sub, settings)
                dt = time.perf_counter() - t
                secs = sum(a.size for a in got) / self.sample_rate
                points.append({"batch_size": b, "seconds": dt, "sentences": len(sub),
                               "x_real_time": secs / dt, "sentences_per_s": len(sub) / dt})
                batched.close()
            if owned:
                inner.close()
        res["batch_sweep"] = points
        if self.cuda:
            from studio.engine.cuda_info import vram_stats

            self.vram["end"] = vram_stats().as_dict()
            res["vram"] = self.vram
        self.engine.close()

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
        np.savez(Path(self.job["work_dir"]) / f"{self.name}.npz", **arrays)
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
