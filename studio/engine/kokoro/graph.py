"""Saving a rewritten Kokoro graph: what the builds of :mod:`~studio.engine.kokoro.widen` and
:mod:`~studio.engine.kokoro.integer` share."""

from __future__ import annotations

from pathlib import Path


def save_rewritten(model, nodes: list, new_initializers: list, target: Path) -> None:
    """Write ``model`` with ``nodes`` as its graph, keeping only the initializers they read."""
    import onnx

    graph = model.graph
    used = {i for n in nodes for i in n.input}
    kept = [i for i in graph.initializer if i.name in used] + [i for i in new_initializers if i.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    target.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(target))
