"""Tacotron 2 and its vocoder as ONNX graphs: the first step of the TensorRT INT8 path.

Why four graphs: Tacotron 2 is autoregressive, so a graph of the whole model would fix the
number of decoder steps. As in the seed's recipe it is exported as the encoder (ids to
encoder outputs and their attention projection), one decoder step with its state as
inputs and outputs (memory, context, the two LSTM cells' states, the attention weights
and their running sum), the postnet and the vocoder, each with dynamic batch and time
axes. A runner (here, ONNX Runtime on CPU; on a GPU, TensorRT engines built from the same
graphs) loops the step until each item's stop token fires.

Every graph runs coqui's own modules: the step sets the decoder's state attributes from
its inputs and calls coqui's ``Decoder.decode``; nothing of the model is restated. The
check (:func:`onnx_mels`, compared with :func:`studio.engine.coqui.batching.tacotron2_mels`
in the tests) runs one sentence through ONNX Runtime.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

GRAPHS = ("encoder", "decoder_step", "postnet", "vocoder")
STATE = ("context", "query", "attention_cell", "hidden", "cell", "weights", "weights_cum")


def _modules(model: Any, vocoder: Any) -> dict[str, Any]:
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids):  # noqa: ANN001, ANN202
            o = self.model.embedding(ids).transpose(1, 2)
            for layer in self.model.encoder.convolutions:
                o = layer(o)
            o, _ = self.model.encoder.lstm(o.transpose(1, 2))
            return o, self.model.decoder.attention.preprocess_inputs(o)

    class Step(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.decoder = model.decoder

        def forward(self, memory, context, query, attention_cell, hidden, cell, weights, weights_cum, inputs,  # noqa: ANN001, ANN202
                    processed):
            d, a = self.decoder, self.decoder.attention
            d.context, d.query, d.attention_rnn_cell_state = context, query, attention_cell
            d.decoder_hidden, d.decoder_cell = hidden, cell
            d.inputs, d.processed_inputs, d.mask = inputs, processed, None
            # coqui adds to the running sum in place: on a copy, so the graph outputs the new sum
            a.attention_weights, a.attention_weights_cum = weights, weights_cum.clone()
            out, _, stop = d.decode(d.prenet(memory))
            return (out, torch.sigmoid(stop), d.context, d.query, d.attention_rnn_cell_state, d.decoder_hidden,
                    d.decoder_cell, a.attention_weights, a.attention_weights_cum)

    class Postnet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.postnet = model.postnet

        def forward(self, mel):  # noqa: ANN001, ANN202
            return mel + self.postnet(mel)

    class Vocoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.vocoder = vocoder

        def forward(self, mel):  # noqa: ANN001, ANN202
            return self.vocoder.inference(mel)

    # in eval mode: the exporter puts a module back in the mode it found it in, recursively
    return {"encoder": Encoder().eval(), "decoder_step": Step().eval(), "postnet": Postnet().eval(),
            "vocoder": Vocoder().eval()}


def export_tacotron2(model: Any, vocoder: Any, out: Path, example_ids: Sequence[int]) -> dict[str, Path]:
    """The four graphs in ``out`` (ONNX opset 17, dynamic batch and time axes)."""
    import torch

    out.mkdir(parents=True, exist_ok=True)
    modules = _modules(model, vocoder)
    ids = torch.tensor([list(example_ids)])
    d = model.decoder
    with torch.no_grad():
        inputs, processed = modules["encoder"](ids)
    state = _zero_state(d, 1, ids.shape[1])
    paths = {name: out / f"{name}.onnx" for name in GRAPHS}
    bt = {0: "batch", 1: "time"}
    torch.onnx.export(modules["encoder"], (ids,), paths["encoder"], input_names=["ids"],
                      output_names=["inputs", "processed"], dynamic_axes={"ids": bt, "inputs": bt, "processed": bt},
                      opset_version=17, dynamo=False)
    step_in = ["memory", *STATE, "inputs", "processed"]
    step_out = ["frame", "stop", *(f"{s}_out" for s in STATE)]
    axes = {n: {0: "batch"} for n in step_in + step_out}
    for n in ("weights", "weights_cum", "weights_out", "weights_cum_out", "inputs", "processed"):
        axes[n] = bt
    torch.onnx.export(modules["decoder_step"], (torch.zeros(1, d.frame_channels * d.r), *state, inputs, processed),
                      paths["decoder_step"], input_names=step_in, output_names=step_out, dynamic_axes=axes,
                      opset_version=17, dynamo=False)
    mel = torch.zeros(1, d.frame_channels, 16)
    bct = {0: "batch", 2: "time"}
    torch.onnx.export(modules["postnet"], (mel,), paths["postnet"], input_names=["mel"], output_names=["postnet"],
                      dynamic_axes={"mel": bct, "postnet": bct}, opset_version=17, dynamo=False)
    torch.onnx.export(modules["vocoder"], (mel,), paths["vocoder"], input_names=["mel"], output_names=["audio"],
                      dynamic_axes={"mel": bct, "audio": bct}, opset_version=17, dynamo=False)
    return paths


def _zero_state(decoder: Any, batch: int, time: int) -> tuple[Any, ...]:
    import torch

    sizes = (decoder.encoder_embedding_dim, decoder.query_dim, decoder.query_dim, decoder.decoder_rnn_dim,
             decoder.decoder_rnn_dim)
    return (*(torch.zeros(batch, n) for n in sizes), torch.zeros(batch, time), torch.zeros(batch, time))


def onnx_mels(paths: dict[str, Path], ids: Sequence[int], max_steps: int, stop_threshold: float, frame_channels: int,
              threads: int = 1) -> Any:
    """One sentence's postnet mel ``[frames, mels]`` through ONNX Runtime, stopped as coqui stops one sentence."""
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    run = {name: ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
           for name, path in paths.items()}
    inputs, processed = run["encoder"].run(None, {"ids": np.asarray([list(ids)], dtype=np.int64)})
    step_inputs = [i.name for i in run["decoder_step"].get_inputs()]
    sizes = {i.name: i.shape[1] for i in run["decoder_step"].get_inputs()}
    feed = {name: np.zeros((1, inputs.shape[1] if name in ("weights", "weights_cum") else sizes[name]), np.float32)
            for name in ("memory", *STATE)}
    feed.update(inputs=inputs, processed=processed)
    frames = []
    for step in range(max_steps):
        frame, stop, *state = run["decoder_step"].run(None, {n: feed[n] for n in step_inputs})
        frames.append(frame)
        feed.update(zip(STATE, state), memory=frame)
        if step > 0 and float(stop.reshape(-1)[0]) > stop_threshold:
            break
    mel = np.concatenate(frames, axis=0).reshape(1, -1, frame_channels).transpose(0, 2, 1)
    (post,) = run["postnet"].run(None, {"mel": np.ascontiguousarray(mel, dtype=np.float32)})
    return post[0].T
