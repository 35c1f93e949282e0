"""Piper VITS ``.onnx`` weights -> coqui-tts's torch ``Vits`` model.

The work is in three steps, one module each: :mod:`studio.engine.torchvits.onnx_reader` reads
the initializers back under their VITS names, :mod:`studio.engine.torchvits.arch`
derives the architecture and coqui's config from them, and this module maps every
tensor onto coqui's state dict. Import the first two steps' names from their own
modules.

The mapping is strict both ways (every inference tensor of coqui's model must
receive an ONNX weight, every ONNX parameter must find a place) because a
silently unassigned tensor still synthesizes, just noise. Two quirks of Piper's
export need help: ``dp.flows.0.logs`` (ElementwiseAffine of the stochastic
duration predictor) only survives as ``/dp/flows.0/Exp_output_0 = exp(-logs)``,
the factor of its reverse pass; and the ONNX holds weight-norm-folded weights, so
weight norm is removed from coqui's modules before loading, leaving a plain coqui
``Vits`` with ordinary ``weight`` tensors, ready for quantization / FP16 / export.

Parts of coqui's ``Vits`` that Piper's inference graph does not contain and that
inference never runs stay at their random init and are reported as
``training_only``: the posterior encoder (``posterior_encoder.*``), the SDP's
posterior flows (``duration_predictor.post_*``) and the SDP's first ConvFlow
(``duration_predictor.flows.1``, dropped by VITS's reverse pass as "useless vflow").

``torch`` and ``TTS`` are imported lazily inside :func:`build_coqui_vits`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from studio.engine.torchvits.arch import PiperVitsArch, coqui_config, derive_arch
from studio.engine.torchvits.onnx_reader import is_param_name, read_onnx_vits

if TYPE_CHECKING:  # pragma: no cover
    from TTS.tts.models.vits import Vits

log = logging.getLogger(__name__)

#: what Piper's exporter constant-folded ``dp.flows.0.logs`` into: ``exp(-logs)``
_FOLDED_EA_EXP = "/dp/flows.0/Exp_output_0"


def piper_to_coqui_name(name: str) -> str | None:
    """Coqui ``Vits`` state-dict key for a Piper parameter name (None: no counterpart)."""
    if name.startswith("enc_p."):
        return "text_encoder." + name[len("enc_p.") :]
    if name.startswith("dec."):
        return "waveform_decoder." + name[len("dec.") :]
    if m := re.match(r"flow\.flows\.(\d+)\.(.*)", name):
        i = int(m.group(1))
        # Piper: [coupling, Flip, coupling, Flip, ...]; coqui flips inside ResidualCouplingBlocks
        return f"flow.flows.{i // 2}.{m.group(2)}" if i % 2 == 0 else None
    if name == "dp.flows.0.m":
        return "duration_predictor.flows.0.translation"
    if name == "dp.flows.0.logs":
        return "duration_predictor.flows.0.log_scale"
    if m := re.match(r"dp\.flows\.(\d+)\.(.*)", name):
        i = int(m.group(1))
        # Piper: [EA, CF, Flip, CF, Flip, ...]; coqui: [EA, CF, CF, CF, CF]
        return f"duration_predictor.flows.{(i + 1) // 2}.{m.group(2)}" if i % 2 == 1 else None
    if name.startswith("dp."):
        return "duration_predictor." + name[len("dp.") :]
    return None


#: coqui state-dict prefixes that Piper's inference graph can never hold
_TRAINING_ONLY = (
    "posterior_encoder.",
    "duration_predictor.post_",
    "duration_predictor.flows.1.",
    "disc.",
)


@dataclass
class WeightsReport:
    """How the ONNX initializers landed in the coqui model."""

    arch: PiperVitsArch
    #: coqui key <- ONNX initializer name
    mapped: dict[str, str] = field(default_factory=dict)
    #: inference parameters/buffers of the coqui model that received nothing (must be empty)
    unmapped_model: list[str] = field(default_factory=list)
    #: coqui parameters that only training uses (left at init)
    training_only: list[str] = field(default_factory=list)
    #: ONNX initializers that did not go into the model (folded constants)
    unused_onnx: list[str] = field(default_factory=list)
    #: anonymous ONNX initializer -> recovered VITS name
    renamed: dict[str, str] = field(default_factory=dict)

    @property
    def n_mapped(self) -> int:
        return len(self.mapped)

    def summary(self) -> str:
        return (
            f"{self.n_mapped} tensors mapped ({len(self.renamed)} recovered from consumer scope), "
            f"{len(self.unmapped_model)} inference tensors unmapped, "
            f"{len(self.training_only)} training-only tensors left at init, "
            f"{len(self.unused_onnx)} ONNX initializers unused"
        )


def _remove_weight_norm(module) -> None:
    """Fold weight norm into plain ``weight`` tensors: the ONNX already holds the folded values."""
    from torch.nn.utils import parametrize

    for m in module.modules():
        if parametrize.is_parametrized(m, "weight"):
            parametrize.remove_parametrizations(m, "weight", leave_parametrized=True)
        elif hasattr(m, "weight_g") and hasattr(m, "weight_v"):  # old-style weight_norm hook
            import torch

            torch.nn.utils.remove_weight_norm(m)


def new_coqui_vits(arch: PiperVitsArch, voice_config: dict[str, Any]) -> "Vits":
    """An untrained coqui ``Vits`` shaped like ``arch``, weight norm removed, ready for weights.

    Shared by the ONNX path (:func:`build_coqui_vits`) and the compact-weights path
    (:mod:`studio.engine.torchvits.compact`), so both build exactly the same module tree.
    """
    from TTS.tts.models.vits import Vits

    import types

    config = coqui_config(arch, voice_config)
    tts_log = logging.getLogger("TTS")
    level = tts_log.level
    tts_log.setLevel(logging.ERROR)  # "Could not identify language", audio processor dump
    # coqui builds an AudioProcessor (mel filterbanks for training losses and plots) when
    # config.audio is one of its audio configs; inference never uses it, and building it
    # imports librosa's whole stack (scipy.signal, numba), which a machine that only runs
    # the model (the GPU check's) does not have. A plain copy of the audio facts skips it.
    audio = config.audio
    config.audio = types.SimpleNamespace(**audio.to_dict())
    try:
        model = Vits(config)
    finally:
        config.audio = audio
        tts_log.setLevel(level)
    if model.args.num_chars != arch.n_vocab or model.text_encoder.emb.num_embeddings != arch.n_vocab:
        raise ValueError(f"coqui built a {model.text_encoder.emb.num_embeddings}-row embedding, not {arch.n_vocab}")
    # the weights are weight-norm-folded: drop the parametrizations of every module
    # inference runs (the posterior encoder is training-only and keeps its own)
    for sub in (model.text_encoder, model.duration_predictor, model.flow, model.waveform_decoder):
        _remove_weight_norm(sub)
    return model


def is_training_only(key: str) -> bool:
    """True for coqui state-dict keys that Piper's inference graph never holds."""
    return key.startswith(_TRAINING_ONLY)


