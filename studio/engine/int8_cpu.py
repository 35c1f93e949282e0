"""INT8 Piper voices for the CPU: static quantization only where it does not hurt.

What was measured on the bundled voice (en_US-joe-medium, 2-core AMD EPYC VM,
ORT 1.32; quality at noise 0 against FP32 with ``studio.bench.quality``; see
``bench/cpu_presets.py``), and why the default recipe looks the way it does:

* FP32 time per part: decoder stage 2 (full rate) 28 %, stage 1 20 %, flow 16 %,
  text encoder 10 %, stage 0 8 %, upsamplers 9 %, duration predictor 3 %.
* The text encoder (``enc_p``) and the duration predictor (``dp``) feed the phoneme
  durations (``ceil`` of a continuous value): any error there moves durations, so they
  stay FP32 and the alignment output is bit-identical to the FP32 model.
* Safe and worth it: the normalizing ``flow`` (alone: log-mel corr 0.997, no pause
  noise), the decoder's ``conv_pre`` and the resblocks of decoder stages 0 and 1
  (stage 1 sets the floor). Per-channel s8 weights, u8 asymmetric activations,
  percentile calibration at 99.95 (99.999 let outliers widen the ranges: pause floor
  -76 dBFS / corr 0.985; 99.9-99.95: -83 dBFS / 0.993; 99.0 clips: 0.955).
* Not safe: the resblocks of the last decoder stage (log-mel corr 0.91-0.95, pause
  floor -59..-65 dBFS, even one resblock of three) and ``conv_post`` (it writes the
  waveform). ``ConvTranspose`` is not fused into an integer kernel by ORT's CPU
  provider, so quantizing the upsamplers only adds error.
* With stage 2 in FP32 it dominates the INT8 graph (~38 %); running the decoder on
  4-D tensors (:func:`decoder_to_4d`) lets ORT use its blocked NCHWc FP32 kernels
  there: ~6 % less CPU time, same math.

Calibration feeds each sentence alone (``CalibStridedMinMax=1``): the histogram
collector cannot stack activations of different lengths. Sentences: a built-in set of
varied English narration, plus the project's own sentences and/or the file named by
``$CALIBRATION_DATA_PATH`` when given. Ranges are collected for every Conv and cached
separately, so a recipe that only picks other nodes rebuilds in seconds.

The quantized model is cached on disk under a key made of the source model's sha256,
the recipe, the calibration set and the onnxruntime version, and written atomically,
so a second render (or a second process) reuses it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import re
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.engine.onnx_piper import OnnxPiperEngine

_LOGGER = logging.getLogger(__name__)

CACHE_ENV = "STUDIO_CACHE_DIR"
CALIBRATION_DATA_ENV = "CALIBRATION_DATA_PATH"

#: Varied English narration: short replies, dialogue, lists, numbers, questions, long
#: clauses, and plenty of commas / semicolons (the pauses are where INT8 error shows).
BUILTIN_CALIBRATION_SENTENCES: tuple[str, ...] = (
    "Yes.",
    "No, not yet.",
    "Chapter Seven.",
    "She smiled, but said nothing.",
    "Where did you put the keys?",
    "It was raining again, and the streets were nearly empty.",
    "\"Sit down,\" she said quietly, \"and tell me everything.\"",
    "The last train left the station at eleven minutes past midnight.",
    "I am not angry; I am simply tired of waiting.",
    "In 1987, the village had fewer than four hundred inhabitants.",
    "Have you ever noticed how the sea sounds different at night?",
    "He packed three things: a knife, a compass, and a photograph of his mother.",
    "Thunder rolled across the valley, low and patient, like a great animal turning in its sleep.",
    "Oh!",
    "Wait, wait, wait. Listen to me.",
    "The committee met on Thursday, the twelfth of October, to discuss the budget.",
    "Although the bridge had stood for two centuries, the engineers were worried about its foundations.",
    "Somewhere in the house, a clock was ticking.",
    "Why would anyone leave a door like that unlocked?",
    "Breathe in. Hold it. Now breathe out, slowly.",
    "The price of bread rose from two dollars to nearly five in a single winter.",
    "Maria laughed, shook her head, and went back to her book.",
    "If you follow the river north, you will reach the old mill before sunset.",
    "Nobody answered.",
    "The professor adjusted his glasses, cleared his throat, and began to read from the yellowed page.",
    "Run!",
    "They had walked for hours; their feet were blistered, their water almost gone.",
    "What, exactly, do you expect me to say?",
    "The garden was overgrown with roses, nettles, ivy, and something he could not name.",
    "At dawn the fishing boats returned, their decks silver with the night's catch.",
    "Please, take a seat.",
    "The letter was short: three lines, no signature, and a date that made no sense.",
    "She had always believed that stories were a kind of map, and that every map was a promise.",
    "Forty-two steps led down to the cellar, and every one of them creaked.",
    "Are you sure?",
    "Outside, the wind pushed against the windows, rattling the old frames.",
    "He was, in every sense of the word, a stranger here.",
    "The children counted aloud: one, two, three, four, five, ready or not!",
    "By the time the doctor arrived, the fever had broken and the boy was asleep.",
    "Silence.",
    "It is a truth universally acknowledged that a single man in possession of a good fortune "
    "must be in want of a wife.",
    "Far away, beyond the hills and the dark line of the forest, a single light was burning.",
)


# --------------------------------------------------------------------------- recipe


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
    version: int = 2

    def token(self) -> str:
        """Stable text identifying the recipe (enters the cache key)."""
        return json.dumps(asdict(self), sort_keys=True)

    def calibration_token(self) -> str:
        """The part of the recipe the activation ranges depend on.

        Ranges are collected for every Conv, so recipes that only pick different
        nodes share one calibration (a new recipe then builds in seconds).
        """
        fields = (
            "calibrate_method", "percentile", "calib_range_symmetric", "calibration_scales", "decoder_4d", "version",
        )
        return json.dumps({k: getattr(self, k) for k in fields}, sort_keys=True)


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
            else:
                last = stage == max(0, n_ups - 1)
                reason = (
                    "last (full-rate) stage: INT8 drops log-mel corr to 0.91-0.95 and "
                    "lifts the pause floor to -59..-65 dBFS"
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


# ------------------------------------------------------------------ layout rewrite

_DECODER_OPS = frozenset({"Conv", "ConvTranspose", "LeakyRelu", "Add", "Sub", "Mul", "Div", "Tanh", "Relu"})


def decoder_to_4d(model, prefix: str = "/dec/") -> int:
    """Run the HiFi-GAN decoder on ``[N, C, 1, T]`` tensors; returns the convs rewritten.

    Why: ORT's CPU provider runs 2-D FP32 convolutions in its blocked NCHWc layout
    (AVX2/AVX-512 kernels), 1-D ones through im2col + GEMM. The decoder's last stage
    stays FP32 (see the module notes) and is the largest cost left; as 2-D convs the
    whole FP32+INT8 graph measured ~6 % less CPU time. The math is unchanged (FP32
    outputs agree to ~1e-6; node names are kept, so scopes still match).

    The tail from the first conv with fewer than 8 output channels on (``conv_post``
    and its ``tanh``: one channel) stays 1-D, since NCHWc would pad it to a 16-channel
    block. The decoder must be a closed subgraph of element-wise ops and (transposed)
    convolutions with one tensor in and one out, as in every Piper VITS export; if it
    is not, the model is left untouched and 0 is returned. ``model`` is modified in place.
    """
    import onnx
    from onnx import helper, numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producers = {o: n for n in graph.node for o in n.output}
    dec = [n for n in graph.node if n.name.startswith(prefix)]
    if not dec or any(n.op_type not in _DECODER_OPS for n in dec):
        return 0
    dec_outputs = {o for n in dec for o in n.output}
    external = {
        i for n in dec for i in n.input
        if i and i not in dec_outputs and i not in inits
        and not (i in producers and producers[i].op_type == "Constant")
    }
    outside = {i for n in graph.node if not n.name.startswith(prefix) for i in n.input}
    outside |= {o.name for o in graph.output}
    if len(external) != 1 or len([o for o in dec_outputs if o in outside]) != 1:
        return 0
    for n in dec:
        if n.op_type in ("Conv", "ConvTranspose"):
            w = inits.get(n.input[1])
            if w is None or len(w.dims) != 3:
                return 0
        elif n.op_type not in ("LeakyRelu", "Relu", "Tanh"):
            # binary ops: the other operand must be the decoder's own tensor or a scalar
            for i in n.input:
                if i in inits and numpy_helper.to_array(inits[i]).size != 1:
                    return 0
    (x_in,) = external

    # the narrow tail (conv_post -> tanh) and everything downstream of it stays 1-D
    tail: set[int] = set()
    tail_tensors: set[str] = set()
    for n in dec:  # graph order is topological
        narrow = n.op_type == "Conv" and inits[n.input[1]].dims[0] < 8
        if narrow or any(i in tail_tensors for i in n.input):
            tail.add(id(n))
            tail_tensors.update(n.output)
    region = [n for n in dec if id(n) not in tail]
    region_outputs = {o for n in region for o in n.output}
    needed_outside = {i for n in graph.node if id(n) in tail or not n.name.startswith(prefix) for i in n.input}
    needed_outside |= {o.name for o in graph.output}
    leaving = [o for o in region_outputs if o in needed_outside]
    if not region or len(leaving) != 1:
        return 0
    (y_out,) = leaving

    axes_name = prefix.strip("/") + "__axes_h"
    graph.initializer.append(numpy_helper.from_array(np.array([2], dtype=np.int64), axes_name))
    x4, y4 = x_in + "__4d", y_out + "__4d"
    in_region = {id(n) for n in region}
    new_nodes = []
    replaced: set[str] = set()
    converted = 0
    first = region[0]
    for n in graph.node:
        if id(n) not in in_region:
            new_nodes.append(n)
            continue
        if n is first:
            new_nodes.append(helper.make_node("Unsqueeze", [x_in, axes_name], [x4], name=prefix + "to_4d"))
        inputs = [x4 if i == x_in else (y4 if i == y_out else i) for i in n.input]
        outputs = [y4 if o == y_out else o for o in n.output]
        if n.op_type in ("Conv", "ConvTranspose"):
            w = numpy_helper.to_array(inits[n.input[1]])
            w4 = numpy_helper.from_array(np.ascontiguousarray(w[:, :, None, :]), n.input[1] + "__4d")
            graph.initializer.append(w4)
            replaced.add(n.input[1])
            inputs[1] = w4.name
            attrs = {}
            for a in n.attribute:
                v = helper.get_attribute_value(a)
                if a.name == "kernel_shape":
                    v = [1, *v]
                elif a.name == "pads":
                    v = [0, v[0], 0, v[1]]
                elif a.name in ("dilations", "strides"):
                    v = [1, *v]
                elif a.name == "output_padding":
                    v = [0, *v]
                elif a.name == "output_shape":
                    return 0  # pragma: no cover - not produced by Piper exports
                attrs[a.name] = v
            new_nodes.append(helper.make_node(n.op_type, inputs, outputs, name=n.name, **attrs))
            converted += 1
        else:
            node = helper.make_node(n.op_type, inputs, outputs, name=n.name)
            node.attribute.extend(n.attribute)
            new_nodes.append(node)
        if y_out in n.output:
            new_nodes.append(helper.make_node("Squeeze", [y4, axes_name], [y_out], name=prefix + "to_3d"))
    del graph.node[:]
    graph.node.extend(new_nodes)
    still_used = {i for n in graph.node for i in n.input}
    keep = [i for i in graph.initializer if i.name not in replaced or i.name in still_used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    # shapes inferred for the 3-D tensors are stale now
    value_info = [v for v in graph.value_info if v.name not in region_outputs]
    del graph.value_info[:]
    graph.value_info.extend(value_info)
    onnx.checker.check_model(model)
    return converted


# --------------------------------------------------------------------- calibration


def _read_sentence_file(path: str | Path) -> list[str]:
    try:
        from studio.engine.calibration import read_sentences_file
    except ImportError:  # pragma: no cover - sibling module always present in the package
        return [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return read_sentences_file(path)


#: at most this many of the project's / file's sentences join the built-in set (each
#: calibration sentence costs about a second or two of build time)
MAX_EXTRA_CALIBRATION_SENTENCES = 64


def _dedupe(sentences: Iterable[str], seen: set[str] | None = None) -> list[str]:
    seen = set() if seen is None else seen
    out: list[str] = []
    for s in sentences:
        s = " ".join(str(s).split())
        if s and s.lower() not in seen:
            seen.add(s.lower())
            out.append(s)
    return out


def spread_by_length(sentences: Sequence[str], n: int) -> list[str]:
    """``n`` sentences evenly spaced over the length-sorted list (original order kept)."""
    if n <= 0:
        return []
    if len(sentences) <= n:
        return list(sentences)
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    picks = {order[int(k)] for k in np.linspace(0, len(order) - 1, n).round().astype(int)}
    return [s for i, s in enumerate(sentences) if i in picks]


def gather_calibration_sentences(
    extra: Sequence[str] | None = None,
    *,
    builtin: bool = True,
    env: dict[str, str] | None = None,
    max_extra: int | None = MAX_EXTRA_CALIBRATION_SENTENCES,
) -> list[str]:
    """Built-in narration + ``extra`` (the project's sentences) + ``$CALIBRATION_DATA_PATH``.

    Whitespace-normalised, empty and duplicate (case-insensitive) sentences dropped,
    order kept. The project's and the file's sentences together are thinned to
    ``max_extra``, evenly across their lengths (None: keep all).
    """
    env = dict(os.environ) if env is None else env
    seen: set[str] = set()
    base = _dedupe(BUILTIN_CALIBRATION_SENTENCES if builtin else (), seen)
    found: list[str] = list(extra or ())
    file_path = env.get(CALIBRATION_DATA_ENV)
    if file_path:
        path = Path(file_path).expanduser()
        if not path.is_file():
            raise EngineError(f"{CALIBRATION_DATA_ENV}: {path} is not a file")
        found.extend(_read_sentence_file(path))
    more = _dedupe(found, seen)
    if max_extra is not None:
        more = spread_by_length(more, max_extra)
    return base + more


class _IdsReader:
    """A ``CalibrationDataReader`` over one sentence per sample (with ``set_range``)."""

    def __init__(self, samples: Sequence[dict[str, np.ndarray]]) -> None:
        self._samples = list(samples)
        self._start, self._end = 0, len(self._samples)
        self._pos = 0

    def __len__(self) -> int:
        return len(self._samples)

    def set_range(self, start_index: int, end_index: int) -> None:
        self._start, self._end = start_index, min(end_index, len(self._samples))
        self._pos = self._start

    def get_next(self) -> dict[str, np.ndarray] | None:
        if self._pos >= self._end:
            return None
        item = self._samples[self._pos]
        self._pos += 1
        return item

    def rewind(self) -> None:
        self._pos = self._start


def _feeds(ids: Sequence[int], scales: Sequence[float], sid: int | None) -> dict[str, np.ndarray]:
    feeds = {
        "input": np.asarray([list(ids)], dtype=np.int64),
        "input_lengths": np.asarray([len(ids)], dtype=np.int64),
        "scales": np.asarray(scales, dtype=np.float32),
    }
    if sid is not None:
        feeds["sid"] = np.asarray([sid], dtype=np.int64)
    return feeds


# --------------------------------------------------------------------------- cache


def default_cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "studio"


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_key(
    model_sha256: str,
    recipe: QuantRecipe,
    calibration_ids: Sequence[Sequence[int]],
    *,
    calibration_only: bool = False,
) -> str:
    """sha256 over source model digest, recipe, calibration set and onnxruntime version.

    ``calibration_only``: the key of the activation ranges alone (see
    :meth:`QuantRecipe.calibration_token`).
    """
    import onnxruntime

    h = hashlib.sha256()
    h.update(model_sha256.encode())
    token = recipe.calibration_token() if calibration_only else recipe.token()
    h.update(b"\0" + (b"calib:" if calibration_only else b"model:") + token.encode())
    h.update(b"\0" + json.dumps([list(map(int, s)) for s in calibration_ids]).encode())
    h.update(b"\0ort=" + onnxruntime.__version__.encode())
    return h.hexdigest()


@contextlib.contextmanager
def _build_lock(path: Path):
    """Serialise builders of the same key across processes (best effort; POSIX only)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- build


@dataclass(frozen=True)
class Int8Build:
    """A built (or cache-hit) INT8 model and what went into it."""

    path: Path
    key: str
    plan: QuantPlan
    calibration_sentences: int
    quantized_conv_nodes: int
    cache_hit: bool
    build_seconds: float = 0.0
    recipe: QuantRecipe = field(default=DEFAULT_RECIPE)
    #: decoder convolutions rewritten to 2-D (0: layout rewrite off or not applicable)
    decoder_4d_convs: int = 0


def count_quantized_convs(model) -> int:
    """Conv nodes whose weight comes from a DequantizeLinear (QDQ) or QLinearConv nodes."""
    producers = {o: n for n in model.graph.node for o in n.output}
    count = 0
    for n in model.graph.node:
        if n.op_type == "QLinearConv":
            count += 1
        elif n.op_type == "Conv" and len(n.input) > 1:
            p = producers.get(n.input[1])
            if p is not None and p.op_type == "DequantizeLinear":
                count += 1
    return count


def _config_for(model_path: Path, config_path: str | Path | None) -> Path:
    return Path(config_path) if config_path else Path(f"{model_path}.json")


def sentences_to_ids(sentences: Sequence[str], config_path: Path) -> list[list[int]]:
    """Each sentence through the voice's own front end, in the voice's own language."""
    from studio.engine.phonemize import PiperFrontEnd
    from studio.engine.voice_config import VoiceConfig

    config = VoiceConfig.from_file(config_path)
    front = PiperFrontEnd(config)
    language = config.language_family or config.espeak_voice
    out = []
    for s in sentences:
        ids = front.text_to_ids(s, language)
        if len(ids) > 2:
            out.append(ids)
    return out


def build_int8(
    model_path: str | Path,
    calibration_sentences: Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
    *,
    config_path: str | Path | None = None,
    recipe: QuantRecipe = DEFAULT_RECIPE,
    builtin_sentences: bool = True,
    max_calibration_sentences: int | None = None,
) -> Int8Build:
    """Quantize (or find in the cache) and describe. See :func:`build_int8_model`."""
    import onnx

    model_path = Path(model_path)
    if not model_path.is_file():
        raise EngineError(f"{model_path}: voice model not found")
    config_path = _config_for(model_path, config_path)
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()

    sentences = gather_calibration_sentences(calibration_sentences, builtin=builtin_sentences)
    if max_calibration_sentences is not None:
        # evenly across length so short and long sentences both stay represented
        sentences = spread_by_length(sentences, max(1, max_calibration_sentences))
    ids = sentences_to_ids(sentences, config_path)
    if not ids:
        raise EngineError("no calibration sentences produced phonemes")

    model_sha = _sha256_file(model_path)
    key = cache_key(model_sha, recipe, ids)
    calib_path = cache_dir / "int8" / f"{model_path.stem}.ranges-{cache_key(model_sha, recipe, ids, calibration_only=True)[:24]}.json"
    out_path = cache_dir / "int8" / f"{model_path.stem}.int8-{key[:24]}.onnx"
    meta_path = out_path.with_suffix(".json")

    with _build_lock(out_path.with_suffix(".lock")):
        if out_path.is_file() and meta_path.is_file():
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            return Int8Build(
                path=out_path,
                key=key,
                plan=QuantPlan.from_json(meta["plan"]),
                calibration_sentences=int(meta["calibration_sentences"]),
                quantized_conv_nodes=int(meta["quantized_conv_nodes"]),
                cache_hit=True,
                build_seconds=float(meta.get("build_seconds", 0.0)),
                recipe=recipe,
                decoder_4d_convs=int(meta.get("decoder_4d_convs", 0)),
            )
        t0 = time.perf_counter()
        model = onnx.load(str(model_path))
        plan = plan_quantization(model, recipe)
        from studio.engine.voice_config import VoiceConfig

        config = VoiceConfig.from_file(config_path)
        sid = config.resolve_speaker(None)
        samples = [_feeds(seq, recipe.calibration_scales, sid) for seq in ids]
        out_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=out_path.stem + ".", suffix=".tmp.onnx", dir=out_path.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        source = tmp.with_name(tmp.name.replace(".tmp.onnx", ".src.tmp.onnx"))
        try:
            layout_convs = decoder_to_4d(model) if recipe.decoder_4d else 0
            onnx.save(model, str(source))
            del model
            _quantize(source, tmp, plan, recipe, _IdsReader(samples), calib_path)
            quantized = onnx.load(str(tmp))
            n_q = count_quantized_convs(quantized)
            del quantized
            seconds = time.perf_counter() - t0
            meta = {
                "source": str(model_path),
                "key": key,
                "recipe": asdict(recipe),
                "plan": plan.to_json(),
                "calibration_sentences": len(ids),
                "quantized_conv_nodes": n_q,
                "decoder_4d_convs": layout_convs,
                "build_seconds": seconds,
            }
            os.replace(tmp, out_path)
            _atomic_write_text(meta_path, json.dumps(meta, indent=1))
        finally:
            tmp.unlink(missing_ok=True)
            source.unlink(missing_ok=True)
        _LOGGER.info("built INT8 %s (%d convs, %.1f s)", out_path.name, n_q, seconds)
        return Int8Build(out_path, key, plan, len(ids), n_q, False, seconds, recipe, layout_convs)


LAYOUT_VERSION = 2


def build_fp32_layout_model(model_path: str | Path, cache_dir: str | Path | None = None) -> Path:
    """The FP32 voice with its decoder on 4-D tensors (:func:`decoder_to_4d`), cached.

    Same weights and math as the source (outputs agree to ~1e-6, durations identical),
    ~7 % less CPU time on ORT's CPU provider. Returns ``model_path`` itself when the
    graph does not have the expected decoder. Load it with the source's config
    (``OnnxPiperEngine(path, config_path=<source>.json)``).
    """
    import onnx
    import onnxruntime

    model_path = Path(model_path)
    if not model_path.is_file():
        raise EngineError(f"{model_path}: voice model not found")
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = hashlib.sha256(
        f"{_sha256_file(model_path)}\0decoder_4d={LAYOUT_VERSION}\0ort={onnxruntime.__version__}".encode()
    ).hexdigest()
    out = cache_dir / "cpu" / f"{model_path.stem}.fp32-4d-{key[:24]}.onnx"
    with _build_lock(out.with_suffix(".lock")):
        if out.is_file():
            return out
        model = onnx.load(str(model_path))
        if decoder_to_4d(model) == 0:
            return model_path
        fd, tmp = tempfile.mkstemp(prefix=out.stem + ".", suffix=".tmp.onnx", dir=out.parent)
        os.close(fd)
        try:
            onnx.save(model, tmp)
            os.replace(tmp, out)
        finally:
            Path(tmp).unlink(missing_ok=True)
    return out


def build_int8_model(
    model_path: str | Path,
    calibration_sentences: Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
    **kwargs,
) -> Path:
    """The INT8 version of a Piper ``.onnx`` voice (built once, then from the cache).

    ``calibration_sentences`` (the project's own sentences) are added to the built-in
    set, as is the file named by ``$CALIBRATION_DATA_PATH``. ``cache_dir`` defaults to
    ``$STUDIO_CACHE_DIR`` or ``~/.cache/studio``. Keyword arguments go to
    :func:`build_int8` (``config_path``, ``recipe``, ``max_calibration_sentences``...).
    """
    return build_int8(model_path, calibration_sentences, cache_dir, **kwargs).path


def _atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _quantize(
    source: Path, dest: Path, plan: QuantPlan, recipe: QuantRecipe, reader: _IdsReader, ranges: Path
) -> None:
    """``quantize_static`` with the activation ranges cached in ``ranges`` (JSON)."""
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    method = {
        "percentile": CalibrationMethod.Percentile,
        "minmax": CalibrationMethod.MinMax,
        "entropy": CalibrationMethod.Entropy,
    }[recipe.calibrate_method.lower()]
    extra = {
        "ActivationSymmetric": recipe.activation_symmetric,
        "WeightSymmetric": recipe.weight_symmetric,
        # one sentence per collect: activations of different lengths cannot be stacked
        "CalibStridedMinMax": 1,
        "CalibTensorRangeSymmetric": recipe.calib_range_symmetric,
        "CalibPercentile": recipe.percentile,
    }
    new_ranges = None
    if not ranges.is_file():
        fd, name = tempfile.mkstemp(prefix=ranges.stem + ".", suffix=".tmp.json", dir=ranges.parent)
        os.close(fd)
        new_ranges = Path(name)
        new_ranges.unlink()  # quantize_static calibrates only when the cache file is absent
    try:
        # quantize_static's calibrator and histogram collector print progress to stdout
        with contextlib.redirect_stdout(io.StringIO()):
            quantize_static(
                str(source),
                str(dest),
                reader,
                quant_format=QuantFormat.QDQ,
                op_types_to_quantize=["Conv"],
                nodes_to_quantize=plan.nodes_to_quantize,
                per_channel=recipe.per_channel,
                reduce_range=recipe.reduce_range,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                calibrate_method=method,
                extra_options=extra,
                calibration_cache_path=str(new_ranges or ranges),
            )
        if new_ranges is not None and new_ranges.is_file():
            os.replace(new_ranges, ranges)
    finally:
        if new_ranges is not None:
            new_ranges.unlink(missing_ok=True)


# -------------------------------------------------------------------------- engine


class Int8OnnxEngine(OnnxPiperEngine):
    """:class:`OnnxPiperEngine` running the INT8 build of a Piper voice (CPU only).

    The INT8 model is built (or taken from the cache) on :meth:`load`, since a first
    build calibrates for a minute or so. Durations, and so the alignment output, are
    identical to the FP32 voice; see :meth:`describe` for what was quantized.
    """

    name = "onnx-int8"

    def __init__(
        self,
        model_path: str | Path,
        config_path: str | Path | None = None,
        *,
        threads: int | None = None,
        calibration_sentences: Sequence[str] | None = None,
        cache_dir: str | Path | None = None,
        recipe: QuantRecipe = DEFAULT_RECIPE,
        max_calibration_sentences: int | None = None,
    ) -> None:
        source = Path(model_path)
        super().__init__(source, _config_for(source, config_path), device="cpu", threads=threads)
        self.source_model_path = source
        self.recipe = recipe
        self._calibration_sentences = list(calibration_sentences) if calibration_sentences else None
        self._cache_dir = cache_dir
        self._max_calibration = max_calibration_sentences
        self.build: Int8Build | None = None
        self._build_lock = threading.Lock()

    def prepare(self) -> Int8Build:
        """Build or fetch the INT8 model without creating a session."""
        with self._build_lock:
            if self.build is None:
                self.build = build_int8(
                    self.source_model_path,
                    self._calibration_sentences,
                    self._cache_dir,
                    config_path=self.config_path,
                    recipe=self.recipe,
                    max_calibration_sentences=self._max_calibration,
                )
                self.model_path = self.build.path
            return self.build

    def load(self) -> None:
        self.prepare()
        super().load()

    def describe(self) -> str:
        """What is INT8 and what stayed FP32 (and why), from the built model."""
        build = self.prepare()
        origin = "cached" if build.cache_hit else f"built in {build.build_seconds:.0f} s"
        head = (
            f"{self.source_model_path.name} -> {build.path.name} ({origin}); "
            f"{build.quantized_conv_nodes} Conv nodes run INT8 (per-channel s8 weights, "
            f"u8 activations, {self.recipe.calibrate_method} calibration on "
            f"{build.calibration_sentences} sentences)"
        )
        layout = (
            f"\nlayout: decoder on 4-D tensors ({build.decoder_4d_convs} convs as 2-D, "
            "ORT's blocked NCHWc FP32 kernels; same math)"
            if build.decoder_4d_convs
            else "\nlayout: decoder left 1-D"
        )
        return head + "\n" + build.plan.describe() + layout
