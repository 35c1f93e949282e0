"""What a Piper voice's engines share per model and process (:mod:`studio.engine.shared` shares it):
the ONNX Runtime sessions of the whole graph or its two halves, and how they were cut."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class LoadedModel:
    """What an engine needs from its loaded model (see ``OnnxPiperEngine.load``)."""

    session: Any  # onnxruntime.InferenceSession: the whole graph, or its first half
    decoder: Any  # the second half (None: whole sentences)
    cut: tuple[str, str]
    has_alignment: bool
    window_frames: int
    providers: list[str]
    #: where the first half takes and returns the sampling noise (split.PriorNoise; None: whole graph)
    noise: Any = None
    #: the decoder session runs :mod:`studio.engine.onnx.residual_layouts`' build
    decoder_layouts_kept: bool = False
