"""Per-channel smoothing of the decoder's last stage (SmoothQuant-style), before INT8.

Why: the last HiFi-GAN stage works on a residual stream of C channels at the full
sample rate; every convolution there reads ``leaky_relu(stream)`` and adds its output
back. ONNX Runtime quantizes activations per tensor, so the few channels with large
peaks set the step for all of them. Dividing the stream's channel ``c`` by ``s_c``
everywhere (folded into the weights and biases of the upsampler that makes the
stream, of every convolution that adds to it, and into the input weights of every
convolution that reads it) leaves the FP32 math unchanged -- ``leaky_relu`` is
positively homogeneous and the rest is linear -- while giving every channel a similar
range: ``s_c = a_c^alpha / w_c^(1 - alpha)`` with ``a_c`` the channel's activation peak
and ``w_c`` the largest weight that reads it (SmoothQuant's rule).

Pure graph surgery plus one FP32 pass over calibration feeds for the statistics.
"""

from __future__ import annotations

import logging
import re
from typing import Iterable, Mapping

import numpy as np

_LOGGER = logging.getLogger(__name__)
_RESBLOCK = re.compile(r"^/dec/resblocks\.(\d+)/")
_UPS = re.compile(r"^/dec/ups\.(\d+)/")


def _last_stage(model) -> tuple[object, list, object] | None:
    """``(last upsampler, the last stage's resblock convs, conv_post)``, or None if the graph differs."""
    nodes = list(model.graph.node)
    ups = sorted((int(m.group(1)), n) for n in nodes if n.op_type == "ConvTranspose" and (m := _UPS.match(n.name)))
    blocks = {int(m.group(1)) for n in nodes if (m := _RESBLOCK.match(n.name))}
    post = [n for n in nodes if n.op_type == "Conv" and n.name.startswith("/dec/conv_post/")]
    if not ups or not blocks or len(post) != 1:
        return None
    per_stage = max(1, len(blocks) // len(ups))
    last = len(ups) - 1
    convs = [n for n in nodes if n.op_type == "Conv" and (m := _RESBLOCK.match(n.name))
             and int(m.group(1)) // per_stage == last]
    return (ups[-1][1], convs, post[0]) if convs else None


def activation_peaks(model, feeds: Iterable[Mapping[str, np.ndarray]]) -> np.ndarray | None:
    """Per-channel peak ``|a|`` of the last stage's stream as its convolutions see it.

    Over the inputs (``leaky_relu(stream)``) and outputs of the stage's convolutions and
    conv_post's input; per sentence the channel maximum, then the median over sentences
    (one freak sentence should not set the scale). None: not a Piper decoder.
    """
    import onnx
    import onnxruntime as ort

    found = _last_stage(model)
    if found is None:
        return None
    _, convs, post = found
    names = sorted({n.input[0] for n in convs} | {n.output[0] for n in convs} | {post.input[0]})
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for name in names:
        probe.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(probe.SerializeToString(), options, providers=["CPUExecutionProvider"])
    per_sentence = []
    for feed in feeds:
        outs = session.run(names, dict(feed))
        per_sentence.append(np.max([np.abs(o[0]).max(axis=-1) for o in outs], axis=0))
    if not per_sentence:
        return None
    return np.median(np.stack(per_sentence), axis=0)


def smooth_last_stage(model, peaks: np.ndarray, alpha: float) -> np.ndarray | None:
    """Fold per-channel scales into the last stage (in place); returns the scales ``s``.

    Stream channel ``c`` becomes ``x_c / s_c``. None (model untouched): not a Piper decoder
    or the channel counts do not match ``peaks``.
    """
    from onnx import numpy_helper

    found = _last_stage(model)
    if found is None:
        return None
    ups, convs, post = found
    inits = {i.name: i for i in model.graph.initializer}

    def arr(name: str) -> np.ndarray:
        return numpy_helper.to_array(inits[name]).astype(np.float64)

    channels = peaks.size
    readers = [arr(n.input[1]) for n in convs] + [arr(post.input[1])]
    if any(w.shape[1] != channels for w in readers) or arr(ups.input[1]).shape[1] != channels:
        return None
    w_peak = np.max([np.abs(w).max(axis=(0, 2)) for w in readers], axis=0)
    s = np.power(np.maximum(peaks, 1e-6), alpha) / np.power(np.maximum(w_peak, 1e-6), 1.0 - alpha)
    s = s / np.exp(np.mean(np.log(s)))  # geometric mean 1: the stream keeps its overall size

    def put(name: str, value: np.ndarray) -> None:
        old = inits[name]
        new = numpy_helper.from_array(value.astype(np.float32), name)
        old.CopyFrom(new)

    put(ups.input[1], arr(ups.input[1]) / s[None, :, None])  # ConvTranspose weight: [in, out, k]
    if len(ups.input) > 2:
        put(ups.input[2], arr(ups.input[2]) / s)
    for n in convs:
        put(n.input[1], arr(n.input[1]) * s[None, :, None] / s[:, None, None])
        if len(n.input) > 2:
            put(n.input[2], arr(n.input[2]) / s)
    put(post.input[1], arr(post.input[1]) * s[None, :, None])
    _LOGGER.info("smoothed the last decoder stage (alpha %.2f): scales %.3g..%.3g", alpha, s.min(), s.max())
    return s
