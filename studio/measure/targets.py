"""The issue's performance and quality targets, judged against one bench result.

A pure function of the result dict, apart from the measuring, so a saved
``bench.json`` can be re-judged (and the verdict wording tested) without
running anything. Each target is met, missed (by how much) or not measured
(and why: an unavailable preset, a failed row, no piper CLI).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Target", "targets"]


@dataclass
class Target:
    id: str
    preset: str
    description: str
    measured: float | None
    goal: float
    op: str  # ">=", "<=", "=="
    unit: str = ""
    reason: str = ""  # why it was not measured
    detail: str = ""  # other views of the same figure, appended to the verdict

    def verdict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "preset": self.preset, "description": self.description,
                               "target": f"{self.op} {_fmt(self.goal, self.unit)}", "goal": self.goal, "op": self.op,
                               "measured": self.measured, "unit": self.unit}
        if self.measured is None or (isinstance(self.measured, float) and math.isnan(self.measured)):
            out.update(met=None, verdict=f"not measured: {self.reason or 'no figure'}")
            return out
        m, g = float(self.measured), float(self.goal)
        if self.op == ">=":
            met = m >= g
            miss = g - m
        elif self.op == "<=":
            met = m <= g
            miss = m - g
        else:
            met = m == g
            miss = abs(m - g)
        shown = f"{_fmt(m, self.unit)} {self.op if met else _negate(self.op)} {_fmt(g, self.unit)}"
        if self.detail:
            shown += f"; {self.detail}"
        if met:
            out.update(met=True, verdict=f"met ({shown})")
        else:
            pct = f", {100 * miss / abs(g):.0f}%" if g and self.op != "==" else ""
            out.update(met=False, verdict=f"missed by {_fmt(miss, self.unit)}{pct} ({shown})")
        return out


def _negate(op: str) -> str:
    return {">=": "<", "<=": ">", "==": "!="}[op]


def _fmt(v: float, unit: str) -> str:
    if unit == "x":
        return f"{v:.2f}x"
    if unit == "dBFS":
        return f"{v:.1f} dBFS"
    if unit == "samples":
        return f"{v:.0f} samples"
    return f"{v:.3f}"


#: whole process (``studio render`` vs ``piper``, long prose) per CPU preset: the issue's goals
WHOLE_GOALS = {"fp32-cpu": 1.1, "bf16-cpu": 1.5, "int8-cpu": 1.9}


def _whole_targets(result: dict[str, Any]) -> list[Target]:
    """The whole-process goals of :data:`WHOLE_GOALS` (median of the pairs; the spread as detail)."""
    whole = result.get("whole_process") or {}
    rows = whole.get("presets") or {}
    out = []
    for name, goal in WHOLE_GOALS.items():
        row = rows.get(name) or {}
        speed = row.get("speed_vs_piper") or {}
        reason = (f"{name} unavailable: {result['unavailable'][name]}" if name in result.get("unavailable", {})
                  else "no whole-process run (--whole-pairs 0, or no piper CLI)" if not whole
                  else f"{name} not in the whole-process run")
        detail = f"pairs {speed['min']:.2f}-{speed['max']:.2f}x" if speed else ""
        out.append(Target(f"{name.split('-')[0]}-whole-vs-piper", name,
                          f"`studio render --preset {name}` >= {goal}x the piper CLI, whole process on long prose",
                          speed.get("median"), goal, ">=", "x", reason, detail))
    return out


def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets, each met / missed (by how much) / not measured (why)."""
    rows = result["presets"]
    piper = (result.get("piper_cli") or {}).get("steady") or {}
    piper_xrt = piper.get("x_real_time")
    fp32 = rows.get("fp32-cpu", {})
    int8 = rows.get("int8-cpu", {})
    cores = result["machine"].get("physical_cores")

    def ratio(row: dict, base: float | None, key: str = "x_real_time") -> float | None:
        x = row.get(key)
        return x / base if x and base else None

    def views(row: dict, base: dict) -> str:
        """The same ratio from the best rounds and per CPU second (other jobs move those less)."""
        parts = []
        best = ratio(row, base.get("best_x_real_time"), "best_x_real_time")
        if best:
            parts.append(f"best rounds {best:.2f}x")
        cpu = ratio(row, base.get("audio_per_cpu_s"), "audio_per_cpu_s")
        if cpu:
            parts.append(f"per CPU second {cpu:.2f}x")
        return ", ".join(parts)

    def why(row: dict, name: str, what: str = "") -> str:
        if name in result.get("unavailable", {}):
            return f"{name} unavailable: {result['unavailable'][name]}"
        if row.get("error"):
            return f"{name} failed: {row['error']}"
        if not row:
            return f"{name} not in this run"
        return what or "no figure"

    no_piper = "piper CLI not run" if not piper_xrt else ""
    q8 = int8.get("quality") or {}
    wer_goal = (q8.get("wer_reference") or 0.0) + 0.05
    out = [
        Target("fp32-vs-piper", "fp32-cpu", f"FP32 on {cores or '?'} CPU cores >= 1.3x piper CLI throughput",
               ratio(fp32, piper_xrt), 1.3, ">=", "x", why(fp32, "fp32-cpu", no_piper), views(fp32, piper)),
        Target("int8-vs-piper", "int8-cpu", "CPU INT8 >= 1.9x piper CLI throughput",
               ratio(int8, piper_xrt), 1.9, ">=", "x", why(int8, "int8-cpu", no_piper), views(int8, piper)),
        Target("int8-vs-fp32", "int8-cpu", "CPU INT8 ~1.45x FP32 throughput",
               ratio(int8, fp32.get("x_real_time")), 1.45, ">=", "x", why(int8, "int8-cpu"), views(int8, fp32)),
        Target("int8-noise-floor", "int8-cpu", "CPU INT8 noise floor in pauses <= -60 dBFS",
               q8.get("noise_floor_dbfs"), -60.0, "<=", "dBFS", why(int8, "int8-cpu", "no silent pause measured")),
        Target("int8-log-mel", "int8-cpu", "CPU INT8 log-mel correlation >= 0.98 (lowest sentence)",
               q8.get("log_mel_correlation"), 0.98, ">=", "", why(int8, "int8-cpu")),
        Target("int8-durations", "int8-cpu", "CPU INT8 durations identical to FP32 (largest sentence difference)",
               q8.get("max_item_duration_diff_samples"), 0, "==", "samples", why(int8, "int8-cpu")),
        Target("int8-wer", "int8-cpu", "CPU INT8 WER <= FP32 WER + 0.05",
               q8.get("wer"), wer_goal, "<=", "", why(int8, "int8-cpu", q8.get("wer_error", "WER not measured"))),
    ]
    bf16 = rows.get("bf16-cpu", {})
    q16 = bf16.get("quality") or {}
    out += [
        Target("bf16-vs-piper", "bf16-cpu", "CPU BF16 >= 1.5x piper CLI throughput",
               ratio(bf16, piper_xrt), 1.5, ">=", "x", why(bf16, "bf16-cpu", no_piper), views(bf16, piper)),
        Target("bf16-log-mel", "bf16-cpu", "CPU BF16 log-mel correlation >= 0.99 (lowest sentence)",
               q16.get("log_mel_correlation"), 0.99, ">=", "", why(bf16, "bf16-cpu")),
        Target("bf16-noise-floor", "bf16-cpu", "CPU BF16 noise floor in pauses <= -60 dBFS",
               q16.get("noise_floor_dbfs"), -60.0, "<=", "dBFS", why(bf16, "bf16-cpu", "no silent pause measured")),
        Target("bf16-durations", "bf16-cpu", "CPU BF16 durations identical to FP32 (largest sentence difference)",
               q16.get("max_item_duration_diff_samples"), 0, "==", "samples", why(bf16, "bf16-cpu")),
    ]
    out += _whole_targets(result)
    cuda = rows.get("fp16-cuda", {})
    out.append(Target("fp16-cuda-xrt", "fp16-cuda", "CUDA batched FP16 >= 1000x real time",
                      cuda.get("x_real_time"), 1000.0, ">=", "x", why(cuda, "fp16-cuda")))
    return [t.verdict() for t in out]
