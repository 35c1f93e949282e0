"""Live readouts: speed, RTF, sentences/s, memory, CPU, VRAM -- once a second.

Why a thread of its own: the model worker can sit inside one synthesis call for
seconds, and the GUI thread must not call psutil over child processes or ask
torch about CUDA. :class:`MonitorThread` samples every ``interval`` seconds and
emits a frozen :class:`~studio.desktop.messages.Readout`.

Rates come from :class:`RenderStats`, which the worker feeds after every batch
(audio seconds made, seconds the synthesis took, sentences): speed is audio over
synthesis time in the last ``window`` seconds (how fast the model speaks, pauses
between sentences not counted), sentences/s is sentences over wall time while
rendering. Memory is this process plus its children (an isolated model process);
VRAM comes from the isolated engine's last report, or :mod:`studio.engine.cuda_info`
when torch already runs CUDA in this process (never imported just to look).

:class:`StallMeter` measures how late the GUI thread's timer fires: the number
the "nothing over 100 ms on the GUI thread" rule is checked against. :class:`AnswerProbe`
asks from outside: a watcher thread posts an event every 100 ms and notes when the GUI
thread answers it (the stall benchmark and the stall tests read it).
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QElapsedTimer, QObject, QThread, QTimer, Signal

from studio.desktop.messages import Readout

log = logging.getLogger(__name__)


class RenderStats:
    """Per-batch figures from the worker, read by the monitor (thread-safe)."""

    def __init__(self, window: float = 30.0) -> None:
        self.window = window
        self._lock = threading.Lock()
        self._batches: deque[tuple[float, float, float, int]] = deque()  # (t, audio_s, synth_s, n)
        self._rendering_since: float | None = None
        self._total_synth = 0.0
        self._total_sentences = 0
        self._seeded: float | None = None
        self.engine: Any = None
        self.device = "CPU"

    def set_rendering(self, on: bool) -> None:
        with self._lock:
            self._rendering_since = (self._rendering_since or time.monotonic()) if on else None

    @property
    def rendering(self) -> bool:
        return self._rendering_since is not None

    def record(self, audio_s: float, synth_s: float, sentences: int) -> None:
        with self._lock:
            self._batches.append((time.monotonic(), audio_s, synth_s, sentences))
            self._total_synth += synth_s
            self._total_sentences += sentences

    def rates(self, now: float | None = None) -> tuple[float, float]:
        """``(x real time, sentences per second)`` over the last window."""
        now = time.monotonic() if now is None else now
        with self._lock:
            while self._batches and self._batches[0][0] < now - self.window:
                self._batches.popleft()
            audio = sum(b[1] for b in self._batches)
            synth = sum(b[2] for b in self._batches)
            count = sum(b[3] for b in self._batches)
            since = self._rendering_since
            first = self._batches[0][0] - self._batches[0][2] if self._batches else now
        speed = audio / synth if synth > 0 else 0.0
        start = max(now - self.window, since if since is not None else first)
        span = now - start
        return speed, (count / span if span > 0.5 else 0.0)

    def seconds_per_sentence(self) -> float | None:
        """Average synthesis seconds per sentence so far; before the first, what the project
        measured before (:meth:`seed`), else None."""
        with self._lock:
            return self._total_synth / self._total_sentences if self._total_sentences else self._seeded

    def seed(self, per_sentence: float | None, *, restart: bool = False) -> None:
        """The project's own figure from earlier sessions (:mod:`studio.project.render_speed`),
        used until this session measures its own; ``restart``: another voice or preset, whose
        speed is its own (this session's figures so far were the last voice's)."""
        with self._lock:
            self._seeded = per_sentence
            if restart:
                self._total_synth, self._total_sentences = 0.0, 0


class StallMeter(QObject):
    """Measures GUI-thread latency: a 50 ms timer that notes how late it fires."""

    def __init__(self, parent: QObject | None = None, period_ms: int = 50, warn_ms: float = 100.0) -> None:
        super().__init__(parent)
        self.period_ms = period_ms
        self.warn_ms = warn_ms
        self.worst_ms = 0.0  # since the last take()
        self.worst_ever_ms = 0.0
        self.stalls: deque[tuple[float, float]] = deque(maxlen=100)  # (monotonic time, ms late) over warn_ms
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setInterval(period_ms)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._clock.start()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def take(self) -> float:
        worst, self.worst_ms = self.worst_ms, 0.0
        return worst

    def _tick(self) -> None:
        late = max(0.0, float(self._clock.restart()) - self.period_ms)
        if late > self.worst_ms:
            self.worst_ms = late
        if late > self.worst_ever_ms:
            self.worst_ever_ms = late
        if late > self.warn_ms:
            self.stalls.append((time.monotonic(), late))
            log.debug("GUI thread was busy for %.0f ms", late)


@dataclass(frozen=True)
class Answer:
    """One ping of :class:`AnswerProbe`: when it was posted (``time.perf_counter``), how long the
    GUI thread took to answer it, the GUI thread's own CPU time meanwhile (None where the OS does
    not say), and what was going on (the probe's ``label`` when it was posted)."""

    posted: float
    wait_s: float
    gui_cpu_s: float | None
    label: str


class AnswerProbe(QObject):
    """Pings the GUI thread's event loop from a thread of its own every ``period_s``.

    Why from outside and not a timer on the GUI thread: a timer inside the loop learns that it was
    late only once the loop runs again, and says nothing about what kept it busy; a ping posted from
    another thread is answered when the loop runs, and the GUI thread's CPU time between post and
    answer tells its own work (a stall to fix) from the machine's load (a wait for a core).
    """

    _ping = Signal(int)

    def __init__(self, parent: QObject | None = None, period_s: float = 0.1) -> None:
        super().__init__(parent)
        self.period_s = period_s
        self.label = ""
        self.answers: list[Answer] = []
        self._posted: dict[int, tuple[float, float | None, str]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._gui_clock = _thread_clock(threading.get_ident())
        self._ping.connect(self._answer)

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="studio-answer-probe", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop pinging; a ping never answered counts as waiting until now."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        now = time.perf_counter()
        with self._lock:
            for posted, _cpu, label in self._posted.values():
                self.answers.append(Answer(posted, now - posted, None, label))
            self._posted.clear()

    def take(self, label: str | None = None) -> list[Answer]:
        """The answers so far (those posted under ``label`` only, when given)."""
        with self._lock:
            return [a for a in self.answers if label is None or a.label == label]

    def _run(self) -> None:
        seq, due = 0, time.perf_counter()
        while not self._stop.is_set():
            due += self.period_s
            time.sleep(max(0.0, due - time.perf_counter()))
            # the time it was due, not the time this thread got the interpreter back: a GUI thread
            # holding the interpreter lock delays the post too, and that delay is the GUI's
            posted = min(due, time.perf_counter())
            seq += 1
            with self._lock:
                self._posted[seq] = (posted, self._gui_cpu(), self.label)
            self._ping.emit(seq)
            due = max(due, time.perf_counter() - self.period_s)  # a long stall: one ping, not a burst

    def _answer(self, seq: int) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        with self._lock:
            posted, cpu_then, label = self._posted.pop(seq, (now, None, self.label))
            self.answers.append(Answer(posted, now - posted, None if cpu_then is None else cpu - cpu_then, label))

    def _gui_cpu(self) -> float | None:
        return time.clock_gettime(self._gui_clock) if self._gui_clock is not None else None


def _thread_clock(ident: int) -> int | None:
    """The CPU-time clock of a thread (POSIX only): the probe reads the GUI thread's from its own."""
    try:
        return time.pthread_getcpuclockid(ident)
    except (AttributeError, OSError):
        return None


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) by the nearest rank: the 99th percentile of 300 pings is the third worst."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


class MonitorThread(QThread):
    """Samples the process and the render stats every ``interval`` seconds."""

    readout = Signal(object)  # Readout

    def __init__(self, stats: RenderStats, interval: float = 1.0, stall: StallMeter | None = None) -> None:
        super().__init__()
        self.setObjectName("studio-monitor")
        self.stats = stats
        self.interval = interval
        self.stall = stall
        self._stop = threading.Event()
        self._procs: dict[int, Any] = {}

    def stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        try:
            import psutil

            me = psutil.Process()
            me.cpu_percent(None)
        except Exception as exc:  # noqa: BLE001 - readouts are optional, the app is not
            log.warning("process readouts unavailable: %s", exc)
            return
        while not self._stop.wait(self.interval):
            try:
                self.readout.emit(self.sample(me))
            except Exception:  # noqa: BLE001
                log.exception("readout sampling failed")

    def sample(self, me: Any) -> Readout:
        import psutil

        rss = me.memory_info().rss
        cpu = me.cpu_percent(None)
        kids = []
        try:
            kids = me.children(recursive=True)
        except psutil.Error:
            pass
        alive = set()
        for child in kids:
            proc = self._procs.setdefault(child.pid, child)
            alive.add(child.pid)
            try:
                rss += proc.memory_info().rss
                cpu += proc.cpu_percent(None)
            except psutil.Error:
                alive.discard(child.pid)
        self._procs = {pid: p for pid, p in self._procs.items() if pid in alive}
        speed, sps = self.stats.rates()
        used, peak, device = self._vram()
        return Readout(
            at=time.time(), rendering=self.stats.rendering, x_real_time=speed,
            rtf=(1.0 / speed) if speed > 0 else 0.0, sentences_per_s=sps, rss_bytes=int(rss),
            children=len(alive), cpu_percent=float(cpu), vram_used=used, vram_peak=peak, device=device,
            window_s=self.stats.window, ui_stall_ms=self.stall.take() if self.stall is not None else 0.0,
        )

    def _vram(self) -> tuple[int | None, int | None, str]:
        engine = self.stats.engine
        memory = getattr(engine, "memory", None) if engine is not None else None
        if memory is not None and getattr(memory, "cuda_allocated_bytes", None) is not None:
            # device level first: it includes TensorRT and the CUDA context, which
            # torch's allocator does not see (see studio.engine.cuda_info)
            used = memory.cuda_device_used_bytes or memory.cuda_reserved_bytes or memory.cuda_allocated_bytes
            return used, memory.cuda_peak_bytes, "CUDA (model process)"
        torch = sys.modules.get("torch")
        if torch is None:
            return None, None, self.stats.device
        try:
            if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
                return None, None, self.stats.device
            from studio.engine.cuda_info import vram_stats

            v = vram_stats()
            return v.device_used or v.reserved, v.peak_reserved or v.peak_allocated, v.device_name or "CUDA"
        except Exception:  # noqa: BLE001 - a flaky driver must not stop the readouts
            log.debug("VRAM readout failed", exc_info=True)
            return None, None, self.stats.device
