"""Which preset to recommend on this machine, and why, in one line.

Why here and not in a dialog: the choice follows from facts (which presets can
run, which were measured how fast), not from widgets; the desktop app shows it,
and a test can check it without Qt. The rule, in order:

1. TensorRT and an NVIDIA GPU: ``tensorrt-int8`` (the fastest path on a GPU);
2. an NVIDIA GPU without TensorRT: ``fp16-cuda``;
3. no GPU: the CPU preset *measured* fastest here (the benchmark's ``x real time``),
   among the ones that keep the reference quality;
4. not measured yet: ``int8-cpu`` (the INT8 CPU default: durations identical to FP32,
   quality bounds checked by its tests), else ``fp32-cpu``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: CPU presets the measured choice picks from: the ones that sound like the reference
#: and are worth choosing (``dynamic-int8`` quantizes nothing on a VITS voice: it runs as FP32 torch)
CPU_CHOICES = ("int8-cpu", "fp32-cpu", "fp32-torch")
#: the CPU default before anything was measured, then its fallback
CPU_DEFAULTS = ("int8-cpu", "fp32-cpu")


@dataclass(frozen=True)
class PresetFacts:
    """What the recommendation needs to know of one preset on this machine."""

    name: str
    available: bool
    #: measured speed (times real time), None when not measured (or the run failed)
    x_real_time: float | None = None


@dataclass(frozen=True)
class Recommendation:
    preset: str
    why: str


def recommend(presets: Sequence[PresetFacts]) -> Recommendation:
    """The preset to suggest first on this machine (see the module doc)."""
    ok = {p.name: p for p in presets if p.available}
    if "tensorrt-int8" in ok:
        return Recommendation("tensorrt-int8", "An NVIDIA GPU and TensorRT were found: an engine built for this GPU "
                                               "is the fastest way to render here.")
    if "fp16-cuda" in ok:
        return Recommendation("fp16-cuda", "An NVIDIA GPU was found (TensorRT is not installed): half precision on "
                                           "the GPU renders many times faster than the CPU.")
    measured = [ok[n] for n in CPU_CHOICES if n in ok and ok[n].x_real_time]
    if measured:
        best = max(measured, key=lambda p: p.x_real_time or 0.0)
        return Recommendation(best.name, f"No NVIDIA GPU here; measured fastest on this computer "
                                         f"({best.x_real_time:.1f}\u00d7 real time).")
    for name in CPU_DEFAULTS:
        if name in ok:
            why = ("No NVIDIA GPU here; the INT8 model is the faster CPU choice with the same timing as full "
                   "precision. Measure to confirm on this computer." if name == "int8-cpu"
                   else "No NVIDIA GPU here and no INT8 support: the voice's own model on the CPU.")
            return Recommendation(name, why)
    first = next(iter(ok), "fp32-cpu")
    return Recommendation(first, "The only preset that can run on this computer.")
