"""Export the torch VITS (coqui ``Vits`` with a Piper voice's weights) to ONNX.

Two variants, both with dynamic batch and length axes:

``full``
    Piper's own signature, the whole ``infer`` graph:
    ``input [B, T] int64, input_lengths [B] int64, scales [3] float32 ->
    output [B, 1, T_wav] float32, output_lengths [B] int64``. The audio length is
    data dependent (it comes from the predicted durations), which every runtime
    must support (ONNX Runtime does; TensorRT needs an output allocator).

``flow_decoder``
    Only the reverse flow + HiFi-GAN decoder:
    ``z_p [B, C, T_y] float32, y_mask [B, 1, T_y] float32 -> output [B, 1, T_y*hop]``.
    ``z_p`` is the expanded prior *after* the noise has been added
    (``m_p + eps * exp(logs_p) * noise_scale``), so the graph is deterministic and
    every shape is a plain function of the input shape. This part is ~90% of the
    FLOPs (the decoder upsamples 256x) and contains only convolutions, so it is the
    part that always builds in TensorRT. The text encoder and the stochastic
    duration predictor (small, data-dependent shapes, random ops) stay in torch:
    :func:`~studio.engine.torchvits.infer.encode_latents` runs them,
    :func:`~studio.engine.torchvits.infer.split_infer` glues both halves.

Why the TorchScript-based exporter (``dynamo=False``): the output length depends
on tensor *values* (``ceil(durations)``), which ``torch.export`` cannot express
without rewriting coqui's modules; the tracer handles it the same way Piper's own
export does. Its warnings about Python booleans come from coqui's shape asserts
and the relative-attention window padding (taken for inputs longer than the
window, which every real sentence is: BOS + pads + phonemes >= 6 ids).
"""

from __future__ import annotations

import copy
import logging
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from studio.core.files import sha256_file
from studio.engine.torchvits.infer import encode_latents, flow_decode

if TYPE_CHECKING:  # pragma: no cover
    import torch

_LOGGER = logging.getLogger(__name__)

VARIANTS = ("full", "flow_decoder")
FULL_INPUTS = ("input", "input_lengths", "scales")
FULL_OUTPUTS = ("output", "output_lengths")
FLOW_DECODER_INPUTS = ("z_p", "y_mask")
FLOW_DECODER_OUTPUTS = ("output",)
DEFAULT_OPSET = 17
#: bump when the exported graphs change (names, signature, ops): it enters the
#: TensorRT plan cache key, so plans built from an older export are not reused
EXPORTER_VERSION = 2


@dataclass(frozen=True)
class ExportResult:
    """One exported graph and what it takes / returns."""

    path: Path
    variant: str
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    opset: int
    seconds: float
    hop_length: int
    latent_channels: int
    sha256: str = field(default="")

    @property
    def size_bytes(self) -> int:
        return self.path.stat().st_size


_FD_CLASS = None


def flow_decoder_module(model) -> "torch.nn.Module":
    """An ``nn.Module`` ``(z_p, y_mask) -> audio [B, 1, T]`` sharing ``model``'s weights."""
    global _FD_CLASS
    if _FD_CLASS is None:
        import torch

        class VitsFlowDecoder(torch.nn.Module):
            """Reverse flow + waveform decoder of a coqui ``Vits``."""

            def __init__(self, vits) -> None:
                super().__init__()
                self.flow = vits.flow
                self.waveform_decoder = vits.waveform_decoder

            def forward(self, z_p, y_mask):
                return flow_decode(self, z_p, y_mask)

        _FD_CLASS = VitsFlowDecoder
    return _FD_CLASS(model)


def full_module(model, hop_length: int) -> "torch.nn.Module":
    """Piper's ONNX signature ``(input, input_lengths, scales) -> (output [B,1,T], output_lengths)``.

    The same module ``TorchVitsEngine.infer_module`` serves, so the export and the
    engine can never drift apart.
    """
    from studio.engine.torchvits.engine import infer_module_class

    return infer_module_class()(model, hop_length)


# ------------------------------------------------------------------ export


def _model_and_hop(source) -> tuple[Any, int]:
    """(coqui Vits, hop length) from a TorchVitsEngine or ``(model, hop)``."""
    if isinstance(source, tuple):
        return source[0], int(source[1])
    model = source.model  # TorchVitsEngine loads on access
    return model, int(getattr(source, "hop_length", 256))


