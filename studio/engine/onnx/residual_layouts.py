"""Keep the decoder's convolutions in their own layouts across its residual adds (same math, less copying).

Why: ONNX Runtime runs the 4-D decoder's convolutions in layouts of their own -- FP32
ones blocked (NCHWc, on CPUs with AVX2 or AVX-512; :mod:`~studio.engine.onnx.layout`),
INT8 ones (``QLinearConv``) channels-last -- but its layout passes stop at every op
they do not know: ``LeakyRelu``, an ``Add`` whose other input is plain, the
quantize / dequantize pairs. Each HiFi-GAN residual step (``x + conv(leaky_relu(x))``)
thus went through the plain layout and back: reorders (or transposes), the add, the
leaky ReLU, then the next conv -- several passes over tensors of 32-128 channels per
output sample, where the arithmetic is one convolution.

This module takes the graph as ORT optimizes it for this CPU (saved with
``optimized_model_filepath``, blocked weights and all) and rewrites it in two passes:

* :func:`keep_blocked`: a residual ``Add(ReorderOutput(conv), r)`` becomes the blocked
  convolution's own ``Sum`` input (``conv(x) + b + r`` in one kernel; ``r`` is
  reordered once, or taken where it is already blocked); ``ReorderInput(LeakyRelu(t))``
  becomes ``LeakyRelu`` on ``t``'s blocked twin (element-wise ops ignore the layout,
  padded channels stay 0); an ``Add`` of two blocked twins is done blocked.
* :func:`keep_channels_last`: around the INT8 convolutions, the dequantized output is
  used as it comes (channels-last), the residual adds and leaky ReLUs run
  channels-last too, a quantize -> dequantize round trip with the producer's own
  parameters is dropped (it returns the same values), and a quantize feeding a
  convolution takes the channels-last twin: one transpose into a stage and one out,
  instead of two per convolution.

The plain tensors nobody reads any more are dropped. Measured on the bundled voice
(2-core Zen 4, one thread, 576-frame window, 5 alternating pairs): the FP32 4-D
decoder 1.07x faster (blocked pass); the INT8 decoder 1.06x with the blocked pass
alone, 1.12-1.14x with both; outputs agree to ~5e-8.

The result holds ORT's blocked weights, so it is valid only for the runtime version
and CPU kind it was made on: it is keyed by both and built once per machine. Each
pass is checked against the plain decoder on a seeded latent before it is kept; a
graph neither pass improves (or gets right) is remembered as such and decoded plain.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import os
import tempfile
from pathlib import Path

import numpy as np

from studio.core import paths
from studio.core.files import build_lock, write_atomic
from studio.engine.cpu_features import notable_flags

_LOGGER = logging.getLogger(__name__)

#: bumped when the rewrite changes, so cached builds are made again
LAYOUTS_VERSION = 1
#: ORT's domain of its blocked-layout operators
NCHWC = "com.microsoft.nchwc"
#: the largest difference from the plain decoder a kept build may have (audio in [-1, 1])
TOLERANCE = 1e-5
#: latent frames of the check (the decoder's context is 32 frames; any length is valid)
CHECK_FRAMES = 96


def keep_blocked(model) -> int:
    """Rewrite ``model`` (an ORT-optimized ModelProto) in place; returns the rewrites made.

    0 means the graph had none of the patterns (nothing changed).
    """
    graph = model.graph
    outputs = {o.name for o in graph.output}
    #: plain tensor -> its blocked twin (and the ReorderOutput that made the plain one, for its attributes)
    twins: dict[str, tuple[str, object | None]] = {}
    for node in graph.node:
        if node.domain != NCHWC:
            continue
        if node.op_type == "ReorderOutput" and not _attr(node, "channels_last", 0):
            twins[node.output[0]] = (node.input[0], node)
        elif node.op_type == "ReorderInput" and not _attr(node, "channels_last", 0):
            twins.setdefault(node.input[0], (node.output[0], None))
    rewrites = 0
    while _blocked_step(graph, twins, outputs):
        rewrites += 1
    if rewrites:
        _tidy(graph, outputs)
    return rewrites


def _blocked_step(graph, twins: dict, outputs: set[str]) -> bool:
    """Apply the first blocked rewrite that matches; False when none does."""
    from onnx import helper

    producers = {o: n for n in graph.node for o in n.output}
    readers: dict[str, int] = collections.Counter(i for n in graph.node for i in n.input)
    for node in list(graph.node):
        if node.domain == "" and node.op_type == "Add" and len(node.input) == 2:
            for k in (0, 1):
                conv_out, rest = node.input[k], node.input[1 - k]
                reorder = producers.get(conv_out)
                if reorder is None or reorder.domain != NCHWC or reorder.op_type != "ReorderOutput":
                    continue
                conv = producers.get(reorder.input[0])
                if (conv is None or conv.domain != NCHWC or conv.op_type != "Conv" or readers[conv_out] != 1
                        or readers[reorder.input[0]] != 1 or conv_out in outputs
                        or (len(conv.input) > 3 and conv.input[3]) or _attr(conv, "activation", b"")):
                    continue
                if rest not in twins:  # reorder the residual once; every reader shares it
                    blocked = f"{rest}__nchwc"
                    graph.node.insert(_index(graph, node), helper.make_node(
                        "ReorderInput", [rest], [blocked], name=blocked, domain=NCHWC, channels_last=0))
                    twins[rest] = (blocked, None)
                inputs = list(conv.input) + [""] * (3 - len(conv.input))
                del conv.input[:]
                conv.input.extend(inputs[:3] + [twins[rest][0]])
                summed = f"{node.output[0]}__nchwc"
                conv.output[0] = summed
                graph.node.remove(reorder)
                _replace(graph, node, [_reorder_out(summed, node, reorder)])
                twins[node.output[0]] = (summed, reorder)
                return True
            a, b = node.input
            if a in twins and b in twins and node.output[0] not in outputs:
                source = twins[a][1] or twins[b][1]
                if source is None:
                    continue
                summed = f"{node.output[0]}__nchwc"
                add = helper.make_node("Add", [twins[a][0], twins[b][0]], [summed], name=summed)
                _replace(graph, node, [add, _reorder_out(summed, node, source)])
                twins[node.output[0]] = (summed, source)
                return True
        if node.domain == NCHWC and node.op_type == "ReorderInput" and not _attr(node, "channels_last", 0):
            relu = producers.get(node.input[0])
            if relu is not None and relu.domain == "" and relu.op_type == "LeakyRelu" and relu.input[0] in twins:
                blocked = helper.make_node("LeakyRelu", [twins[relu.input[0]][0]], [node.output[0]],
                                           name=node.output[0])
                blocked.attribute.extend(relu.attribute)
                _replace(graph, node, [blocked])
                return True
    return False


#: ONNX Transpose permutations into and out of channels-last for the 4-D decoder
TO_CHANNELS_LAST = [0, 2, 3, 1]
TO_CHANNELS_FIRST = [0, 3, 1, 2]


def keep_channels_last(model) -> int:
    """Rewrite the INT8 stages of ``model`` (ORT-optimized) to stay channels-last; returns the rewrites made."""
    from onnx import numpy_helper

    graph = model.graph
    outputs = {o.name for o in graph.output}
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    #: channels-first tensor -> (its channels-last twin, the (scale, zero point) its values lie on, if quantized)
    twins: dict[str, tuple[str, tuple | None]] = {}
    rewrites = 0
    while _channels_last_step(graph, twins, outputs, constants):
        rewrites += 1
    if rewrites:
        _tidy(graph, outputs)
    return rewrites


def _channels_last_step(graph, twins: dict, outputs: set[str], constants: dict) -> bool:
    """Apply the first channels-last rewrite that matches; False when none does."""
    from onnx import helper

    def per_tensor(node) -> tuple | None:  # a (de)quantization's parameters, when they are scalars
        params = tuple(node.input[1:3])
        if all(p in constants and constants[p].size == 1 for p in params) and len(params) == 2:
            return tuple(constants[p].item() for p in params)
        return None

    def back(twin: str, plain: str):  # the channels-first tensor again, for whoever still reads it
        return helper.make_node("Transpose", [twin], [plain], name=plain, perm=TO_CHANNELS_FIRST)

    producers = {o: n for n in graph.node for o in n.output}
    for node in list(graph.node):
        if node.domain != "" or node.output[0] in outputs:
            continue
        source = producers.get(node.input[0]) if node.input else None
        if node.op_type == "DequantizeLinear" and node.output[0] not in twins and per_tensor(node):
            if source is not None and source.op_type == "Transpose" and _attr(source, "perm", None) == TO_CHANNELS_FIRST:
                twin = f"{node.output[0]}__nhwc"  # dequantize the convolution's output where it is
                graph.node.insert(_index(graph, node), helper.make_node(
                    "DequantizeLinear", [source.input[0], *node.input[1:]], [twin], name=twin))
                twins[node.output[0]] = (twin, per_tensor(node))
                return True
            if (source is not None and source.op_type == "QuantizeLinear" and source.input[0] in twins
                    and per_tensor(source) is not None and per_tensor(source) == per_tensor(node)
                    and twins[source.input[0]][1] == per_tensor(node)):
                twins[node.output[0]] = twins[source.input[0]]  # a round trip onto the grid the values lie on
                return True
        elif node.op_type == "Transpose" and _attr(node, "perm", None) == TO_CHANNELS_FIRST:
            if (node.output[0] not in twins and source is not None and source.op_type == "DequantizeLinear"
                    and per_tensor(source)):
                twins[node.output[0]] = (source.output[0], per_tensor(source))
                return True
        elif node.op_type == "Transpose" and _attr(node, "perm", None) == TO_CHANNELS_LAST:
            if (source is not None and source.op_type == "QuantizeLinear" and source.input[0] in twins
                    and per_tensor(source)):
                _replace(graph, node, [helper.make_node(
                    "QuantizeLinear", [twins[source.input[0]][0], *source.input[1:]], [node.output[0]],
                    name=node.output[0])])
                return True
        elif node.op_type == "LeakyRelu" and node.input[0] in twins and node.output[0] not in twins:
            twin = f"{node.output[0]}__nhwc"
            relu = helper.make_node("LeakyRelu", [twins[node.input[0]][0]], [twin], name=twin)
            relu.attribute.extend(node.attribute)
            _replace(graph, node, [relu, back(twin, node.output[0])])
            twins[node.output[0]] = (twin, None)
            return True
        elif node.op_type == "Add" and node.output[0] not in twins and any(i in twins for i in node.input):
            for plain in node.input:
                if plain in twins:
                    continue
                maker = producers.get(plain)
                if maker is None or maker.op_type not in ("ConvTranspose", "Conv", "Add", "LeakyRelu", "ReorderOutput"):
                    break  # a constant or a broadcast operand: leave this add as it is
                twin = f"{plain}__nhwc"  # transposed once, read by every add and leaky ReLU of the stage
                graph.node.insert(_index(graph, node), helper.make_node(
                    "Transpose", [plain], [twin], name=twin, perm=TO_CHANNELS_LAST))
                twins[plain] = (twin, None)
            else:
                twin = f"{node.output[0]}__nhwc"
                add = helper.make_node("Add", [twins[i][0] for i in node.input], [twin], name=twin)
                _replace(graph, node, [add, back(twin, node.output[0])])
                twins[node.output[0]] = (twin, None)
                return True
    return False


def _reorder_out(blocked: str, add, source):
    """The plain tensor ``add`` used to produce, reordered from ``blocked`` (dropped if nobody reads it)."""
    from onnx import helper

    node = helper.make_node("ReorderOutput", [blocked], [add.output[0]], name=add.output[0], domain=NCHWC)
    node.attribute.extend(source.attribute)  # channels (the unpadded count), channels_last
    return node


def _attr(node, name: str, default):
    from onnx import helper

    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _index(graph, node) -> int:
    return next(i for i, n in enumerate(graph.node) if n is node)


def _replace(graph, node, new: list) -> None:
    at = _index(graph, node)
    graph.node.remove(node)
    for offset, n in enumerate(new):
        graph.node.insert(at + offset, n)


def _tidy(graph, outputs: set[str]) -> None:
    """Drop what nobody reads, put the nodes back in order, forget the stale shapes."""
    _drop_dead(graph, outputs)
    _sort(graph)
    del graph.value_info[:]  # shapes of renamed tensors: ORT infers them again


def _drop_dead(graph, outputs: set[str]) -> None:
    while True:
        read = {i for n in graph.node for i in n.input} | outputs
        dead = [n for n in graph.node if not any(o in read for o in n.output)]
        if not dead:
            return
        for n in dead:
            graph.node.remove(n)


def _sort(graph) -> None:
    """Nodes in an order where every input is made before it is read (ONNX requires it)."""
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    order, pending = [], list(graph.node)
    while pending:
        waiting = []
        for n in pending:
            if all(i in ready for i in n.input):
                order.append(n)
                ready.update(n.output)
            else:
                waiting.append(n)
        if len(waiting) == len(pending):
            raise ValueError("the rewritten graph has a cycle")
        pending = waiting
    del graph.node[:]
    graph.node.extend(order)


# ------------------------------------------------------------------- cached builds


def kept_layouts_path(decoder: Path, cache_dir: str | Path | None = None) -> Path:
    """Where the build of ``decoder`` for this runtime and CPU kind is kept.

    The decoder is identified by its path, size and modification time, as the cut
    that wrote it is (:mod:`~studio.engine.onnx.split`: written atomically, never in
    place), not by hashing its 10-35 MB at every model process's start.
    """
    import onnxruntime

    stat = decoder.stat()
    key = hashlib.sha256(
        f"{decoder.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0layouts={LAYOUTS_VERSION}"
        f"\0ort={onnxruntime.__version__}\0cpu={','.join(notable_flags())}".encode()
    ).hexdigest()[:24]
    folder = Path(cache_dir) if cache_dir is not None else paths.cache_dir()
    return folder / "cpu" / f"{decoder.stem}.layouts-{key}.onnx"


def kept_layouts_decoder(decoder: Path, channels: int | str | None,
                         cache_dir: str | Path | None = None) -> Path | None:
    """The rewritten decoder (open it with graph optimizations off), or None to decode plain.

    ``channels``: the latent's channel count (the first half's output shape; a graph
    that leaves it open cannot be checked, and is decoded plain). None when neither
    pass finds anything to keep on this runtime and CPU, when both change the output
    beyond :data:`TOLERANCE`, or when the build fails; the answer is remembered on
    disk, so each machine tries once (a failure to write, such as a full disk, is not).
    """
    out = kept_layouts_path(Path(decoder), cache_dir)
    refused = out.with_suffix(".none")
    with build_lock(out.with_suffix(".lock")):
        if out.is_file():
            return out
        if refused.is_file():
            return None
        try:
            why = (_build(Path(decoder), channels, out) if isinstance(channels, int)
                   else f"the latent's channel count is not fixed ({channels!r})")
        except OSError as exc:  # a full disk, say: try again at the next load
            _LOGGER.warning("%s: decoding with ONNX Runtime's own layouts this time: %s", Path(decoder).name, exc)
            return None
        except Exception as exc:  # onnx / onnxruntime raise their own types; the same graph would fail again
            why = f"build failed ({type(exc).__name__}: {exc})"
        if why is None:
            return out
        _LOGGER.warning("%s: decoding with ONNX Runtime's own layouts: %s", Path(decoder).name, why)
        try:
            write_atomic(refused, why)
        except OSError:  # not remembered: the next load asks again
            pass
        return None


#: the rewrites, in the order they are tried; each is kept only if the audio stays the same
PASSES = (("blocked", keep_blocked), ("channels-last", keep_channels_last))


def _build(decoder: Path, channels: int, out: Path) -> str | None:
    """Optimize, rewrite pass by pass, check each, save; returns why not, or None when ``out`` was written."""
    import onnx
    import onnxruntime

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.stem}.", dir=out.parent) as work:
        optimized = Path(work) / "optimized.onnx"
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = 1
        options.optimized_model_filepath = str(optimized)
        options.log_severity_level = 3  # its "hardware specific" warning is the point: the build is keyed by the CPU
        _LOGGER.info("saving ONNX Runtime's optimized decoder for this CPU (hardware specific, keyed by its flags)")
        plain = onnxruntime.InferenceSession(str(decoder), sess_options=options, providers=["CPUExecutionProvider"])
        model = onnx.load(str(optimized))
        kept, refused = [], []
        for name, rewrite in PASSES:
            candidate = onnx.ModelProto()
            candidate.CopyFrom(model)
            rewrites = rewrite(candidate)
            if not rewrites:
                continue
            trial = Path(work) / f"{name}.onnx"
            onnx.save(candidate, str(trial))
            difference = _difference(plain, trial, channels)
            if difference > TOLERANCE:
                refused.append(f"{name}: differs by {difference:.2g} (tolerance {TOLERANCE:g})")
                continue
            model = candidate
            kept.append(f"{name}: {rewrites} rewrites, max difference {difference:.2g}")
            os.replace(trial, optimized)
        if refused:
            _LOGGER.warning("%s: rewrites dropped: %s", decoder.name, "; ".join(refused))
        if not kept:
            return "; ".join(refused) or "no convolution layout to keep across the residual adds"
        os.replace(optimized, out)
    _LOGGER.info("%s: decoder layouts kept (%s)", decoder.name, "; ".join(kept))
    return None


def _difference(plain, rewritten: Path, channels: int) -> float:
    """Largest difference between the two decoders' audio for one seeded latent."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(rewritten), sess_options=options, providers=["CPUExecutionProvider"])
    latent, mask = plain.get_inputs()[:2]
    z = (np.random.default_rng(0).standard_normal((1, channels, CHECK_FRAMES)) * 0.8).astype(np.float32)
    feeds = {latent.name: z, mask.name: np.ones((1, 1, CHECK_FRAMES), dtype=np.float32)}
    (a,) = plain.run(None, feeds)
    (b,) = session.run(None, feeds)
    return float(np.abs(a - b).max()) if a.shape == b.shape else float("inf")
