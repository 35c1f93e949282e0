"""Entry point of the model process started by :class:`studio.stack.isolation.engine.IsolatedEngine`.

Kept in its own small module so that the spawned interpreter imports as little as
possible before it has set its environment (``PYTORCH_CUDA_ALLOC_CONF`` must be in
place before torch initialises its CUDA allocator).

Wire format (one duplex ``multiprocessing`` pipe, pickled tuples):

parent -> child
    ``("ids", text, language, lexicon)``         run the voice's front end (lexicon may be None)
    ``("synth", items, settings)``               ``items`` = list of ``(text | None, ids)``
    ``("stats",)``                               memory snapshot only
    ``("close",)``                               exit cleanly (code 0)

child -> parent
    ``("ready", sample_rate, engine_name, stats)`` once, after the engine loaded
    ``("ok", payload, stats)``                   answer to one request
    ``("error", "ExcType: message")``            Python-level failure; the child lives on

``stats`` is a plain dict (see :class:`studio.stack.isolation.reports.ChildMemory`).

The text of every item travels with its ids so the child knows what it is speaking;
today that serves only the test-only fault switch below, later it can serve logging.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from typing import Any

from studio.core.system import crash_now, no_core_dumps

#: TEST-ONLY fault switch. When this variable is set (to a non-empty substring) in the
#: model process's environment, the model process crashes for real -- SIGSEGV, no
#: Python cleanup -- as soon as it is asked to synthesize an item whose text contains
#: that substring. It exists so the tests can prove that one poisonous sentence fails
#: alone and the render goes on. It is off unless set; never set it in production.
FAULT_ENV = "STUDIO_FAULT_CRASH_ON"

log = logging.getLogger(__name__)

#: the level the parent logs at (its ``-v``), for the model process to log at the same
LOG_LEVEL_ENV = "STUDIO_LOG_LEVEL"


def _crash() -> None:
    """Die the way a native crash dies: by a signal, with no Python cleanup."""
    sys.stderr.flush()
    no_core_dumps()  # a deliberate crash must not leave a core file behind
    crash_now()
    time.sleep(1.0)  # the signal is delivered asynchronously on some platforms
    os.abort()


def _memory(served: int) -> dict[str, Any]:
    rss = 0
    try:
        import psutil

        rss = int(psutil.Process().memory_info().rss)
    except Exception:  # noqa: BLE001 - psutil is a dependency; stay alive anyway, but say so
        log.exception("cannot read this process's memory")
    stats: dict[str, Any] = {
        "pid": os.getpid(),
        "rss_bytes": rss,
        "cuda_allocated_bytes": None,
        "cuda_peak_bytes": None,
        "cuda_reserved_bytes": None,
        "cuda_device_used_bytes": None,
        "sentences": served,
        "at": time.time(),
    }
    torch = sys.modules.get("torch")  # never import torch just to ask
    if torch is not None:
        try:
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                stats["cuda_allocated_bytes"] = int(torch.cuda.memory_allocated())
                stats["cuda_peak_bytes"] = int(torch.cuda.max_memory_allocated())
                stats["cuda_reserved_bytes"] = int(torch.cuda.memory_reserved())
                free, total = torch.cuda.mem_get_info()  # device level: TensorRT, context, cuDNN too
                stats["cuda_device_used_bytes"] = int(total) - int(free)
        except Exception:  # noqa: BLE001 - a broken CUDA stack must not kill us here, but say so
            log.exception("cannot read CUDA memory")
    return stats


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _exit_with_parent(poll_s: float = 0.5) -> None:
    """Exit as soon as the parent is gone, even in the middle of loading or a long batch.

    Why: the request loop notices a dead parent only at its next read, so a parent
    killed during a paragraph-long batch left this process computing for tens of
    seconds with nobody to answer: a process of the command outliving the command.
    """
    import threading

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:  # re-parented: the studio process has exited
                os._exit(0)

    threading.Thread(target=watch, name="studio-parent-watch", daemon=True).start()


def child_main(conn: Any, spec: Any, env: dict[str, str]) -> None:
    """Build ``spec``'s engine, then serve requests until told to close or orphaned."""
    os.environ.update(env)  # again, in case the parent's env changed since spawn
    # a spawned interpreter has no logging set up: speak like the parent, at its level
    logging.basicConfig(level=os.environ.get(LOG_LEVEL_ENV, "WARNING"), format="studio: %(levelname)s: %(message)s")
    logging.captureWarnings(True)
    # Ctrl-C in a terminal reaches the whole process group; the parent decides
    # when the model stops, so a keyboard interrupt must not look like a crash.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()

    try:
        engine = spec.build()
        engine.load()
        conn.send(("ready", int(engine.sample_rate), str(engine.name), _memory(0)))
    except BaseException as exc:  # report, never a traceback on the console
        try:
            conn.send(("error", _describe(exc)))
        finally:
            return

    served = 0
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # parent gone: nobody to serve
            break
        kind = msg[0]
        if kind == "close":
            break
        try:
            if kind == "ids":
                _, text, language, lexicon = msg
                payload: Any = list(engine.text_to_ids(text, language, lexicon))
            elif kind == "synth":
                _, items, settings = msg
                needle = os.environ.get(FAULT_ENV)
                if needle and any(text and needle in text for text, _ in items):
                    _crash()
                payload = engine.synthesize_batch([ids for _, ids in items], settings)
                served += len(items)
            elif kind == "describe":
                payload = engine.describe()
            elif kind == "stats":
                payload = None
            else:
                raise ValueError(f"unknown request {kind!r}")
        except Exception as exc:
            reply: tuple[Any, ...] = ("error", _describe(exc))
        else:
            reply = ("ok", payload, _memory(served))
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            break

    try:
        engine.close()
    except Exception:  # noqa: BLE001 - the parent has gone or asked us to stop; say why in the log
        log.exception("closing the model failed")
    _leave()


def _leave() -> None:
    """End this process now, without the interpreter's teardown.

    Why: the studio waits for its model process at the end of every render, and tearing
    down an interpreter that imported torch (module by module, then a gigabyte of heap)
    kept ``bf16-cpu`` renders waiting 0.84 s there (0.10 s without it). Nothing here needs that teardown:
    the engine is closed, this process owns no files, children or shared resources, and
    its log lines and output are flushed first.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):  # closed or replaced streams
            pass
    os._exit(0)
