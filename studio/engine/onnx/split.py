"""Cut a Piper graph in two at the latent: text -> latent, then latent -> waveform.

Why: the flow and the HiFi-GAN decoder are ~3/4 of a sentence's CPU time and all
of its large activations (the last decoder stage holds 32 channels per output
sample). Run whole, one long sentence is one indivisible job whose memory grows
with its length. Cut at the latent ``z_p`` (after the noise is drawn, before the
flow) the second half only looks a few dozen frames left and right, so it can be
run over fixed windows of the latent (:mod:`studio.engine.decode_windows`): memory is
bounded by the window, the first audio of a paragraph comes after one window, and
the windows of one sentence can go to different streams.

The noise is drawn outside the graph (:mod:`studio.engine.noise`, seeded per sentence):
the first half takes the duration predictor's noise as an input (the output of its
``RandomNormalLike``, whose shape ``[B, 2, ids]`` the caller knows) and stops just
before the prior is sampled, returning its mean and standard deviation; the engine
then computes ``z_p = mean + noise * std * noise_scale`` in numpy, in the graph's own
order of operations, and hands ``z_p`` to the second half.

The cut is found by structure, not by node names (INT8 builds and the 4-D decoder
rewrite rename and add nodes): ``z_p`` is the first ``Add`` after the graph's
top-level ``RandomNormalLike`` (the duration predictor's own one lives under
``/dp/``); the second half is everything downstream of ``z_p`` that the waveform
needs, and whatever else it reads apart from weights (the frame mask) becomes its second input.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from studio.core.files import build_lock, write_atomic

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class SplitGraph:
    """The two halves of a Piper graph, serialized, and the tensors that join them."""

    #: inputs: the original ones and the duration noise; outputs: the prior's mean and
    #: standard deviation, mask (and durations if the model has them)
    encoder: bytes
    #: inputs: latent [B, C, T], mask [B, 1, T]; output: the waveform [B, 1, T * hop]
    decoder: bytes
    latent: str
    mask: str
    #: the alignment output (per-id durations), or None when the model has none
    durations: str | None
    noise: "PriorNoise"


@dataclass(frozen=True)
class PriorNoise:
    """Where the graph draws its noise: the tensors the first half takes and returns instead."""

    #: the duration predictor's noise [B, 2, ids] (an input of the first half)
    duration: str
    #: ``z_p = mean + noise * std * noise_scale``: the first half's outputs
    mean: str
    std: str


def find_noise(model) -> PriorNoise | None:
    """The noise tensors of a Piper graph (None when it does not draw noise as Piper's do)."""
    graph = model.graph
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    dp = [n for n in graph.node if n.op_type == "RandomNormalLike" and n.name.startswith("/dp/")]
    prior = [n for n in graph.node if n.op_type == "RandomNormalLike" and not n.name.startswith("/dp/")]
    if len(dp) != 1 or len(prior) != 1:
        return None
    chain = []  # RandomNormalLike -> Mul (std) -> Mul (noise scale) -> Add (mean)
    node = prior[0]
    for _ in range(3):
        nxt = consumers.get(node.output[0], [])
        if len(nxt) != 1:
            return None
        chain.append((node.output[0], nxt[0]))
        node = nxt[0]
    ops = [n.op_type for _, n in chain]
    if ops != ["Mul", "Mul", "Add"]:
        return None
    (noise, mul_std), (_, _mul_scale), (scaled, add) = chain
    std = next((i for i in mul_std.input if i != noise), None)
    mean = next((i for i in add.input if i != scaled), None)
    if std is None or mean is None:
        return None
    return PriorNoise(dp[0].output[0], mean, std)


def find_cut(model) -> tuple[str, str] | None:
    """``(latent, mask)`` tensor names where the graph can be cut, or None.

    None when the graph does not look like a Piper VITS export (no top-level
    ``RandomNormalLike`` followed by an ``Add``, or the waveform needs more than
    the latent and one other tensor).
    """
    graph = model.graph
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    producers = {o: n for n in graph.node for o in n.output}
    noise = [n for n in graph.node if n.op_type == "RandomNormalLike" and not n.name.startswith("/dp/")]
    if len(noise) != 1:
        return None
    node = noise[0]
    for _ in range(8):  # RandomNormalLike -> Mul (std) -> Mul (noise scale) -> Add (mean)
        nxt = consumers.get(node.output[0], [])
        if len(nxt) != 1:
            return None
        node = nxt[0]
        if node.op_type == "Add":
            break
    else:
        return None
    latent = node.output[0]

    downstream: set[int] = set()
    stack = [latent]
    while stack:
        for c in consumers.get(stack.pop(), []):
            if id(c) not in downstream:
                downstream.add(id(c))
                stack.extend(c.output)
    inits = {i.name for i in graph.initializer}
    # nodes computed from weights alone (Constant, the INT8 build's weight DequantizeLinear)
    constant = set(inits)
    for node in graph.node:  # graph order is topological
        if all(not i or i in constant for i in node.input):
            constant.update(node.output)
    needed: set[int] = set()
    stack = [graph.output[0].name]
    while stack:
        producer = producers.get(stack.pop())
        if producer is None or id(producer) in needed:
            continue
        if id(producer) in downstream or all(o in constant for o in producer.output):
            needed.add(id(producer))
            stack.extend(producer.input)
    part = [n for n in graph.node if id(n) in needed]
    made = {o for n in part for o in n.output}
    others = {i for n in part for i in n.input if i and i not in made and i not in constant and i != latent}
    if len(others) != 1:
        return None
    return latent, others.pop()


def split_piper_graph(model) -> SplitGraph | None:
    """The two halves of ``model`` (an ``onnx.ModelProto``, possibly patched with
    the alignment output as its second output), or None if it cannot be cut."""
    from onnx.utils import Extractor

    cut = find_cut(model)
    noise = find_noise(model)
    if cut is None or noise is None:
        return None
    latent, mask = cut
    outputs = [o.name for o in model.graph.output]
    durations = outputs[1] if len(outputs) > 1 else None
    inputs = [i.name for i in model.graph.input]
    extractor = Extractor(model)
    encoder = extractor.extract_model(
        inputs + [noise.duration], [noise.mean, noise.std, mask] + ([durations] if durations else [])
    )
    decoder = extractor.extract_model([latent, mask], [outputs[0]])
    _LOGGER.debug("split at %s / %s: %d + %d nodes", latent, mask, len(encoder.graph.node), len(decoder.graph.node))
    return SplitGraph(encoder.SerializeToString(), decoder.SerializeToString(), latent, mask, durations, noise)


# ------------------------------------------------------------------ on-disk cache

#: bump when the cut or the files change meaning
SPLIT_VERSION = 3  # 3: noise drawn outside the graph (seeded per sentence)


@dataclass(frozen=True)
class SplitFiles:
    """The two halves on disk (ONNX Runtime opens them by path: nothing held in Python).

    The encoder is stored already optimized by ONNX Runtime (open it with graph
    optimizations off, see :data:`ENCODER_PRE_OPTIMIZED`); the decoder as cut.
    """

    encoder: Path
    decoder: Path
    latent: str
    mask: str
    durations: str | None
    noise: PriorNoise


def _meta_path(model_path: Path, cache_dir: str | Path | None) -> Path:
    """Where the cut of ``model_path`` is described (see :func:`cached_split` for the key)."""
    from importlib.metadata import version

    import onnxruntime

    from studio.core import paths

    stat = model_path.stat()
    key = hashlib.sha256(  # the onnx version from its metadata: importing it costs ~0.3 s of a start
        f"{model_path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0v{SPLIT_VERSION}"
        f"\0onnx={version('onnx')}\0ort={onnxruntime.__version__}".encode()
    ).hexdigest()[:24]
    return (Path(cache_dir) if cache_dir is not None else paths.cache_dir()) / "split" / f"{model_path.stem}.{key}.json"


def split_cached(model_path: Path, cache_dir: str | Path | None = None) -> bool:
    """Whether :func:`cached_split` would find its answer on disk (no cutting), without loading anything.

    Why: the app says "preparing the model, only once" from the start of a cut that
    is going to happen, instead of guessing from how long a load takes.
    """
    meta_path = _meta_path(Path(model_path), cache_dir)
    if not meta_path.is_file():
        return False
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not meta.get("latent"):
        return True  # remembered: this graph cannot be cut, nothing to build
    return all((meta_path.parent / meta.get(part, "")).is_file() for part in ("encoder", "decoder"))


def cached_split(model_path: Path, patch: Callable[[], object | None], cache_dir: Path | None = None) -> SplitFiles | None:
    """The halves of ``model_path`` from the cache, cutting them on a miss.

    Why a disk cache: parsing a 60 MB voice, patching it and cutting it takes about a
    second per stream on a small CPU, every start; from the cache each stream opens
    two files. The key is the model file's path, size and modification time (the
    INT8 builds carry their own content hash in their names) plus the onnx and
    onnxruntime versions. ``patch()`` returns the model patched with its alignment
    output (or None if onnx is missing); it is called only on a miss. None when the
    graph cannot be cut (remembered too, so the next start does not try again).
    """
    meta_path = _meta_path(model_path, cache_dir)
    folder, key = meta_path.parent, meta_path.stem.rpartition(".")[2]
    with build_lock(folder / f"{model_path.stem}.{key}.lock"):
        if meta_path.is_file():
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if not meta.get("latent"):
                return None
            files = SplitFiles(folder / meta["encoder"], folder / meta["decoder"], meta["latent"], meta["mask"],
                               meta.get("durations"), PriorNoise(**meta["noise"]))
            if files.encoder.is_file() and files.decoder.is_file():
                return files
        model = patch()
        split = split_piper_graph(model) if model is not None else None
        if split is None:
            if model is not None:
                write_atomic(meta_path, json.dumps({"latent": None}).encode())
            return None
        files = SplitFiles(folder / f"{model_path.stem}.{key}.encoder.onnx",
                           folder / f"{model_path.stem}.{key}.decoder.onnx", split.latent, split.mask, split.durations,
                           split.noise)
        write_atomic(files.encoder, _pre_optimized(split.encoder))
        write_atomic(files.decoder, split.decoder)
        meta = {"encoder": files.encoder.name, "decoder": files.decoder.name, "latent": split.latent,
                "mask": split.mask, "durations": split.durations, "noise": asdict(split.noise),
                "source": str(model_path)}
        write_atomic(meta_path, json.dumps(meta, indent=1).encode())
        return files


#: the cached encoder is ORT's own optimized graph: open it with optimizations disabled
ENCODER_PRE_OPTIMIZED = True


def _pre_optimized(encoder: bytes) -> bytes:
    """The encoder as ONNX Runtime's CPU provider optimizes it (fusions, constant folding).

    Why: the text encoder and duration predictor are ~2,400 small nodes; optimizing
    them is ~0.45 s of CPU at every session start (0.6 s -> 0.15 s measured). Saved at
    the "extended" level, which has no hardware-specific layout (ORT's NCHWc rewrite
    touches 2-D convolutions only, and this half has none), so the file is valid on
    any CPU; the key holds the onnxruntime version.
    """
    import onnxruntime

    fd, tmp = tempfile.mkstemp(suffix=".opt.onnx")
    os.close(fd)
    try:
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = tmp
        onnxruntime.InferenceSession(encoder, sess_options=options, providers=["CPUExecutionProvider"])
        return Path(tmp).read_bytes()
    finally:
        Path(tmp).unlink(missing_ok=True)
