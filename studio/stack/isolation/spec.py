"""What the parent hands the model process: how to build the engine, and the process's environment.

Why the builder travels in the spec instead of being imported here: the engine
stack is described and built by :mod:`studio.stack.build`, which itself wraps a
plan in an :class:`~studio.stack.isolation.engine.IsolatedEngine`. Had the child
side imported that builder, the two modules would import each other at run time.
The builder is a module-level function, so it pickles by name and the spawned
interpreter imports it only there; this package knows no plan and no backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from studio.engine.base import Engine
from studio.stack.isolation.memory import HeapBounds

DEFAULT_RECYCLE_AFTER = 1000
DEFAULT_CUDA_ALLOC_CONF = "expandable_segments:True"


@dataclass(frozen=True)
class EngineSpec:
    """Everything the child needs to build the engine; picklable by construction.

    ``builder(plan)`` makes the (not yet loaded) engine in the child --
    :func:`studio.stack.build.build_engine` with an in-process plan, the same stack
    a render in this process would get; ``builder`` must be a module-level function
    (it is pickled by reference). ``label`` names the process until the engine has
    loaded. ``probe_builds``: whether :meth:`IsolatedEngine.pending_build
    <studio.stack.isolation.engine.IsolatedEngine.pending_build>` may construct the
    stack in the parent to ask about one-time builds (False where constructing it
    would import heavy libraries into the app for nothing, as with torch).
    ``cuda_alloc_conf`` becomes ``PYTORCH_CUDA_ALLOC_CONF`` in the child (``None``:
    inherit the parent's); ``heap`` bounds heap growth and page faults (see
    :class:`~studio.stack.isolation.memory.HeapBounds`); ``env`` adds further variables
    (and wins over the others).
    """

    plan: Any
    builder: Callable[[Any], Engine]
    label: str = "engine"
    probe_builds: bool = True
    cuda_alloc_conf: str | None = DEFAULT_CUDA_ALLOC_CONF
    heap: HeapBounds = field(default_factory=HeapBounds)
    env: tuple[tuple[str, str], ...] = ()

    def child_env(self) -> dict[str, str]:
        """Variables set in the child before anything heavy is imported."""
        env = self.heap.env()
        if self.cuda_alloc_conf is not None:
            env["PYTORCH_CUDA_ALLOC_CONF"] = self.cuda_alloc_conf
        env.update({str(k): str(v) for k, v in self.env})
        return env

    def build(self) -> Engine:
        """Make the (not yet loaded) engine: in the child, or as a probe in the parent."""
        return self.builder(self.plan)
