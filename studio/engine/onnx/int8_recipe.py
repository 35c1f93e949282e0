"""Which nodes of a Piper VITS graph go INT8: the recipe and the per-scope plan.

Split out of :mod:`studio.engine.onnx.int8` (whose module notes hold the measurements
behind every decision below) so the node selection can be read, tested and changed
without the build or the engine around it. Pure graph inspection: no onnxruntime.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Iterable

from studio.core.errors import EngineError


@dataclass(frozen=True)
class QuantRecipe:
    """Which parts of a Piper VITS graph become INT8, and how.

    Scopes are matched on ONNX node names as exported by Piper (``/flow/...``,
    ``/dec/conv_pre/...``, ``/dec/resblocks.K/...``). Decoder stage ``s`` owns the
    resblocks ``K`` with ``K // kernels_per_stage == s``.
    """

    flow: bool = True
    conv_pre: bool = True
    decoder_stages: tuple[int, ...] = (0, 1)
    #: single resblocks quantized on top of whole stages (index K of /dec/resblocks.K)
    extra_resblocks: tuple[int, ...] = ()
    #: single convolutions quantized on top, by node-name prefix (``/dec/resblocks.8/convs.1/``)
    extra_convs: tuple[str, ...] = ()
    conv_post: bool = False
    calibrate_method: str = "Percentile"  # or "MinMax"
    percentile: float = 99.95
    calib_range_symmetric: bool = False
    activation_symmetric: bool = False
    weight_symmetric: bool = True
    per_channel: bool = True
    reduce_range: bool = False
    #: (noise_scale, length_scale, noise_w) the calibration sentences are run with
    calibration_scales: tuple[float, float, float] = (0.667, 1.0, 0.8)
    #: run the (FP32 + INT8) decoder on 4-D tensors, see :func:`decoder_to_4d`
    decoder_4d: bool = True
    #: SmoothQuant alpha for the last stage's stream (None: off), see :mod:`~studio.engine.onnx.smooth`
    smooth_alpha: float | None = None
    version: int = 2

    def token(self) -> str:
        """Stable text identifying the recipe (enters the cache key).

        Options added after version 2 enter it only when set, so a recipe that does not
        use them keeps the key (and the cached build) it had before they existed.
        """
        fields = asdict(self)
        for name, off in _LATER_OPTIONS.items():
            if fields[name] == off:
                del fields[name]
        return json.dumps(fields, sort_keys=True)

    def calibration_token(self) -> str:
        """The part of the recipe the activation ranges depend on.

        Ranges are collected for every Conv, so recipes that only pick different
        nodes share one calibration (a new recipe then builds in seconds).
        """
        fields = ["calibrate_method", "percentile", "calib_range_symmetric", "calibration_scales", "decoder_4d", "version"]
        if self.smooth_alpha is not None:  # the smoothed graph has other activations
            fields.append("smooth_alpha")
        return json.dumps({k: getattr(self, k) for k in fields}, sort_keys=True)


#: options of QuantRecipe added after version 2, with their "off" value (see QuantRecipe.token)
_LATER_OPTIONS = {"extra_convs": (), "smooth_alpha": None}
DEFAULT_RECIPE = QuantRecipe()
#: everything that is a Conv outside the duration path (fast, but hisses in pauses)
ALL_CONVS_RECIPE = QuantRecipe(decoder_stages=(0, 1, 2, 3, 4), conv_post=True)


@dataclass(frozen=True)
class ScopeDecision:
    """One group of nodes: quantized or kept FP32, and why."""

    scope: str
    nodes: tuple[str, ...]
    quantized: bool
    reason: str


@dataclass(frozen=True)
class QuantPlan:
    decisions: tuple[ScopeDecision, ...]

    @property
    def nodes_to_quantize(self) -> list[str]:
        return [n for d in self.decisions if d.quantized for n in d.nodes]

    def describe(self) -> str:
        q = [d for d in self.decisions if d.quantized]
        f = [d for d in self.decisions if not d.quantized]
        lines = [f"INT8: {sum(len(d.nodes) for d in q)} convolution nodes quantized"]
        lines += [f"  + {d.scope}: {len(d.nodes)} ({d.reason})" for d in q]
        lines.append(f"FP32: {sum(len(d.nodes) for d in f)} conv/matmul nodes kept")
        lines += [f"  - {d.scope}: {len(d.nodes)} ({d.reason})" for d in f]
        return "\n".join(lines)

    def to_json(self) -> list[dict]:
        return [asdict(d) for d in self.decisions]

    @classmethod
    def from_json(cls, data: Iterable[dict]) -> "QuantPlan":
        return cls(
            tuple(
                ScopeDecision(d["scope"], tuple(d["nodes"]), bool(d["quantized"]), d["reason"])
                for d in data
            )
        )


_RESBLOCK = re.compile(r"^/dec/resblocks\.(\d+)/")
_UPS = re.compile(r"^/dec/ups\.(\d+)/")


def _conv_label(name: str) -> str:
    """``/dec/resblocks.8/convs.1/Conv`` -> ``resblocks.8 convs.1``."""
    return " ".join(name.strip("/").split("/")[1:3])


def plan_quantization(model, recipe: QuantRecipe = DEFAULT_RECIPE) -> QuantPlan:
    """Group the voice's Conv / ConvTranspose / MatMul nodes by scope and decide each.

    ``model`` is an ``onnx.ModelProto``.
    """
    nodes = [n for n in model.graph.node if n.op_type in ("Conv", "ConvTranspose", "MatMul", "Gemm")]
    if not any(n.name.startswith("/dec/") for n in nodes):
        raise EngineError("not a Piper VITS graph: no /dec/ decoder nodes to plan quantization for")
    n_ups = len({m.group(1) for n in nodes if (m := _UPS.match(n.name))})
    n_res = len({m.group(1) for n in nodes if (m := _RESBLOCK.match(n.name))})
    per_stage = max(1, n_res // max(1, n_ups))

    groups: dict[tuple[str, bool, str], list[str]] = {}

    def put(scope: str, quantized: bool, reason: str, name: str) -> None:
        groups.setdefault((scope, quantized, reason), []).append(name)

    for n in nodes:
        name = n.name
        if name.startswith("/enc_p/"):
            put("text encoder (enc_p)", False, "feeds the durations; quantizing it changes them", name)
        elif name.startswith("/dp/"):
            put("duration predictor (dp)", False, "durations and the alignment output must stay identical", name)
        elif name.startswith("/flow/") and n.op_type == "Conv":
            if recipe.flow:
                put("flow", True, "alone: log-mel corr 0.997, no added pause noise", name)
            else:
                put("flow", False, "disabled in this recipe", name)
        elif name.startswith("/dec/conv_pre/"):
            if recipe.conv_pre:
                put("decoder conv_pre", True, "frame-rate input conv", name)
            else:
                put("decoder conv_pre", False, "disabled in this recipe", name)
        elif name.startswith("/dec/conv_post/"):
            if recipe.conv_post:
                put("decoder conv_post", True, "forced by this recipe (raises the pause floor)", name)
            else:
                put("decoder conv_post", False, "writes the waveform; quantizing it raises the pause floor", name)
        elif _UPS.match(name) is not None:
            put(
                "decoder upsamplers (ConvTranspose)",
                False,
                "ORT's CPU provider has no fused INT8 ConvTranspose; quantizing only adds error",
                name,
            )
        elif (m := _RESBLOCK.match(name)) is not None:
            block = int(m.group(1))
            stage = block // per_stage
            scope = f"decoder stage {stage} resblocks"
            if stage in recipe.decoder_stages and n.op_type == "Conv":
                why = {
                    0: "alone: log-mel corr 0.999, floor -94 dBFS",
                    1: "the biggest INT8 gain; sets the pause floor (about -83 dBFS)",
                }.get(stage, "selected by this recipe")
                put(scope, True, why, name)
            elif block in recipe.extra_resblocks and n.op_type == "Conv":
                put(f"decoder resblocks.{block} (stage {stage})", True, "selected by this recipe", name)
            elif n.op_type == "Conv" and name.startswith(recipe.extra_convs or ("\0",)):
                put(f"decoder stage {stage}: {_conv_label(name)}", True, "selected by this recipe", name)
            else:
                last = stage == max(0, n_ups - 1)
                reason = (
                    "last (full-rate) stage: INT8 of any one of its convolutions drops log-mel corr "
                    "below 0.99 (0.95-0.988), of all of them to 0.93 with the pause floor at -62 dBFS; "
                    "per-channel smoothing and other calibrations do not close the gap"
                    if last
                    else "disabled in this recipe"
                )
                put(scope, False, reason, name)
        elif n.op_type == "MatMul" and name.count("/") == 1:
            put("frame expansion (top-level MatMul)", False, "spreads phoneme statistics over frames (durations path)", name)
        else:
            put("other", False, "outside the scopes this recipe knows", name)

    decisions = tuple(
        ScopeDecision(scope, tuple(names), quantized, reason)
        for (scope, quantized, reason), names in groups.items()
    )
    return QuantPlan(decisions)