def _export_copy(model):
    """The model itself when it is fp32 on CPU, else an fp32 CPU copy (export on CPU)."""
    param = next(model.parameters())
    if param.device.type == "cpu" and param.dtype == __import__("torch").float32:
        return model
    return copy.deepcopy(model).float().cpu()


def _example_ids(batch: int, vocab: int, seed: int = 0) -> tuple["torch.Tensor", "torch.Tensor"]:
    """A padded batch of different-length id sequences shaped like real sentences."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    lengths = [40 - 9 * i for i in range(batch)]
    lengths = [max(l, 12) for l in lengths]
    x = torch.zeros(batch, max(lengths), dtype=torch.long)
    for b, n in enumerate(lengths):
        x[b, :n] = torch.randint(1, min(vocab, 120), (n,), generator=gen)
        x[b, 0] = 1  # BOS
    return x, torch.tensor(lengths, dtype=torch.long)


def export_onnx(
    source,
    path: str | Path,
    variant: str = "full",
    *,
    opset: int = DEFAULT_OPSET,
    example_batch: int = 2,
) -> ExportResult:
    """Export ``source`` (a TorchVitsEngine, or ``(vits_model, hop_length)``) to ``path``.

    ``variant`` is ``"full"`` or ``"flow_decoder"`` (see the module doc). The export
    runs on CPU in fp32 (a copy is made if the engine lives on CUDA / in fp16).
    """
    import torch

    if variant not in VARIANTS:
        raise ValueError(f"unknown export variant {variant!r}; choose one of {VARIANTS}")
    model, hop = _model_and_hop(source)
    model = _export_copy(model).eval()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    vocab = model.text_encoder.emb.num_embeddings
    x, x_lengths = _example_ids(example_batch, vocab)

    with torch.inference_mode():
        lat = encode_latents(model, x, x_lengths, 0.0, 1.0, 0.0)
    channels = int(lat.z_p.shape[1])

    if variant == "full":
        module = full_module(model, hop).eval()
        args = (x, x_lengths, torch.tensor([0.667, 1.0, 0.8], dtype=torch.float32))
        inputs, outputs = FULL_INPUTS, FULL_OUTPUTS
        axes = {
            "input": {0: "batch", 1: "phonemes"},
            "input_lengths": {0: "batch"},
            "output": {0: "batch", 2: "samples"},
            "output_lengths": {0: "batch"},
        }
    else:
        module = flow_decoder_module(model).eval()
        args = (lat.z_p.clone(), lat.y_mask.clone())
        inputs, outputs = FLOW_DECODER_INPUTS, FLOW_DECODER_OUTPUTS
        axes = {
            "z_p": {0: "batch", 2: "frames"},
            "y_mask": {0: "batch", 2: "frames"},
            "output": {0: "batch", 2: "samples"},
        }

    start = time.perf_counter()
    with warnings.catch_warnings():
        # coqui's asserts / window padding under tracing: see the module doc
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(
                module,
                args,
                str(path),
                dynamo=False,
                opset_version=opset,
                input_names=list(inputs),
                output_names=list(outputs),
                dynamic_axes=axes,
                do_constant_folding=True,
            )
    seconds = time.perf_counter() - start
    result = ExportResult(
        path=path,
        variant=variant,
        input_names=tuple(inputs),
        output_names=tuple(outputs),
        opset=opset,
        seconds=seconds,
        hop_length=hop,
        latent_channels=channels,
        sha256=sha256_file(path),
    )
    _LOGGER.info("exported %s VITS to %s in %.1f s (%.1f MiB)", variant, path, seconds, result.size_bytes / 2**20)
    return result


# ------------------------------------------------------------------ checking


def pad_ids(id_seqs: Sequence[Sequence[int]], pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(ids [B, T] int64, lengths [B] int64)`` zero-padded."""
    lengths = np.array([len(s) for s in id_seqs], dtype=np.int64)
    ids = np.full((len(id_seqs), int(lengths.max())), pad_id, dtype=np.int64)
    for row, seq in enumerate(id_seqs):
        ids[row, : len(seq)] = seq
    return ids, lengths


__all__ = [
    "VARIANTS",
    "ExportResult",
    "flow_decoder_module",
    "full_module",
    "export_onnx",
    "pad_ids",
]
