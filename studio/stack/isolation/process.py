"""One model process: spawning it, reading its answers, noticing and naming its death.

The process plumbing -- environment set around ``spawn``, waiting on pipe and
sentinel together, turning an exit code into a reason -- kept apart from the
engine's request / retry / recycle policy (:mod:`studio.stack.isolation.engine`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from multiprocessing.connection import wait as _wait_any
from typing import Any

from studio.stack.isolation.child import child_main
from studio.stack.isolation.spec import EngineSpec


class ChildDied(Exception):
    def __init__(self, reason: str, exitcode: int | None, signal_name: str | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.exitcode = exitcode
        self.signal_name = signal_name


def death_of(exitcode: int | None, *, hung_s: float | None = None) -> ChildDied:
    if hung_s is not None:
        return ChildDied(f"model process did not answer within {hung_s:g} s", exitcode, None)
    if exitcode is None:
        return ChildDied("model process stopped unexpectedly", None, None)
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        reason = f"model process killed by {name}"
        if name == "SIGKILL":
            reason += " (out of memory, or killed by another program)"
        return ChildDied(reason, exitcode, name)
    return ChildDied(f"model process exited with code {exitcode}", exitcode, None)


# Environment changes around ``Process.start()`` must not interleave between threads.
_SPAWN_LOCK = threading.Lock()


class ChildProcess:
    """One running model process and our end of its pipe."""

    def __init__(self, proc: Any, conn: Any) -> None:
        self.proc = proc
        self.conn = conn
        self.pid: int | None = proc.pid
        self.served = 0

    def receive(self, timeout_s: float | None, poll_interval: float) -> tuple[Any, ...]:
        """Wait for the child's next message, watching its liveness all the while.

        Waits on the pipe *and* the process sentinel in steps of ``poll_interval``, so
        a death is seen at once; past ``timeout_s`` the child is killed and counted dead.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        sentinel = self.proc.sentinel
        while True:
            ready = _wait_any([self.conn, sentinel], timeout=poll_interval)
            if self.conn in ready:
                try:
                    return self.conn.recv()
                except (EOFError, OSError):
                    self.proc.join(1.0)
                    raise death_of(self.proc.exitcode) from None
            if sentinel in ready or not self.proc.is_alive():
                self.proc.join(1.0)
                raise death_of(self.proc.exitcode)
            if deadline is not None and time.monotonic() > deadline:
                self.proc.kill()
                self.proc.join(5.0)
                raise death_of(self.proc.exitcode, hung_s=timeout_s)

    def kill(self) -> None:
        try:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
        except Exception:  # pragma: no cover - best effort
            pass
        self.conn.close()

    def stop(self, grace_s: float = 5.0) -> None:
        """Ask politely, then terminate, then kill."""
        try:
            self.conn.send(("close",))
        except (OSError, ValueError):
            pass
        self.proc.join(grace_s)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(2.0)
        self.kill()
        try:
            self.proc.close()
        except Exception:  # pragma: no cover
            pass



def spawn_child(ctx: Any, spec: EngineSpec) -> ChildProcess:
    """Start a model process for ``spec`` (not yet waited on: it answers "ready" later).

    ``spec.child_env()`` is put into ``os.environ`` only around ``start()``, under a
    lock: a spawned interpreter inherits the environment at exec time, and it must be
    in place before the child imports torch.
    """
    parent_conn, child_conn = ctx.Pipe(duplex=True)
    env = spec.child_env()
    proc = ctx.Process(
        target=child_main,
        args=(child_conn, spec, env),
        name=f"studio-model-{spec.label}",
        daemon=True,
    )
    with _SPAWN_LOCK:  # the spawned interpreter inherits os.environ at exec time
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            proc.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    child_conn.close()  # so the child's death shows as EOF on our end
    return ChildProcess(proc, parent_conn)


def reap(holder: dict[str, Any]) -> None:
    """Finaliser: an engine that was never closed must not leave its child behind."""
    child = holder.get("child")
    holder["child"] = None
    if child is not None:
        child.kill()

