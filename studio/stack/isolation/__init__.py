"""Run the model in a child process, so a native crash costs one sentence, not the render.

Why: ONNX Runtime, torch and the CUDA stack are native code. A segfault, an abort in a
kernel, or the kernel's OOM killer takes down whatever process they run in. If that
is the render worker (or the GUI), the user loses the session. Here the model lives in
a child process owned by the render worker; :class:`~.engine.IsolatedEngine` keeps the ordinary
:class:`~studio.engine.base.Engine` interface in the parent, so the render loop does
not know or care.

Design
------
* **spawn, never fork.** The child is started with the ``"spawn"`` context: forking a
  process that already runs ORT/torch thread pools or holds a CUDA context gives a
  child with dead threads and a broken driver state.
* **The child is built from a picklable spec.** :class:`~studio.stack.isolation.spec.EngineSpec`
  (a builder, its plan and the allocator settings) is sent to the child, whose
  ``EngineSpec.build`` makes the real engine there. The parent never loads the
  model.
* **Front end in the child.** ``text_to_ids`` is a round trip to the child (~0.5 ms
  of pipe overhead measured on a busy 2-core box, against hundreds of milliseconds
  of synthesis per sentence). The parent cannot run it itself without loading an
  engine, and espeak-ng is native code too: a crash in the phonemizer is contained
  like a crash in the model. The parent remembers ``(text, language) -> ids`` (and
  the reverse) in an LRU of 4,096 entries, so repeats cost nothing and each
  synthesis item travels to the child with its text (``None`` for ids that did not
  come from this engine's ``text_to_ids``).
* **The engine's name** is the real engine's (``"onnx"``, ``"torch"``) once loaded, so
  cache keys do not change with isolation; before :meth:`~.engine.IsolatedEngine.load` it is
  the spec's backend or preset name.
* **Scripts** that create an :class:`~.engine.IsolatedEngine` need the usual
  ``if __name__ == "__main__":`` guard (spawn re-imports the main module).
* **Death is noticed at once.** While it waits for a result the parent waits on the
  pipe *and* on the child's process sentinel (``multiprocessing.connection.wait``,
  in steps of ``poll_interval`` seconds), so a dead child is seen within
  milliseconds, at worst within one step (0.1 s by default). The parent then starts a
  new child and retries the request **once**; a second death raises
  :class:`~.reports.InferenceCrashed` naming the cause (``"model process killed by SIGSEGV"``).
  :meth:`~.engine.IsolatedEngine.synthesize_each` goes further for batches: after the batch
  died twice it retries item by item, so only the poisonous item fails.
* **Recycling.** The child is replaced after ``recycle_after`` sentences (default
  1,000) and on demand (:meth:`~.engine.IsolatedEngine.recycle`). A fresh process is the only
  reliable way to hand back memory that a long run has fragmented (glibc arenas, the
  CUDA caching allocator); ``PYTORCH_CUDA_ALLOC_CONF`` (default
  ``expandable_segments:True``) is set in the child's environment before torch is
  imported, and so are two CPU-side bounds measured with ``bench/soak.py``: a fixed
  glibc mmap threshold and a smaller oneDNN primitive cache (:class:`~.memory.HeapBounds`;
  without them the torch engine's RSS grew by ~36 MB per 5-sentence passage, +114 %
  in 60 passages). In-process engines get the same with :meth:`~.memory.HeapBounds.apply`.
* **Live memory.** Every answer carries the child's RSS and, on CUDA, allocated /
  peak / reserved VRAM, kept as a frozen :class:`~.reports.ChildMemory` in
  :attr:`~.engine.IsolatedEngine.memory` for a GUI to show.

**Test-only** fault switch: ``STUDIO_FAULT_CRASH_ON`` (see :mod:`studio.stack.isolation.child`).
When set to a substring in the child's environment (the child inherits the parent's
environment, or use ``EngineSpec.env``), the child kills itself with SIGSEGV when asked
to synthesize an item whose text contains it (the text is known for ids obtained
from this engine's ``text_to_ids``). Off unless set; only tests set it, never set it
in production.

Thread safety: one request at a time (an internal lock serialises callers);
:attr:`~.engine.IsolatedEngine.memory`, :meth:`~.engine.IsolatedEngine.memory_now`,
:meth:`~.engine.IsolatedEngine.stats` and :meth:`~.engine.IsolatedEngine.close` may be called from any
thread while a request runs (``close`` then kills the child and the request raises
:class:`~studio.core.errors.EngineError`).

Layout, one module per concept: :mod:`~studio.stack.isolation.spec` (what the parent
hands the child: the builder and its plan, the environment),
:mod:`~studio.stack.isolation.memory` (the heap bounds, also for in-process engines),
:mod:`~studio.stack.isolation.reports` (what comes back: memory, events, counters, the
crash error), :mod:`~studio.stack.isolation.process` (one process: spawn, receive,
death), :mod:`~studio.stack.isolation.child` (the child's side of the pipe) and
:mod:`~studio.stack.isolation.engine` (:class:`~.engine.IsolatedEngine`: requests, retry,
recycling). The package imports no backend and not the engine builder: the
builder comes in with the spec (:mod:`studio.stack.build` passes its own).
"""
