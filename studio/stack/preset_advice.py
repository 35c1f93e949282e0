"""Which preset to recommend on this machine, and why, in one line.

Why here and not in a dialog: the choice follows from facts (which presets can
run, which were measured how fast), not from widgets; the desktop app shows it,
and a test can check it without Qt. The rule, in order:

1. TensorRT and an NVIDIA GPU: ``tensorrt-int8`` (the fastest path on a GPU);
2. an NVIDIA GPU without TensorRT: ``fp16-cuda``;
3. no GPU: the CPU preset *measured* fastest here, among the ones that keep the reference
   quality: by the benchmark's whole processes (a whole ``studio render`` against the piper
   CLI, start-up and memory traffic included: what a producer waits for) when it ran them,
   else by its steady-state ``x real time``. ``studio bench`` prints this same choice and the
   desktop shows it from the same file, so the two never disagree;
4. not measured yet: ``int8-cpu`` (the INT8 CPU default: durations identical to FP32,
   quality bounds checked by its tests), else ``fp32-cpu``.

``bf16-cpu`` is a choice only when measured: on one AMX machine it was slower than
``fp32-cpu`` as a whole process (torch's start-up and memory), on another faster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: CPU presets the measured choice picks from: the ones that sound like the reference
#: and are worth choosing (``dynamic-int8`` quantizes nothing on a VITS voice: it runs as FP32 torch)
CPU_CHOICES = ("int8-cpu", "bf16-cpu", "fp32-cpu", "fp32-torch")
#: the CPU default before anything was measured, then its fallback
CPU_DEFAULTS = ("int8-cpu", "fp32-cpu")


@dataclass(frozen=True)
class PresetFacts:
    """What the recommendation needs to know of one preset on this machine."""

    name: str
    available: bool
    #: measured speed (times real time), None when not measured (or the run failed)
    x_real_time: float | None = None
    #: whole-process speed against the piper CLI (the benchmark's first table), None when not run
    whole_speed: float | None = None


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
    whole = [ok[n] for n in CPU_CHOICES if n in ok and ok[n].whole_speed]
    if whole:  # what a whole render costs here
        best = max(whole, key=lambda p: p.whole_speed or 0.0)
        return Recommendation(best.name, f"No NVIDIA GPU here; measured fastest on this computer as a whole "
                                         f"render ({best.whole_speed:.2f}\u00d7 the piper command line's speed).")
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


def bench_facts(result: Mapping[str, Any], available: Mapping[str, bool]) -> list[PresetFacts]:
    """What :func:`recommend` knows from a benchmark's result (``bench.json``'s shape) and
    which presets run here: the one reading ``studio bench`` and the desktop both use."""
    rows = result.get("presets") if isinstance(result.get("presets"), Mapping) else {}
    whole = result.get("whole_process") if isinstance(result.get("whole_process"), Mapping) else {}
    whole_rows = whole.get("presets") if isinstance(whole.get("presets"), Mapping) else {}
    out = []
    for name, runs in available.items():
        row = rows.get(name) if isinstance(rows.get(name), Mapping) else {}
        speed = row.get("x_real_time") if not row.get("error") else None
        ratio = (whole_rows.get(name) or {}).get("speed_vs_piper") or {}
        out.append(PresetFacts(name, runs, _number(speed), _number(ratio.get("median"))))
    return out


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None
