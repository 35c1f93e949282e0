"""Reading a Piper ``.onnx`` back into named VITS parameters.

A Piper voice ships only an ONNX graph of ``SynthesizerTrn.infer``. Its initializers
keep the original VITS parameter names (``enc_p.*``, ``dp.*``, ``flow.*``, ``dec.*``),
except for a few tensors the exporter produced by constant folding:

* the weight-normalised WaveNet convs of the flow (``weight_g * v / |v|``) are stored
  as anonymous ``onnx::Conv_NNNN`` tensors; their name is recovered from the scope of
  the node that consumes them (``/flow/flows.0/enc/in_layers.0/Conv`` ->
  ``flow.flows.0.enc.in_layers.0.weight``);
* the text embedding may carry an unrelated name (``sid``); it is recovered the same
  way from its ``Gather`` consumer (``/enc_p/emb/Gather`` -> ``enc_p.emb.weight``).

Conv attributes (dilations, strides) are collected here too, because the
architecture sizes in :mod:`studio.engine.torchvits.arch` are derived from them rather
than assumed. ``onnx`` is imported lazily so that importing this module stays cheap.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: prefixes of real VITS parameter names inside a Piper ONNX file
_PARAM_PREFIXES = ("enc_p.", "enc_q.", "dec.", "flow.", "dp.", "emb_g.")
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")


def is_param_name(name: str) -> bool:
    """Whether ``name`` is a real VITS parameter name rather than a folded constant's."""
    return name.startswith(_PARAM_PREFIXES) and _PARAM_NAME.fullmatch(name) is not None


@dataclass
class OnnxVitsGraph:
    """What :func:`read_onnx_vits` extracts from a Piper ONNX file."""

    #: initializers, anonymous ones renamed to their VITS parameter name where possible
    initializers: dict[str, np.ndarray]
    #: original initializer name -> recovered VITS name
    renames: dict[str, str]
    #: conv module path (``dec.resblocks.0.convs.1``) -> Conv/ConvTranspose attributes
    conv_attrs: dict[str, dict[str, Any]]


def _consumer_param_name(consumers: list[tuple[str, str, int]]) -> str | None:
    """VITS name of an initializer from the node(s) that read it, or None if ambiguous."""
    names = set()
    for node_name, op, idx in consumers:
        if not node_name.startswith("/"):
            return None
        scope = node_name.strip("/").split("/")[:-1]
        if not scope:
            return None
        module = ".".join(scope)
        if op in ("Conv", "ConvTranspose") and idx == 1:
            names.add(module + ".weight")
        elif op in ("Conv", "ConvTranspose") and idx == 2:
            names.add(module + ".bias")
        elif op == "Gather" and idx == 0:
            names.add(module + ".weight")
        else:
            return None
    if len(names) != 1:
        return None
    name = names.pop()
    return name if is_param_name(name) else None


def read_onnx_vits(onnx_path: str | Path) -> OnnxVitsGraph:
    """Read initializers (renamed from consumer scope) and conv attributes of a Piper ONNX."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(onnx_path))
    graph = model.graph
    raw = {init.name: numpy_helper.to_array(init) for init in graph.initializer}

    consumers: dict[str, list[tuple[str, str, int]]] = {}
    conv_attrs: dict[str, dict[str, Any]] = {}
    for node in graph.node:
        for idx, inp in enumerate(node.input):
            if inp in raw:
                consumers.setdefault(inp, []).append((node.name, node.op_type, idx))
        if node.op_type in ("Conv", "ConvTranspose") and node.name.startswith("/"):
            module = ".".join(node.name.strip("/").split("/")[:-1])
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            attrs["op_type"] = node.op_type
            conv_attrs[module] = attrs

    out: dict[str, np.ndarray] = {}
    renames: dict[str, str] = {}
    for name, arr in raw.items():
        if is_param_name(name):
            new = name
        else:
            new = _consumer_param_name(consumers.get(name, [])) or name
            if new != name:
                if new in raw or new in out:
                    log.warning("initializer %s would be renamed to existing %s; kept as is", name, new)
                    new = name
                else:
                    renames[name] = new
        if new in out:
            raise ValueError(f"duplicate initializer name {new!r} in {onnx_path}")
        out[new] = arr
    if renames:
        log.debug("renamed %d anonymous initializers from consumer scope: %s", len(renames), renames)
    return OnnxVitsGraph(out, renames, conv_attrs)


def load_onnx_initializers(onnx_path: str | Path) -> dict[str, np.ndarray]:
    """All initializers of a Piper ONNX, anonymous conv/embedding weights renamed.

    ``onnx::Conv_8240`` consumed by ``/flow/flows.0/enc/in_layers.0/Conv`` becomes
    ``flow.flows.0.enc.in_layers.0.weight``; initializers that cannot be named this way
    (folded shape constants and the like) keep their ONNX name.
    """
    return read_onnx_vits(onnx_path).initializers


__all__ = [
    "OnnxVitsGraph",
    "is_param_name",
    "load_onnx_initializers",
    "read_onnx_vits",
]
