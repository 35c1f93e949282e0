"""A Piper voice's inference weights as one compact safetensors file, already mapped to coqui.

Why: the torch engine normally reads the voice's ``.onnx`` and maps every initializer
onto coqui's ``Vits`` (:mod:`studio.engine.torchvits.weights`). A machine that only
runs the model (a GPU box for a timed check, with a 64 MiB limit on what travels
there) needs neither the ONNX parsing nor the 60 MB float32 file: this module stores
the *mapped* state dict (coqui key -> tensor, inference tensors only) in float16
with the derived architecture in the file's metadata, and builds the same ``Vits``
from it. Float16 halves the size; every tensor is widened back to float32 on load,
so a float32 model built from this file differs from the ONNX one only by the
weights' float16 rounding (both precisions of a comparison then share the weights).

The file is standard safetensors (``safetensors.numpy`` writes and reads it), so it
holds plain arrays and no pickled code.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from studio.engine.torchvits.arch import PiperVitsArch
from studio.engine.torchvits.weights import WeightsReport, is_training_only, new_coqui_vits, piper_voice_config

if TYPE_CHECKING:  # pragma: no cover
    from TTS.tts.models.vits import Vits

log = logging.getLogger(__name__)

#: the ``format`` metadata value; bump it when the layout changes
COMPACT_FORMAT = "studio-vits-compact/1"
COMPACT_SUFFIX = ".safetensors"


def is_compact(path: str | Path) -> bool:
    """True when ``path`` names compact weights (by suffix) rather than a Piper ``.onnx``."""
    return Path(path).suffix == COMPACT_SUFFIX


def save_compact(
    model: "Vits", report: WeightsReport, path: str | Path, *, dtype: str = "float16", source: str = ""
) -> dict[str, Any]:
    """Write ``model``'s inference tensors (those ``report`` mapped) to ``path``.

    Returns the metadata written. ``source`` (e.g. the ONNX file's sha256) is kept
    in the metadata so a reader can tell which voice file the weights came from.
    """
    from safetensors.numpy import save_file

    state = model.state_dict()
    tensors = {}
    for key in sorted(report.mapped):
        arr = state[key].detach().float().cpu().numpy()
        tensors[key] = np.ascontiguousarray(arr.astype(dtype))
    meta = {
        "format": COMPACT_FORMAT,
        "arch": json.dumps(asdict(report.arch), sort_keys=True),
        "dtype": dtype,
        "source": source,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata=meta)
    log.info("compact weights: %d tensors, %.1f MiB (%s) -> %s", len(tensors), path.stat().st_size / 2**20, dtype, path)
    return meta


def read_compact(path: str | Path) -> tuple[PiperVitsArch, dict[str, np.ndarray], dict[str, str]]:
    """``(arch, {coqui key: array}, metadata)`` from a compact file; ValueError if it is not one."""
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as fh:
        meta = dict(fh.metadata() or {})
        if meta.get("format") != COMPACT_FORMAT:
            raise ValueError(f"{path}: not a {COMPACT_FORMAT} file (format {meta.get('format')!r})")
        tensors = {key: fh.get_tensor(key) for key in fh.keys()}
    raw = json.loads(meta["arch"])
    raw["resblock_kernel_sizes"] = tuple(raw["resblock_kernel_sizes"])
    raw["resblock_dilation_sizes"] = tuple(tuple(d) for d in raw["resblock_dilation_sizes"])
    raw["upsample_rates"] = tuple(raw["upsample_rates"])
    raw["upsample_kernel_sizes"] = tuple(raw["upsample_kernel_sizes"])
    return PiperVitsArch(**raw), tensors, meta


def load_compact(config_json_path: str | Path, path: str | Path) -> tuple["Vits", WeightsReport]:
    """coqui ``Vits`` (eval mode, float32) from compact weights; strict like the ONNX path.

    Every inference tensor of the model must be in the file and every tensor of the
    file must fit a tensor of the model: a silently unassigned tensor still speaks,
    just noise.
    """
    import torch

    voice_config = piper_voice_config(config_json_path)
    arch, tensors, meta = read_compact(path)
    if int(voice_config.get("audio", {}).get("sample_rate", arch.sample_rate)) != arch.sample_rate:
        raise ValueError(f"{path}: sample rate {arch.sample_rate} does not match {config_json_path}")
    model = new_coqui_vits(arch, voice_config)
    state = model.state_dict(keep_vars=True)
    report = WeightsReport(arch=arch)
    with torch.no_grad():
        for key, arr in tensors.items():
            if key not in state:
                raise ValueError(f"{path}: tensor {key} has no place in coqui's Vits")
            target = state[key]
            if tuple(target.shape) != tuple(arr.shape):
                raise ValueError(f"{path}: {key} {tuple(arr.shape)} does not fit {tuple(target.shape)}")
            target.copy_(torch.from_numpy(np.asarray(arr, dtype=np.float32)))
            report.mapped[key] = f"compact:{meta.get('dtype', '?')}"
    for key in state:
        if key in report.mapped:
            continue
        (report.training_only if is_training_only(key) else report.unmapped_model).append(key)
    if report.unmapped_model:
        raise ValueError(f"{path}: coqui Vits tensors without weights: {report.unmapped_model}")
    model.eval()
    return model, report


__all__ = ["COMPACT_FORMAT", "COMPACT_SUFFIX", "is_compact", "load_compact", "read_compact", "save_compact"]