def build_coqui_vits(config_json_path: str | Path, onnx_path: str | Path) -> tuple[Vits, WeightsReport]:
    """A coqui-tts ``Vits`` carrying exactly the weights of a Piper ONNX voice (eval mode).

    Raises ``ValueError`` if any inference parameter of the coqui model stays unassigned
    or an ONNX tensor does not fit its target.
    """
    import torch

    voice_config = piper_voice_config(config_json_path)
    g = read_onnx_vits(onnx_path)
    arch = derive_arch(g, voice_config)
    model = new_coqui_vits(arch, voice_config)
    state = model.state_dict(keep_vars=True)
    report = WeightsReport(arch=arch, renamed=dict(g.renames))

    sources: dict[str, tuple[str, np.ndarray]] = {}
    for name, arr in g.initializers.items():
        target = piper_to_coqui_name(name)
        if target is None:
            continue
        if target in sources:
            raise ValueError(f"{target} would be assigned twice ({sources[target][0]}, {name})")
        sources[target] = (name, arr)
    ea_key = "duration_predictor.flows.0.log_scale"
    if ea_key not in sources and _FOLDED_EA_EXP in g.initializers:
        # reverse ElementwiseAffine: (x - m) * exp(-logs), folded to one constant
        exp_neg_logs = g.initializers[_FOLDED_EA_EXP].astype(np.float64)
        if np.any(exp_neg_logs <= 0):
            raise ValueError(f"{_FOLDED_EA_EXP} is not a positive exp(-logs)")
        sources[ea_key] = (_FOLDED_EA_EXP, (-np.log(exp_neg_logs)).astype(np.float32))

    with torch.no_grad():
        for target, (src, arr) in sources.items():
            if target not in state:
                raise ValueError(f"ONNX tensor {src} maps to {target}, which coqui's Vits does not have")
            tensor = state[target]
            if tuple(tensor.shape) != tuple(arr.shape):
                raise ValueError(f"{src} {tuple(arr.shape)} does not fit {target} {tuple(tensor.shape)}")
            tensor.copy_(torch.from_numpy(np.array(arr, copy=True)).to(tensor.dtype))
            report.mapped[target] = src

    used_sources = set(report.mapped.values())
    report.unused_onnx = sorted(n for n in g.initializers if n not in used_sources)
    for key in state:
        if key in report.mapped:
            continue
        if key.startswith(_TRAINING_ONLY):
            report.training_only.append(key)
        else:
            report.unmapped_model.append(key)
    if report.unmapped_model:
        raise ValueError(f"coqui Vits tensors without ONNX weights: {report.unmapped_model}")
    unused_params = [n for n in report.unused_onnx if is_param_name(n)]
    if unused_params:
        raise ValueError(f"ONNX parameters that found no place in coqui's Vits: {unused_params}")

    model.eval()
    log.info("Piper -> coqui Vits: %s", report.summary())
    if report.unused_onnx:
        log.info("unused ONNX initializers (folded constants): %s", report.unused_onnx)
    return model, report


def piper_voice_config(config_json_path: str | Path) -> dict[str, Any]:
    """The voice's ``.onnx.json``: cross-checks and what the graph cannot tell come from it."""
    return json.loads(Path(config_json_path).read_text(encoding="utf-8"))


__all__ = [
    "WeightsReport",
    "build_coqui_vits",
    "is_training_only",
    "new_coqui_vits",
    "piper_to_coqui_name",
    "piper_voice_config",
]
