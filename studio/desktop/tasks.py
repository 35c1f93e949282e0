"""Background tasks with results and errors delivered on the GUI thread.

Modelled on Anki's ``run_in_background`` and Picard's thread pools: the GUI hands
a plain callable to :meth:`TaskRunner.run` together with ``on_done`` /
``on_error`` callbacks; the callable runs on a pool thread (one thread by default,
so project operations keep their order: an override then a refresh never arrive
the other way round), and its outcome comes back as a frozen
:class:`~studio.desktop.messages.TaskResult` through a queued signal, so the callbacks
run on the GUI thread where touching widgets is allowed. ``synchronous=True`` runs
everything inline (unit tests, scripts).

Errors are never silent: a :class:`~studio.core.errors.StudioError` becomes its
one-line message; anything else is logged with its traceback and reported as an
unexpected error -- to ``on_error`` if given, else to the runner's default
handler (the main window's error display).
"""

from __future__ import annotations

import itertools
import sys
import logging
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from studio.core.errors import StudioError
from studio.desktop.messages import ErrorInfo, TaskResult

log = logging.getLogger(__name__)

OnDone = Callable[[Any], None]
OnError = Callable[[ErrorInfo], None]


def describe_error(exc: BaseException, action: str = "") -> ErrorInfo:
    """A person-readable :class:`ErrorInfo` for an exception (logged when unexpected)."""
    title = f"Could not {action}" if action else "Error"
    if isinstance(exc, StudioError):
        return ErrorInfo(str(exc) or type(exc).__name__, title)
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return ErrorInfo(f"{exc.strerror}{where}", title)
    detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    log.error("unexpected error%s: %s", f" while trying to {action}" if action else "", detail.rstrip())
    return ErrorInfo(f"Unexpected error: {type(exc).__name__}: {exc}", title, detail)


def _execute(relay: "Signal", task_id: int, fn: Callable[..., Any], with_report: bool, action: str) -> None:
    """Body of a background task (pool thread): every outcome leaves through ``relay``."""
    try:
        if with_report:
            value = fn(lambda v: relay.emit(TaskResult(task_id, v, progress=True)))
        else:
            value = fn()
        relay.emit(TaskResult(task_id, value))
    except BaseException as exc:  # noqa: BLE001 - everything is reported, nothing escapes a pool thread
        relay.emit(TaskResult(task_id, error=describe_error(exc, action)))


#: the interpreter's thread switch interval in a process with a window (Python's default: 5 ms)
GUI_SWITCH_INTERVAL_S = 0.0005


class TaskRunner(QObject):
    """Runs callables off the GUI thread; callbacks come back on the GUI thread."""

    _relay = Signal(object)
    #: the number of unfinished tasks changed (for busy indicators and tests)
    busyChanged = Signal(int)

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        threads: int = 1,
        synchronous: bool = False,
        on_error: OnError | None = None,
    ) -> None:
        super().__init__(parent)
        # Every paint asks the Python models for hundreds of cells, and each ask waits for the
        # interpreter lock; beside a busy task thread each wait lasts one switch interval, so the
        # window froze for seconds while a big book's cast was read. A shorter interval keeps the
        # window answering (figures: docs/speed-notes.md, "The window beside a busy task").
        if sys.getswitchinterval() > GUI_SWITCH_INTERVAL_S:
            sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
        self.synchronous = synchronous
        self.default_error = on_error
        self._pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="studio-task")
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[OnDone | None, OnError | None, Callable[[Any], None] | None]] = {}
        self._relay.connect(self._deliver)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def run(
        self,
        fn: Callable[..., Any],
        *,
        on_done: OnDone | None = None,
        on_error: OnError | None = None,
        on_progress: Callable[[Any], None] | None = None,
        action: str = "",
    ) -> int:
        """Run ``fn()`` (or ``fn(report)`` when ``on_progress`` is given) in the background.

        ``report(value)`` may be called from the task any number of times; each value
        reaches ``on_progress`` on the GUI thread. ``action`` ("open the project")
        words error titles.
        """
        task_id = next(self._ids)
        self._pending[task_id] = (on_done, on_error, on_progress)
        self.busyChanged.emit(len(self._pending))
        args = (self._relay, task_id, fn, on_progress is not None, action)
        if self.synchronous:
            _execute(*args)
        else:
            self._pool.submit(_execute, *args)
        return task_id

    def wait(self) -> None:
        """Block until every task finished and stop the pool (shutdown only)."""
        self._pool.shutdown(wait=True)

    def _deliver(self, result: TaskResult) -> None:
        callbacks = self._pending.get(result.task_id)
        if callbacks is None:
            return
        on_done, on_error, on_progress = callbacks
        if result.progress:
            if on_progress is not None:
                self._call(on_progress, result.value)
            return
        del self._pending[result.task_id]
        self.busyChanged.emit(len(self._pending))
        if result.error is not None:
            handler = on_error or self.default_error
            if handler is not None:
                self._call(handler, result.error)
            else:
                log.error("%s", result.error.message)
        elif on_done is not None:
            self._call(on_done, result.value)

    def _call(self, fn: Callable[[Any], None], value: Any) -> None:
        """Run a callback; a bug in it is reported like any other error, not swallowed."""
        try:
            fn(value)
        except Exception as exc:  # noqa: BLE001
            info = describe_error(exc, "finish the operation")
            if self.default_error is not None:
                self.default_error(info)
