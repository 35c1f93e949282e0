"""The offline INT8 model's convolutions widened back to float32, built once per model.

Why: the offline model is dynamically quantized (ONNX Runtime's ``quantize_dynamic``):
every convolution is ``DynamicQuantizeLinear -> ConvInteger -> (+ bias) -> Cast -> Mul``.
ONNX Runtime has no fast kernel for ``ConvInteger`` on a CPU (it is most of the
model's time), while its float ``Conv`` is one of its best. Widening each of them to a
float ``Conv`` whose weights are the INT8 weights dequantized keeps the model's own
numbers (the same weights, only the activations are no longer rounded to 8 bits) and
leaves the matrix products (``MatMulInteger``, the LSTMs), which are fast, as they are.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from studio.core.errors import EngineError
from studio.engine.kokoro.graph import save_rewritten


def widen_convolutions(source: Path, target: Path, scope: str = "") -> int:
    """Write ``source`` with every quantized convolution whose name starts with ``scope`` as a
    float ``Conv`` to ``target``; returns how many were widened (0: nothing to widen,
    ``target`` not written)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list] = defaultdict(list)
    for node in graph.node:
        for name in node.input:
            consumers[name].append(node)

    def only_consumer(name: str, op: str):
        nodes = consumers.get(name, [])
        return nodes[0] if len(nodes) == 1 and nodes[0].op_type == op else None

    def array(name: str) -> np.ndarray:
        if name not in inits:
            raise EngineError(f"{source.name}: {name} is not a constant; not a dynamically quantized model")
        return numpy_helper.to_array(inits[name])

    drop, new_nodes, new_inits = set(), {}, []
    for node in graph.node:
        if node.op_type != "ConvInteger" or not node.name.startswith(scope):
            continue
        quantize = producer.get(node.input[0])
        if quantize is None or quantize.op_type != "DynamicQuantizeLinear":
            continue
        bias_add = only_consumer(node.output[0], "Add")
        cast = only_consumer((bias_add or node).output[0], "Cast")
        scale_mul = only_consumer(cast.output[0], "Mul") if cast is not None else None
        if scale_mul is None:
            continue
        scale_name = next(i for i in scale_mul.input if i != cast.output[0])
        scale_node = producer.get(scale_name)
        weight_scale = next((i for i in scale_node.input if i in inits), None) if scale_node is not None else None
        if weight_scale is None:
            continue
        zero = array(node.input[3]).astype(np.float32) if len(node.input) > 3 and node.input[3] else np.float32(0)
        weight = (array(node.input[1]).astype(np.float32) - zero) * array(weight_scale).astype(np.float32)
        inputs = [quantize.input[0], f"{node.name}_widened_weight"]
        new_inits.append(numpy_helper.from_array(weight.astype(np.float32), inputs[1]))
        if bias_add is not None:
            bias = _float_bias(bias_add, node.output[0], producer, inits)
            if bias is None:
                continue
            inputs.append(f"{node.name}_widened_bias")
            new_inits.append(numpy_helper.from_array(bias, inputs[2]))
        conv = helper.make_node("Conv", inputs, list(scale_mul.output), name=f"{node.name}_widened")
        conv.attribute.extend(a for a in node.attribute if a.name != "auto_pad" or a.s != b"NOTSET")
        new_nodes[id(scale_mul)] = conv
        drop.update({id(node), id(cast)} | ({id(bias_add)} if bias_add is not None else set()))
    if not new_nodes:
        return 0
    nodes = [new_nodes.get(id(n), n) for n in graph.node if id(n) not in drop]
    nodes = _live(nodes, {o.name for o in graph.output})
    save_rewritten(model, nodes, new_inits, target)
    return len(new_nodes)


def _float_bias(bias_add, conv_out: str, producer: dict, inits: dict) -> np.ndarray | None:
    """The float bias the quantizer rounded at run time (``bias / scale``), found by walking
    back from the int32 bias to its float initializer."""
    from onnx import numpy_helper

    name = next(i for i in bias_add.input if i != conv_out)
    for _ in range(6):
        node = producer.get(name)
        if node is None:
            return None
        if node.op_type == "Div":
            if node.input[0] in inits:
                return numpy_helper.to_array(inits[node.input[0]]).astype(np.float32).ravel()
            return None
        name = node.input[0]
    return None


def _live(nodes: list, outputs: set[str]) -> list:
    """The nodes the graph's outputs still need, in their order (the replaced ones' feeders drop out)."""
    producer = {o: n for n in nodes for o in n.output}
    needed, stack = set(), list(outputs)
    while stack:
        name = stack.pop()
        node = producer.get(name)
        if node is None or id(node) in needed:
            continue
        needed.add(id(node))
        stack.extend(i for i in node.input if i)
        for attr in node.attribute:  # subgraphs (Loop, If) read outer names
            for sub in ([attr.g] if attr.g.node else []) + list(attr.graphs):
                stack.extend(i for n in sub.node for i in n.input if i)
    return [n for n in nodes if id(n) in needed]


def convolutions_to_2d(model) -> int:
    """Run each 1-D float ``Conv`` as a 2-D one on ``[N, C, 1, T]`` (same math), in place.

    Why: ONNX Runtime's CPU provider runs 2-D float convolutions in its blocked NCHWc
    layout (AVX2/AVX-512 kernels) and 1-D ones through im2col + GEMM; Kokoro's
    HiFi-GAN/iSTFT decoder is almost all 1-D convolutions over long signals.
    """
    from onnx import helper, numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    axes = "studio_axes_2"
    graph.initializer.append(numpy_helper.from_array(np.array([2], np.int64), axes))
    out, count = [], 0
    for node in graph.node:
        weight = inits.get(node.input[1]) if node.op_type == "Conv" and len(node.input) > 1 else None
        if weight is None or len(weight.dims) != 3 or weight.dims[0] < 8:
            out.append(node)
            continue
        w = numpy_helper.to_array(weight)
        weight.CopyFrom(numpy_helper.from_array(w.reshape(w.shape[0], w.shape[1], 1, w.shape[2]), weight.name))
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        pads = list(attrs.get("pads", [0, 0]))
        new_attrs = {"kernel_shape": [1, w.shape[2]], "pads": [0, pads[0], 0, pads[1]],
                     "strides": [1, *attrs.get("strides", [1])], "dilations": [1, *attrs.get("dilations", [1])],
                     "group": attrs.get("group", 1)}
        x4, y4 = f"{node.name}_in4d", f"{node.name}_out4d"
        out.append(helper.make_node("Unsqueeze", [node.input[0], axes], [x4], name=f"{node.name}_unsqueeze"))
        out.append(helper.make_node("Conv", [x4, *node.input[1:]], [y4], name=node.name, **new_attrs))
        out.append(helper.make_node("Squeeze", [y4, axes], list(node.output), name=f"{node.name}_squeeze"))
        count += 1
    del graph.node[:]
    graph.node.extend(out)
    return count
