"""Keeps the project's stored render queue equal to the live one.

Why a keeper beside the queue and not writes inside it: :class:`~studio.desktop.jobqueue.JobQueue`
is touched by the model worker between sentences and must stay a few list
operations under a lock; the database write happens on the session's project
I/O thread, only when what is outstanding (jobs, order, pause) really changed --
not on the progress updates that make up nearly every queue change.

The write reads the queue when it runs, not when it was asked for, so writes
can never land out of order; once the queue is quitting (the project is being
closed) nothing more is written, and :meth:`QueueKeeper.save_now` has stored the
last state before that.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import asdict, fields
from typing import Any, Mapping

from studio.core.errors import StudioError
from studio.project.queue_state import StoredQueue, save_queue
from studio.project.store import Project
from studio.desktop.jobqueue import JobQueue
from studio.desktop.messages import ErrorInfo, JobSpec
from studio.desktop.tasks import TaskRunner

log = logging.getLogger(__name__)

_SPEC_FIELDS = {f.name for f in fields(JobSpec)}


def spec_to_json(spec: JobSpec) -> dict[str, Any]:
    return asdict(spec)


def spec_from_json(value: Mapping[str, Any]) -> JobSpec | None:
    """A stored job again; None (logged) for one this version cannot read."""
    try:
        known = {k: v for k, v in value.items() if k in _SPEC_FIELDS}
        for name in ("chapters", "sentence_ids"):
            known[name] = tuple(int(x) for x in known.get(name, ()))
        return JobSpec(**known)
    except (TypeError, ValueError) as err:
        log.warning("a stored render job could not be read (%s); it is dropped", err)
        return None


def restore_queue(queue: JobQueue, stored: StoredQueue) -> int:
    """Queue the stored jobs again (before the worker starts); returns how many."""
    specs = [s for s in (spec_from_json(j) for j in stored.jobs) if s is not None]
    return len(queue.restore(specs, stored.paused))


class QueueKeeper:
    """Writes the outstanding jobs of ``queue`` into ``project`` whenever they change."""

    def __init__(self, project: Project, queue: JobQueue, runner: TaskRunner) -> None:
        self.project, self.queue, self.runner = project, queue, runner
        self._saved = queue.outstanding()
        self.writes = 0
        # a background write and save_now() (the GUI thread's, at quit) must not interleave: the
        # one that reads the queue last must also be the one that writes last
        self._lock = threading.Lock()

    def changed(self) -> None:
        """The queue changed (a snapshot went out): store it if what is outstanding differs."""
        if self.queue.quitting or self.queue.outstanding() == self._saved:
            return
        self.runner.run(self._write, on_error=self._failed, action="store the render queue")

    def save_now(self) -> None:
        """Store the queue at once (the project is about to close)."""
        try:
            self._write()
        except StudioError as err:
            log.warning("the render queue could not be stored: %s", err)

    def discard(self) -> None:
        """Forget every outstanding job, in the queue and in the project, and the pause with them:
        a discarded queue holds nothing to keep paused, and the next render must run, not wait for Resume."""
        self.queue.cancel_all()
        self.queue.resume()
        self.save_now()

    def _write(self) -> None:
        with self._lock:
            if self.queue.quitting:
                return
            state = self.queue.outstanding()
            if state == self._saved:
                return
            specs, paused = state
            save_queue(self.project.db, [spec_to_json(s) for s in specs], paused)
            self._saved = state
            self.writes += 1

    @staticmethod
    def _failed(err: ErrorInfo) -> None:
        log.warning("the render queue could not be stored: %s", err.message)
