"""What the model process reports back: its memory, its life events, its counters, its death.

Plain, picklable values: :class:`ChildMemory` travels with every answer,
:class:`ChildEvent` and :class:`IsolationStats` are what a log or the desktop shows,
:class:`InferenceCrashed` is what the render loop sees when one request killed the
process twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.core.errors import EngineError


class InferenceCrashed(EngineError):
    """The model process died twice on the same request (segfault, abort, OOM kill...).

    ``reason`` is the human part (``"model process killed by SIGSEGV"``), ``exitcode``
    the child's exit status as :mod:`multiprocessing` reports it (negative = signal),
    ``signal_name`` e.g. ``"SIGSEGV"`` or ``None``. The render loop marks the sentence
    failed and goes on.
    """

    def __init__(
        self,
        reason: str,
        exitcode: int | None = None,
        signal_name: str | None = None,
        attempts: int = 2,
    ) -> None:
        self.reason = reason
        self.exitcode = exitcode
        self.signal_name = signal_name
        self.attempts = attempts
        super().__init__(reason)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason, self.exitcode, self.signal_name, self.attempts))



@dataclass(frozen=True)
class ChildMemory:
    """One memory snapshot of the model process (sent with every answer).

    CUDA fields are ``None`` unless the child has initialised CUDA. ``sentences`` is
    how many sentences this child has synthesized; ``at`` is ``time.time()``.
    """

    pid: int
    rss_bytes: int
    cuda_allocated_bytes: int | None = None
    cuda_peak_bytes: int | None = None
    cuda_reserved_bytes: int | None = None
    #: whole-device use (``mem_get_info``): includes TensorRT, cuDNN and the CUDA context
    cuda_device_used_bytes: int | None = None
    sentences: int = 0
    at: float = 0.0

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> "ChildMemory":
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__})  # type: ignore[arg-type]


@dataclass(frozen=True)
class ChildEvent:
    """Something that happened to the model process (for logs and the GUI).

    ``kind``: ``"started"`` (``duration_s`` = spawn to ready), ``"crashed"`` (``at`` =
    when the parent noticed), ``"recycled"``, ``"stopped"``. ``at`` is
    ``time.monotonic()``.
    """

    kind: str
    pid: int | None
    at: float
    reason: str = ""
    duration_s: float | None = None


@dataclass(frozen=True)
class IsolationStats:
    """Counters of one :class:`IsolatedEngine` (all since construction)."""

    child_pid: int | None
    restarts: int
    recycles: int
    crashes: int
    sentences: int
    memory: ChildMemory | None
    last_start_s: float | None
