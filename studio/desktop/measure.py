""""Measure on this machine": the benchmark of the presets that run here, from the app.

Why the benchmark itself (:func:`studio.measure.runner.run_bench`) and not a quicker
stand-in: the figures the dialog shows must be the ones ``studio bench`` writes,
measured the same way, in the same file the dialog (and ``studio bench``) read. The
app runs a short version: the presets available here on a few long sentences
(:data:`MEASURE_TEXT`), no piper comparison, no speech recognition, no plots.

It runs on its own one-thread :class:`~studio.desktop.tasks.TaskRunner` (two
measurements never overlap) and pauses the render queue meanwhile, so a render
does not skew the figures nor wait on a CPU the benchmark holds; the queue resumes
when the measurement ends, however it ends. Progress comes back as frozen
:class:`MeasureProgress` values; Cancel stops within a fraction of a second (the
preset processes are killed, nothing is written).
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QObject, Signal

from studio.core.errors import StudioError
from studio.core.paths import cache_dir
from studio.desktop.facts import BENCH_NAME, BenchFigures, read_bench
from studio.desktop.messages import ErrorInfo
from studio.desktop.tasks import TaskRunner

if TYPE_CHECKING:
    from studio.desktop.session import ProjectSession

log = logging.getLogger(__name__)

MEASURE_TEXT = Path(__file__).resolve().parents[2] / "resources" / "measure.md"
#: sentences of :data:`MEASURE_TEXT` measured (all of them)
MEASURE_SENTENCES = 4
#: what the dialog says about the duration. Measured on a shared 2-core VM (load average
#: 6.5) with the four CPU presets: 205 s with the INT8 model cached, 359 s the first time
#: (the INT8 build); a GPU machine measures its presets in less
ABOUT = ("about 3-4 minutes on a small, busy computer, 2-3 minutes more the first time "
         "(the fast model is built once)")


@dataclass(frozen=True)
class MeasureProgress:
    """Which preset is being measured: ``index`` of ``total`` (``fp32-cpu`` counts: it is the reference)."""

    preset: str
    index: int
    total: int


@dataclass(frozen=True)
class MeasureResult:
    """The figures as the dialog reads them back from where they were stored."""

    figures: dict[str, BenchFigures]
    path: str
    note: str
    seconds: float


def measure_presets(presets: Sequence[str], voice_id: str | None, project_folder: str | Path | None,
                    report: Callable[[MeasureProgress], None], stop: Callable[[], bool], *,
                    sentences: int = MEASURE_SENTENCES, text_path: Path = MEASURE_TEXT) -> MeasureResult:
    """Run the benchmark (background thread) and read the figures back as the dialog will.

    The result goes where ``studio bench`` puts it for the app (the studio cache's
    ``bench.json``); a project that has its own ``bench.json`` (which the dialog
    reads first) gets the new figures too, or they would stay hidden behind it.
    """
    from studio.measure.runner import BenchConfig, run_bench

    if not presets:
        raise StudioError("no preset can run on this computer to be measured")
    config = BenchConfig.quick_config(
        presets=list(presets), voice=voice_id or None, out_dir=cache_dir() / "measure", sentences=sentences,
        text_path=text_path, piper=False, plots=False, wer_sentences=0, whole_pairs=0, copy_to_cache=True,
    )
    result = run_bench(config, progress=lambda msg: log.info("measure: %s", msg),
                       step=lambda name, n, total: report(MeasureProgress(name, n, total)), stop=stop)
    own = Path(project_folder) / BENCH_NAME if project_folder else None
    if own is not None and own.is_file():
        shutil.copyfile(config.out_dir / BENCH_NAME, own)
    figures, path, note = read_bench(project_folder)
    return MeasureResult(figures, path, note, float(result.get("duration_s") or 0.0))


class PresetMeasurer(QObject):
    """Starts, reports and cancels one measurement at a time (see the module doc)."""

    progress = Signal(object)  # MeasureProgress
    finished = Signal(object)  # MeasureResult
    failed = Signal(object)  # ErrorInfo
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None, *, session: ProjectSession | None = None,
                 **options: object) -> None:
        """``options`` go to :func:`measure_presets` (``sentences``, ``text_path``: tests measure less)."""
        super().__init__(parent)
        self.options = options
        self.tasks = TaskRunner(self, threads=1)
        self.session = session
        self._stop = threading.Event()
        self._paused_here = False
        self.running = False
        app = QCoreApplication.instance()
        if app is not None:  # a measurement must not keep the app from quitting
            app.aboutToQuit.connect(self.wait)

    def start(self, presets: Sequence[str], voice_id: str | None = None,
              project_folder: str | Path | None = None) -> bool:
        """Measure ``presets`` in the background; False when a measurement is already running."""
        if self.running:
            return False
        self.running = True
        self._stop = stop = threading.Event()
        queue = self.session.queue if self.session is not None else None
        if queue is not None and not queue.paused:
            self.session.pause()  # the render waits after its sentence; resumed when this ends
            self._paused_here = True
        names, options = list(presets), dict(self.options)
        self.tasks.run(
            lambda report: measure_presets(names, voice_id, project_folder, report, stop.is_set, **options),
            on_progress=self.progress.emit, on_done=self._done, on_error=self._failed, action="measure the presets")
        return True

    def cancel(self) -> None:
        """Stop the running measurement (the preset processes are killed at once)."""
        self._stop.set()

    def wait(self) -> None:
        """Cancel and wait for the background thread (closing the app or a test)."""
        self.cancel()
        self.tasks.wait()

    def _end(self) -> None:
        self.running = False
        if self._paused_here and self.session is not None:
            self.session.resume()
        self._paused_here = False

    def _done(self, result: MeasureResult) -> None:
        self._end()
        self.finished.emit(result)

    def _failed(self, error: ErrorInfo) -> None:
        self._end()
        if self._stop.is_set():
            self.cancelled.emit()
        else:
            self.failed.emit(error)
