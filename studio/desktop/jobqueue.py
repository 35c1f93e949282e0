"""The render queue's state, shared by the GUI thread and the model worker.

Why a plain object under one condition variable (and not Qt events): the worker
spends its life inside ``render_project`` and a model call, where no Qt event
loop runs. Like the mandelbrot example's RenderThread, requests are written under
a lock and the worker looks at them between sentences (``control``) or sleeps on
the condition when there is nothing to do. Every method is short; the GUI thread
never waits here for longer than it takes to append to a list.

Preview requests live here too, in a single slot: a newer request replaces the
older one ("latest request wins"), so clicking through sentences never builds a
backlog of syntheses nobody will hear.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import Iterable, Literal

from studio.desktop.messages import FINISHED, JobSpec, JobState, PreviewRequest, QueueSnapshot

Control = Literal["run", "pause", "stop", "yield"]

#: finished jobs kept for display
KEEP_FINISHED = 50


@dataclass
class _Job:
    state: JobState
    cancel: bool = False


class JobQueue:
    """Jobs in order (running first), a global pause flag and the preview slot."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._jobs: list[_Job] = []
        self._next_id = 1
        self._paused = False
        self._quit = False
        self._preview: PreviewRequest | None = None
        self._preview_wanted = 0  # newest request id (0: none)
        self._holding: int | None = None  # job the worker is holding on (acknowledged pause)
        self.version = 0

    # ------------------------------------------------------------ GUI side

    def submit(self, spec: JobSpec) -> int:
        """Queue a job at the end (an urgent one before the first waiting job that is not); returns its id."""
        with self._cond:
            job_id = self._next_id
            self._next_id += 1
            job = _Job(JobState(job_id, spec, total=spec.sentences_hint))
            at = len(self._jobs)
            if spec.urgent:
                at = next((i for i, j in enumerate(self._jobs)
                           if j.state.status == "queued" and not j.state.spec.urgent), at)
            self._jobs.insert(at, job)
            self._changed()
            return job_id

    def cancel(self, job_id: int) -> bool:
        """Cancel a waiting job at once, or ask the running one to stop after its sentence."""
        with self._cond:
            job = self._find(job_id)
            if job is None or job.state.finished:
                return False
            if job.state.status == "queued":
                job.state = replace(job.state, status="cancelled", message="cancelled before it started")
            else:
                job.cancel = True
            self._changed()
            return True

    def cancel_all(self) -> None:
        with self._cond:
            for job in self._jobs:
                if not job.state.finished:
                    self.cancel(job.state.job_id)

    def move(self, job_id: int, delta: int) -> bool:
        """Move a waiting job up (``delta < 0``) or down among the waiting jobs."""
        with self._cond:
            waiting = [j for j in self._jobs if j.state.status == "queued"]
            job = self._find(job_id)
            if job is None or job not in waiting:
                return False
            pos = waiting.index(job)
            new = max(0, min(len(waiting) - 1, pos + delta))
            if new == pos:
                return False
            waiting.insert(new, waiting.pop(pos))
            others = [j for j in self._jobs if j.state.status != "queued"]
            self._jobs = [j for j in others if not j.state.finished] + waiting + [j for j in others if j.state.finished]
            self._changed()
            return True

    def pause(self) -> None:
        """Pause the queue: the running job stops after its current sentence and waits."""
        with self._cond:
            self._paused = True
            self._changed()

    def resume(self) -> None:
        with self._cond:
            self._paused = False
            self._changed()

    @property
    def paused(self) -> bool:
        return self._paused

    def clear_finished(self) -> None:
        with self._cond:
            self._jobs = [j for j in self._jobs if not j.state.finished]
            self._changed()

    def quit(self) -> None:
        """Stop everything: the worker leaves its loop after the sentence in flight."""
        with self._cond:
            self._quit = True
            for job in self._jobs:
                job.cancel = True
            self._changed()

    @property
    def quitting(self) -> bool:
        return self._quit

    def set_preview(self, request: PreviewRequest | None) -> None:
        """Replace the pending preview (None: stop previewing)."""
        with self._cond:
            self._preview = request
            self._preview_wanted = request.request_id if request else 0
            self._changed()

    def poke(self) -> None:
        """Wake the worker (the player has room for more preview audio)."""
        with self._cond:
            self._cond.notify_all()

    def outstanding(self) -> tuple[tuple[JobSpec, ...], bool]:
        """What is still to do, in the order it will run (the running job first), and the pause flag.

        What the project stores so the queue survives a restart; jobs asked to
        cancel are not outstanding, and nothing is once the queue is quitting.
        """
        with self._cond:
            if self._quit:
                return (), self._paused
            running = [j for j in self._jobs if j.state.status == "running" and not j.cancel]
            waiting = [j for j in self._jobs if j.state.status == "queued" and not j.cancel]
            urgent = [j for j in waiting if j.state.spec.urgent]
            order = urgent + running + [j for j in waiting if not j.state.spec.urgent]
            return tuple(j.state.spec for j in order), self._paused

    def restore(self, specs: Iterable[JobSpec], paused: bool) -> list[int]:
        """Queue stored jobs again, in their order, before the worker starts; returns their ids."""
        with self._cond:
            self._paused = paused
        return [self.submit(spec) for spec in specs]

    # ------------------------------------------------------------ worker side

    def next_job(self) -> JobState | None:
        """The next waiting job, now marked running; None when paused, empty or quitting.

        An urgent job goes first wherever it stands: a job that stepped aside for it
        must never be picked before it (that was the stall: the chapter was picked,
        stepped aside, was picked again, and the edit waited for minutes).
        """
        with self._cond:
            if self._paused or self._quit:
                return None
            waiting = [j for j in self._jobs if j.state.status == "queued"]
            job = next((j for j in waiting if j.state.spec.urgent), waiting[0] if waiting else None)
            if job is None:
                return None
            job.state = replace(job.state, status="running", started=time.monotonic())
            self._changed()
            return job.state

    def wait(self, timeout: float | None) -> None:
        """Sleep until something changes (or ``timeout`` seconds pass)."""
        with self._cond:
            self._cond.wait(timeout)

    def control(self, job_id: int) -> Control:
        """What the running job should do now: go on, wait (paused), stop, or step
        aside (``yield``) because an urgent job waits and this one is not urgent."""
        with self._cond:
            job = self._find(job_id)
            if self._quit or job is None or job.cancel:
                return "stop"
            if self._paused:
                return "pause"
            if not job.state.spec.urgent and any(
                    j.state.status == "queued" and j.state.spec.urgent for j in self._jobs):
                return "yield"
            return "run"

    def requeue(self, job_id: int, **changes: object) -> None:
        """A job that stepped aside waits again: right after the urgent jobs that displaced it.

        Never before them (whatever finished jobs stand where in the list), and
        before the jobs that were already waiting behind it. Nothing it rendered is
        lost: the render loop only renders what is still pending, so the job picks
        up where it stopped.
        """
        with self._cond:
            job = self._find(job_id)
            if job is None or job.state.finished:
                return
            self._jobs.remove(job)
            job.state = replace(job.state, status="queued", eta=None, current="", **changes)  # type: ignore[arg-type]
            urgent = [i for i, j in enumerate(self._jobs) if j.state.status == "queued" and j.state.spec.urgent]
            if urgent:
                at = urgent[-1] + 1
            else:
                at = next((i for i, j in enumerate(self._jobs) if j.state.status == "queued"),
                          next((i for i, j in enumerate(self._jobs) if j.state.finished), len(self._jobs)))
            self._jobs.insert(at, job)
            self._changed()

    def hold(self, job_id: int | None) -> None:
        """The worker says it is (``job_id``) or is no longer (None) waiting in a pause."""
        with self._cond:
            self._holding = job_id
            self._changed()

    def update(self, job_id: int, **changes: object) -> None:
        """Record progress of the running job (``done``, ``total``, ``eta``, ...)."""
        with self._cond:
            job = self._find(job_id)
            if job is not None and not job.state.finished:
                job.state = replace(job.state, **changes)  # type: ignore[arg-type]
                self._changed()

    def finish(self, job_id: int, status: str, message: str = "") -> JobState | None:
        """Mark a job finished (``done``, ``failed`` or ``cancelled``); returns its final state."""
        assert status in FINISHED
        with self._cond:
            job = self._find(job_id)
            if job is None:
                return None
            if job.cancel and status == "done":
                status = "cancelled"
            job.state = replace(job.state, status=status, message=message, eta=0.0 if status == "done" else None)  # type: ignore[arg-type]
            finished = [j for j in self._jobs if j.state.finished]
            if len(finished) > KEEP_FINISHED:
                drop = {id(j) for j in finished[: len(finished) - KEEP_FINISHED]}
                self._jobs = [j for j in self._jobs if id(j) not in drop]
            self._changed()
            return job.state

    def take_preview(self) -> PreviewRequest | None:
        """The newest preview request, once (the slot is emptied)."""
        with self._cond:
            req, self._preview = self._preview, None
            return req

    def preview_wanted(self, request_id: int) -> bool:
        """Whether ``request_id`` is still the newest preview (not replaced or stopped)."""
        return self._preview_wanted == request_id and not self._quit

    def has_preview(self) -> bool:
        return self._preview is not None

    # ------------------------------------------------------------ both

    def snapshot(self, seconds_per_sentence: float | None = None) -> QueueSnapshot:
        """A frozen picture of the queue (see :class:`QueueSnapshot` for the ETA rule)."""
        with self._cond:
            states = []
            for job in self._jobs:
                st = job.state
                if st.status == "running" and self._paused:
                    # "pausing" until the worker has finished its sentence and holds
                    st = replace(st, status="paused" if self._holding == st.job_id else "pausing")
                states.append(st)
            paused = self._paused
        if seconds_per_sentence is not None:  # a job whose first batch is being spoken: the voice's earlier pace
            states = [_seeded(st, seconds_per_sentence) for st in states]
        active = [s for s in states if not s.finished]
        done = sum(s.done for s in active)
        total = sum(max(s.total, s.done + s.failed) for s in active)
        eta: float | None = 0.0 if not active else None
        running = [s for s in active if s.status in ("running", "pausing", "paused")]
        waiting = [s for s in active if s.status == "queued"]
        if active and (not running or running[0].eta is not None):
            left = running[0].eta if running else 0.0
            if waiting:
                left = None if seconds_per_sentence is None else (left or 0.0) + seconds_per_sentence * sum(
                    max(0, s.total - s.done) for s in waiting
                )
            eta = left
        return QueueSnapshot(tuple(states), paused, done, total, eta)

    # ------------------------------------------------------------ internals

    def _find(self, job_id: int) -> _Job | None:
        return next((j for j in self._jobs if j.state.job_id == job_id), None)

    def _changed(self) -> None:
        self.version += 1
        self._cond.notify_all()


def _seeded(job: JobState, seconds_per_sentence: float) -> JobState:
    """A running job with nothing measured in it yet, its time left from the voice's earlier pace."""
    if job.status not in ("running", "pausing", "paused") or job.eta is not None or not job.total:
        return job
    left = seconds_per_sentence * max(0, job.total - job.done - job.failed)
    return replace(job, eta=left, eta_basis="from this voice's earlier renders")
