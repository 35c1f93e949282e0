"""The INT8 model's convolutions as integer matrix products with signed weights, built once per model.

Why: the published model stores its convolution weights as unsigned bytes, and ONNX Runtime's
CPU ``ConvInteger`` takes only unsigned weights, so every convolution (most of Kokoro's time) runs
its unsigned-by-unsigned integer product. Its ``MatMulInteger`` also takes signed weights, which
run on the CPU's unsigned-by-signed dot-product instructions (VNNI): 1.3-2.4x faster per
convolution (docs/kokoro.md). A weight byte ``w`` with zero point ``z`` becomes ``w - 128`` with
zero point ``z - 128``: the same differences, so the same integer sums, bit for bit, where the CPU
adds them in 32 bits (VNNI). Without VNNI ONNX Runtime's unsigned-by-signed kernel adds byte pairs
in 16 bits first, which can saturate, so the build is used only on CPUs with VNNI
(:func:`exact_here`) and only after it gave the published model's audio on a test sentence.

Each ``ConvInteger`` (1-D, stride 1, one group, constant weights) becomes: its input put time-first,
padded with its own zero point, its ``k`` taps side by side (im2col in bytes, one ``Gather``), one
``MatMulInteger`` against the reordered weights, and the product put channel-first again. The nodes
around it (the input's quantization, the bias, the scales) are untouched.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from studio.engine import cpu_features
from studio.engine.kokoro.graph import save_rewritten

#: CPU flags under which ONNX Runtime's unsigned-by-signed integer product sums in 32 bits
EXACT_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")


def exact_here() -> bool:
    """Whether this CPU's flags name VNNI, where the signed-weight build sums as the published model does."""
    return any(f in cpu_features.cpu_flags() for f in EXACT_FLAGS)


def convolutions_as_matmuls(source: Path, target: Path) -> int:
    """Write ``source`` with its integer convolutions as signed-weight ``MatMulInteger`` to ``target``;
    returns how many were rewritten (0: none, ``target`` not written)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    out, new_inits, count = [], [], 0
    shared = {"axis": "studio_int_axis_1", "zero": "studio_int_zero", "one": "studio_int_one"}
    new_inits += [numpy_helper.from_array(np.array([1], np.int64), shared["axis"]),
                  numpy_helper.from_array(np.array(0, np.int64), shared["zero"]),
                  numpy_helper.from_array(np.array(1, np.int64), shared["one"])]
    for node in graph.node:
        plan = _plan(node, inits) if node.op_type == "ConvInteger" else None
        if plan is None:
            out.append(node)
            continue
        weight, zero_point, kernel, dilation, pads = plan
        name, x, x_zero = node.name or node.output[0], node.input[0], node.input[2]
        channels = weight.shape[1]
        signed = (weight.astype(np.int16) - 128).astype(np.int8)  # [O, C, k]
        columns = np.ascontiguousarray(signed.transpose(2, 1, 0).reshape(kernel * channels, weight.shape[0]))
        new_inits += [numpy_helper.from_array(columns, f"{name}_signed_weight"),
                      numpy_helper.from_array((zero_point.astype(np.int16) - 128).astype(np.int8),
                                              f"{name}_signed_zero")]
        rows = f"{name}_time_first"
        out.append(helper.make_node("Transpose", [x], [rows], name=f"{name}_to_time", perm=[0, 2, 1]))
        if kernel > 1:
            padded, offsets = f"{name}_padded", f"{name}_offsets"
            new_inits += [numpy_helper.from_array(np.array([0, pads[0], 0, 0, pads[1], 0], np.int64), f"{name}_pads"),
                          numpy_helper.from_array(np.arange(0, kernel * dilation, dilation, dtype=np.int64)[None],
                                                  offsets),
                          numpy_helper.from_array(np.array([0, -1, kernel * channels], np.int64), f"{name}_shape")]
            out += [helper.make_node("Pad", [rows, f"{name}_pads", x_zero], [padded], name=f"{name}_pad"),
                    helper.make_node("Shape", [x], [f"{name}_dims"], name=f"{name}_dims", start=2),
                    helper.make_node("Squeeze", [f"{name}_dims"], [f"{name}_length"], name=f"{name}_length"),
                    helper.make_node("Range", [shared["zero"], f"{name}_length", shared["one"]], [f"{name}_times"],
                                     name=f"{name}_times"),
                    helper.make_node("Unsqueeze", [f"{name}_times", shared["axis"]], [f"{name}_starts"],
                                     name=f"{name}_starts"),
                    helper.make_node("Add", [f"{name}_starts", offsets], [f"{name}_taps"], name=f"{name}_taps"),
                    helper.make_node("Gather", [padded, f"{name}_taps"], [f"{name}_gathered"], name=f"{name}_im2col",
                                     axis=1),
                    helper.make_node("Reshape", [f"{name}_gathered", f"{name}_shape"], [f"{name}_columns"],
                                     name=f"{name}_columns")]
            rows = f"{name}_columns"
        product = f"{name}_product"
        out.append(helper.make_node("MatMulInteger", [rows, f"{name}_signed_weight", x_zero, f"{name}_signed_zero"],
                                    [product], name=f"{name}_matmul"))
        out.append(helper.make_node("Transpose", [product], list(node.output), name=f"{name}_to_channels",
                                    perm=[0, 2, 1]))
        count += 1
    if not count:
        return 0
    save_rewritten(model, out, new_inits, target)
    return count


def _plan(node, inits: dict) -> tuple[np.ndarray, np.ndarray, int, int, tuple[int, int]] | None:
    """``(weights, weight zero point, kernel, dilation, pads)`` of a convolution this rewrite can take."""
    from onnx import helper, numpy_helper

    if len(node.input) < 4 or node.input[1] not in inits or node.input[3] not in inits or not node.input[2]:
        return None
    weight = numpy_helper.to_array(inits[node.input[1]])
    zero_point = numpy_helper.to_array(inits[node.input[3]])
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if weight.dtype != np.uint8 or weight.ndim != 3 or zero_point.size not in (1, weight.shape[0]):
        return None
    if attrs.get("group", 1) != 1 or list(attrs.get("strides", [1])) != [1]:
        return None
    if attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        return None
    pads = tuple(int(p) for p in attrs.get("pads", [0, 0]))
    zero_point = zero_point.reshape(-1) if zero_point.size > 1 else zero_point.reshape(())
    return weight, zero_point, weight.shape[2], int(attrs.get("dilations", [1])[0]), (pads[0], pads[1])


def difference(published: Path, built: Path) -> float:
    """The largest sample difference between two Kokoro models' audio for one seeded test input."""
    import onnxruntime as ort

    rng = np.random.default_rng(7)
    feed = {"tokens": np.array([[0, *rng.integers(1, 178, 40), 0]], np.int64),
            "style": (rng.standard_normal((1, 256)) * 0.15).astype(np.float32), "speed": np.ones(1, np.float32)}
    options = ort.SessionOptions()  # not the engine's options: the engine's module imports this one's caller
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    audio = [ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, feed)[0]
             for path in (published, built)]
    if audio[0].shape != audio[1].shape:
        return float("inf")
    return float(np.max(np.abs(audio[0].astype(np.float64) - audio[1])))
