"""The voice's ONNX graph with the interface a Triton client can batch.

Why a new graph rather than serving the voice file as it is: the Piper graph pads
every item's audio to the longest one and does not say where each item ends (the
padding is not silent), and its ``scales`` input has no batch dimension, which
Triton's dynamic batcher needs on every input. So the exported graph:

* takes ``phoneme_ids`` [B, T], ``phoneme_lengths`` [B, 1] and ``scales`` [B, 3]
  (the first row is used: a batch shares one project's scales);
* exposes each item's true audio length, ``audio_lengths`` [B, 1], computed the way
  the local engine crops (``max(sum(durations) * hop, hop)``, durations from
  Piper's own alignment patch);
* returns ``audio`` [B, S], still padded: the client crops item ``i`` to its length.

The voice's weights and operators are untouched, so the audio is the local
engine's audio.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from studio.core.errors import EngineError
from studio.engine.triton.config import INPUT_IDS, INPUT_LENGTHS, INPUT_SCALES, OUTPUT_AUDIO, OUTPUT_LENGTHS
from studio.engine.waveform import limited

log = logging.getLogger(__name__)


def interface_model_bytes(model_path: Path | str, hop_length: int) -> bytes:
    """The serialized interface graph for the voice at ``model_path``."""
    try:
        import onnx
        from onnx import TensorProto, helper
        from piper.patch_voice_with_alignment import add_alignment_output
    except ImportError as exc:
        raise EngineError(f"exporting for Triton needs onnx and piper-tts: {exc}") from exc
    model = onnx.load(str(model_path))
    graph = model.graph
    names = {i.name for i in graph.input}
    if "sid" in names:
        raise EngineError(f"{Path(model_path).name}: multi-speaker voices are not exported for Triton yet")
    if not {"input", "input_lengths", "scales"} <= names:
        raise EngineError(f"{Path(model_path).name}: not a Piper voice graph (inputs {sorted(names)})")
    if len(graph.output) < 2:
        try:
            add_alignment_output(model)
        except ValueError as exc:
            raise EngineError(f"{Path(model_path).name}: cannot find the durations for audio lengths ({exc})") from exc
    audio_name, durations_name = graph.output[0].name, graph.output[1].name

    del graph.input[:]
    del graph.output[:]
    graph.input.extend([
        helper.make_tensor_value_info(INPUT_IDS, TensorProto.INT64, ["batch", "ids"]),
        helper.make_tensor_value_info(INPUT_LENGTHS, TensorProto.INT64, ["batch", 1]),
        helper.make_tensor_value_info(INPUT_SCALES, TensorProto.FLOAT, ["batch", 3]),
    ])
    graph.initializer.extend([
        helper.make_tensor("tri_axis1", TensorProto.INT64, [1], [1]),
        helper.make_tensor("tri_row0", TensorProto.INT64, [], [0]),
        helper.make_tensor("tri_hop", TensorProto.INT64, [], [int(hop_length)]),
    ])
    front = [
        helper.make_node("Identity", [INPUT_IDS], ["piper_input"], name="tri_ids"),
        helper.make_node("Squeeze", [INPUT_LENGTHS, "tri_axis1"], ["piper_input_lengths"], name="tri_lengths"),
        helper.make_node("Gather", [INPUT_SCALES, "tri_row0"], ["piper_scales"], name="tri_scales", axis=0),
    ]
    back = [
        helper.make_node("Flatten", [audio_name], [OUTPUT_AUDIO], name="tri_audio", axis=1),
        helper.make_node("Flatten", [durations_name], ["tri_dur2d"], name="tri_dur", axis=1),
        helper.make_node("Round", ["tri_dur2d"], ["tri_dur_round"], name="tri_round"),
        helper.make_node("Cast", ["tri_dur_round"], ["tri_dur_int"], name="tri_cast", to=TensorProto.INT64),
        helper.make_node("ReduceSum", ["tri_dur_int", "tri_axis1"], ["tri_frames"], name="tri_sum", keepdims=1),
        helper.make_node("Mul", ["tri_frames", "tri_hop"], ["tri_samples"], name="tri_mul"),
        helper.make_node("Max", ["tri_samples", "tri_hop"], [OUTPUT_LENGTHS], name="tri_min_one_frame"),
    ]
    nodes = [onnx.NodeProto() for _ in graph.node]
    renamed = {"input": "piper_input", "input_lengths": "piper_input_lengths", "scales": "piper_scales"}
    for copy, node in zip(nodes, graph.node):  # copies: clearing a repeated field may reuse its messages
        copy.CopyFrom(node)
        for k, name in enumerate(copy.input):  # the voice's inputs now come from the interface nodes
            if name in renamed:
                copy.input[k] = renamed[name]
    del graph.node[:]
    graph.node.extend(front + nodes + back)
    graph.output.extend([
        helper.make_tensor_value_info(OUTPUT_AUDIO, TensorProto.FLOAT, ["batch", "samples"]),
        helper.make_tensor_value_info(OUTPUT_LENGTHS, TensorProto.INT64, ["batch", 1]),
    ])
    onnx.checker.check_model(model)
    return model.SerializeToString()


def crop(audio: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
    """Each item's own audio from the padded output, limited like the local engines'."""
    audio = np.asarray(audio, dtype=np.float32).reshape(len(lengths), -1)
    out = []
    for row, n in enumerate(np.asarray(lengths).reshape(-1)):
        if int(n) > audio.shape[1]:
            raise EngineError(f"the server says item {row} has {int(n)} samples but sent {audio.shape[1]}")
        out.append(limited(audio[row, : int(n)]))
    return out
