"""Piper VITS ``.onnx`` weights -> coqui-tts's torch ``Vits`` model.

A Piper voice ships only an ONNX graph of ``SynthesizerTrn.infer``. Its initializers
keep the original VITS parameter names (``enc_p.*``, ``dp.*``, ``flow.*``, ``dec.*``),
except for a few tensors the exporter produced by constant folding:

* the weight-normalised WaveNet convs of the flow (``weight_g * v / |v|``) are stored
  as anonymous ``onnx::Conv_NNNN`` tensors; their name is recovered from the scope of
  the node that consumes them (``/flow/flows.0/enc/in_layers.0/Conv`` ->
  ``flow.flows.0.enc.in_layers.0.weight``);
* the text embedding may carry an unrelated name (``sid``); it is recovered the same
  way from its ``Gather`` consumer (``/enc_p/emb/Gather`` -> ``enc_p.emb.weight``);
* ``dp.flows.0.logs`` (ElementwiseAffine of the stochastic duration predictor) only
  survives as ``/dp/flows.0/Exp_output_0 = exp(-logs)``, the factor of its reverse pass.

Every architecture size is derived from initializer shapes and Conv node attributes
(dilations, strides), never assumed. Weight norm is removed from coqui's modules
(the ONNX holds the folded weights) before loading, so the result is a plain coqui
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

if TYPE_CHECKING:  # pragma: no cover
    from TTS.tts.models.vits import Vits

log = logging.getLogger(__name__)

#: prefixes of real VITS parameter names inside a Piper ONNX file
_PARAM_PREFIXES = ("enc_p.", "enc_q.", "dec.", "flow.", "dp.", "emb_g.")
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")
_FOLDED_EA_EXP = "/dp/flows.0/Exp_output_0"


def _is_param_name(name: str) -> bool:
    return name.startswith(_PARAM_PREFIXES) and _PARAM_NAME.fullmatch(name) is not None


@dataclass
class OnnxVitsGraph:
    """What :func:`read_onnx_vits` extracts from a Piper ONNX file."""

    #: initializers, anonymous ones renamed to their VITS parameter name where possible
    initializers: dict[str, np.ndarray]
    #: original initializer name -> recovered VITS name
    renames: dict[str, str]
    #: conv module path (``dec.resblocks.0.convs.1``) -> Conv/ConvTranspose attributes
    conv_attrs: dict[str, dict[str, Any]]


def _consumer_param_name(consumers: list[tuple[str, str, int]]) -> str | None:
    """VITS name of an initializer from the node(s) that read it, or None if ambiguous."""
    names = set()
    for node_name, op, idx in consumers:
        if not node_name.startswith("/"):
            return None
        scope = node_name.strip("/").split("/")[:-1]
        if not scope:
            return None
        module = ".".join(scope)
        if op in ("Conv", "ConvTranspose") and idx == 1:
            names.add(module + ".weight")
        elif op in ("Conv", "ConvTranspose") and idx == 2:
            names.add(module + ".bias")
        elif op == "Gather" and idx == 0:
            names.add(module + ".weight")
        else:
            return None
    if len(names) != 1:
        return None
    name = names.pop()
    return name if _is_param_name(name) else None


def read_onnx_vits(onnx_path: str | Path) -> OnnxVitsGraph:
    """Read initializers (renamed from consumer scope) and conv attributes of a Piper ONNX."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(onnx_path))
    graph = model.graph
    raw = {init.name: numpy_helper.to_array(init) for init in graph.initializer}

    consumers: dict[str, list[tuple[str, str, int]]] = {}
    conv_attrs: dict[str, dict[str, Any]] = {}
    for node in graph.node:
        for idx, inp in enumerate(node.input):
            if inp in raw:
                consumers.setdefault(inp, []).append((node.name, node.op_type, idx))
        if node.op_type in ("Conv", "ConvTranspose") and node.name.startswith("/"):
            module = ".".join(node.name.strip("/").split("/")[:-1])
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            attrs["op_type"] = node.op_type
            conv_attrs[module] = attrs

    out: dict[str, np.ndarray] = {}
    renames: dict[str, str] = {}
    for name, arr in raw.items():
        if _is_param_name(name):
            new = name
        else:
            new = _consumer_param_name(consumers.get(name, [])) or name
            if new != name:
                if new in raw or new in out:
                    log.warning("initializer %s would be renamed to existing %s; kept as is", name, new)
                    new = name
                else:
                    renames[name] = new
        if new in out:
            raise ValueError(f"duplicate initializer name {new!r} in {onnx_path}")
        out[new] = arr
    if renames:
        log.debug("renamed %d anonymous initializers from consumer scope: %s", len(renames), renames)
    return OnnxVitsGraph(out, renames, conv_attrs)


def load_onnx_initializers(onnx_path: str | Path) -> dict[str, np.ndarray]:
    """All initializers of a Piper ONNX, anonymous conv/embedding weights renamed.

    ``onnx::Conv_8240`` consumed by ``/flow/flows.0/enc/in_layers.0/Conv`` becomes
    ``flow.flows.0.enc.in_layers.0.weight``; initializers that cannot be named this way
    (folded shape constants and the like) keep their ONNX name.
    """
    return read_onnx_vits(onnx_path).initializers


# --------------------------------------------------------------------------- architecture


@dataclass(frozen=True)
class PiperVitsArch:
    """Sizes of a Piper VITS generator, all derived from the ONNX file."""

    n_vocab: int
    hidden_channels: int
    inter_channels: int
    filter_channels: int
    n_heads: int
    n_layers: int
    kernel_size: int
    rel_attn_window_size: int
    flow_n_flows: int
    flow_n_layers: int
    flow_kernel_size: int
    flow_dilation_rate: int
    flow_hidden_channels: int
    use_sdp: bool
    dp_filter_channels: int
    dp_kernel_size: int
    dp_n_layers: int
    dp_n_flows: int
    dp_num_bins: int
    resblock_type: str
    resblock_kernel_sizes: tuple[int, ...]
    resblock_dilation_sizes: tuple[tuple[int, ...], ...]
    upsample_rates: tuple[int, ...]
    upsample_initial_channel: int
    upsample_kernel_sizes: tuple[int, ...]
    n_speakers: int
    sample_rate: int

    @property
    def hop_length(self) -> int:
        return int(np.prod(self.upsample_rates))


def _count(inits: dict[str, np.ndarray], pattern: str) -> int:
    """Number of contiguous module indices ``0..n-1`` matched by ``pattern``'s group 1."""
    idx = _indices(inits, pattern)
    if idx != list(range(len(idx))):
        raise ValueError(f"non-contiguous module indices {idx} for {pattern!r}")
    return len(idx)


def _indices(inits: dict[str, np.ndarray], pattern: str) -> list[int]:
    rx = re.compile(pattern)
    return sorted({int(m.group(1)) for k in inits if (m := rx.match(k))})


def derive_arch(g: OnnxVitsGraph, voice_config: dict[str, Any]) -> PiperVitsArch:
    """Every size from initializer shapes / conv attributes; the JSON only for cross-checks."""
    w = g.initializers
    ca = g.conv_attrs

    def shape(name: str) -> tuple[int, ...]:
        if name not in w:
            raise ValueError(f"Piper ONNX lacks initializer {name!r}; not a Piper VITS export?")
        return tuple(w[name].shape)

    n_vocab, hidden = shape("enc_p.emb.weight")
    inter = shape("enc_p.proj.weight")[0] // 2
    n_layers = _count(w, r"enc_p\.encoder\.attn_layers\.(\d+)\.")
    _, rel_window2, k_channels = shape("enc_p.encoder.attn_layers.0.emb_rel_k")
    filter_channels, _, kernel_size = shape("enc_p.encoder.ffn_layers.0.conv_1.weight")

    flow_idx = _indices(w, r"flow\.flows\.(\d+)\.")
    if flow_idx != list(range(0, 2 * len(flow_idx), 2)):
        raise ValueError(f"unexpected flow layout (coupling layers at {flow_idx})")
    flow_layers = _count(w, r"flow\.flows\.0\.enc\.in_layers\.(\d+)\.")
    _, flow_hidden, flow_kernel = shape("flow.flows.0.enc.in_layers.0.weight")
    flow_dil = int(ca["flow.flows.0.enc.in_layers.1"]["dilations"][0]) if flow_layers > 1 else 1
    for i in range(flow_layers):
        d = int(ca[f"flow.flows.0.enc.in_layers.{i}"]["dilations"][0])
        if d != flow_dil**i:
            raise ValueError(f"flow WN dilation {d} at layer {i} is not {flow_dil}**{i}")

    use_sdp = "dp.flows.0.m" in w
    if not use_sdp:
        raise NotImplementedError("Piper voice with the deterministic duration predictor is not supported")
    dp_filter = shape("dp.pre.weight")[0]
    dp_kernel = shape("dp.convs.convs_sep.0.weight")[2]
    dp_layers = _count(w, r"dp\.convs\.convs_sep\.(\d+)\.")
    conv_flows = _indices(w, r"dp\.flows\.(\d+)\.pre\.")  # 3, 5, 7: flows.1 is not in the graph
    # VITS: [EA, CF, Flip, CF, Flip, ...]; reverse inference drops the first ConvFlow
    if conv_flows != list(range(3, 3 + 2 * len(conv_flows), 2)):
        raise ValueError(f"unexpected SDP flow layout (ConvFlows at {conv_flows})")
    dp_n_flows = len(conv_flows) + 1
    half = shape(f"dp.flows.{conv_flows[0]}.pre.weight")[1]
    proj_out = shape(f"dp.flows.{conv_flows[0]}.proj.weight")[0]
    num_bins = (proj_out // half + 1) // 3

    up_idx = _indices(w, r"dec\.ups\.(\d+)\.")
    up_init = shape("dec.conv_pre.weight")[0]
    up_kernels = tuple(shape(f"dec.ups.{i}.weight")[2] for i in up_idx)
    up_rates = tuple(int(ca[f"dec.ups.{i}"]["strides"][0]) for i in up_idx)
    n_res = len(_indices(w, r"dec\.resblocks\.(\d+)\."))
    n_kernels = n_res // len(up_idx)
    if "dec.resblocks.0.convs.0.weight" in w:
        resblock_type = "2"
        conv_lists = ["convs"]
    elif "dec.resblocks.0.convs1.0.weight" in w:
        resblock_type = "1"
        conv_lists = ["convs1"]
    else:
        raise ValueError("unknown HiFi-GAN resblock layout")
    rb_kernels: list[int] = []
    rb_dilations: list[tuple[int, ...]] = []
    for j in range(n_kernels):
        rb_kernels.append(shape(f"dec.resblocks.{j}.{conv_lists[0]}.0.weight")[2])
        n_convs = len(_indices(w, rf"dec\.resblocks\.{j}\.{conv_lists[0]}\.(\d+)\."))
        rb_dilations.append(
            tuple(int(ca[f"dec.resblocks.{j}.{conv_lists[0]}.{c}"]["dilations"][0]) for c in range(n_convs))
        )
    # the same kernels / dilations repeat after every upsampling layer
    for i in range(len(up_idx)):
        for j in range(n_kernels):
            r = i * n_kernels + j
            k = shape(f"dec.resblocks.{r}.{conv_lists[0]}.0.weight")[2]
            d0 = int(ca[f"dec.resblocks.{r}.{conv_lists[0]}.0"]["dilations"][0])
            if k != rb_kernels[j] or d0 != rb_dilations[j][0]:
                raise ValueError(f"resblock {r} does not repeat the layout of resblock {j}")

    n_speakers = int(w["emb_g.weight"].shape[0]) if "emb_g.weight" in w else 1
    sample_rate = int(voice_config.get("audio", {}).get("sample_rate", 22050))

    arch = PiperVitsArch(
        n_vocab=int(n_vocab),
        hidden_channels=int(hidden),
        inter_channels=int(inter),
        filter_channels=int(filter_channels),
        n_heads=int(hidden // k_channels),
        n_layers=n_layers,
        kernel_size=int(kernel_size),
        rel_attn_window_size=int((rel_window2 - 1) // 2),
        flow_n_flows=len(flow_idx),
        flow_n_layers=flow_layers,
        flow_kernel_size=int(flow_kernel),
        flow_dilation_rate=flow_dil,
        flow_hidden_channels=int(flow_hidden),
        use_sdp=use_sdp,
        dp_filter_channels=int(dp_filter),
        dp_kernel_size=int(dp_kernel),
        dp_n_layers=dp_layers,
        dp_n_flows=dp_n_flows,
        dp_num_bins=int(num_bins),
        resblock_type=resblock_type,
        resblock_kernel_sizes=tuple(int(k) for k in rb_kernels),
        resblock_dilation_sizes=tuple(rb_dilations),
        upsample_rates=up_rates,
        upsample_initial_channel=int(up_init),
        upsample_kernel_sizes=tuple(int(k) for k in up_kernels),
        n_speakers=n_speakers,
        sample_rate=sample_rate,
    )
    _check_coqui_compatible(arch, voice_config)
    return arch


def _check_coqui_compatible(a: PiperVitsArch, voice_config: dict[str, Any]) -> None:
    """coqui's Vits hard-codes a few sizes; refuse voices that differ instead of mis-loading."""
    problems = []
    if a.inter_channels != a.hidden_channels:
        problems.append(f"inter_channels {a.inter_channels} != hidden_channels {a.hidden_channels}")
    if a.flow_hidden_channels != a.hidden_channels:
        problems.append(f"flow hidden {a.flow_hidden_channels} != hidden {a.hidden_channels}")
    if a.rel_attn_window_size != 4:
        problems.append(f"relative attention window {a.rel_attn_window_size} != 4")
    if a.flow_n_flows != 4:
        problems.append(f"{a.flow_n_flows} coupling layers != 4")
    if (a.dp_filter_channels, a.dp_kernel_size, a.dp_n_layers, a.dp_n_flows, a.dp_num_bins) != (192, 3, 3, 4, 10):
        problems.append("stochastic duration predictor sizes differ from coqui's (192, 3, 3 layers, 4 flows, 10 bins)")
    if a.n_speakers != 1:
        problems.append(f"{a.n_speakers} speakers (only single-speaker voices are supported)")
    n_symbols = voice_config.get("num_symbols")
    if n_symbols is not None and int(n_symbols) != a.n_vocab:
        problems.append(f"config num_symbols {n_symbols} != embedding rows {a.n_vocab}")
    ids = [i for v in voice_config.get("phoneme_id_map", {}).values() for i in v]
    if ids and max(ids) >= a.n_vocab:
        problems.append(f"phoneme id {max(ids)} does not fit the {a.n_vocab}-row embedding")
    if problems:
        raise NotImplementedError("Piper voice not loadable into coqui Vits: " + "; ".join(problems))


# --------------------------------------------------------------------------- name mapping


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


def _coqui_config(arch: PiperVitsArch, voice_config: dict[str, Any]):
    from TTS.tts.configs.shared_configs import CharactersConfig
    from TTS.tts.configs.vits_config import VitsConfig
    from TTS.tts.models.vits import VitsArgs

    # coqui sizes the text embedding from its tokenizer's vocabulary, so hand it Piper's
    # own id -> symbol table, padded to the embedding's row count with private-use
    # placeholders (one code point each). coqui prepends ``pad`` to the characters,
    # so Piper's "_" (id 0) can be coqui's pad without shifting any id.
    vocab = [chr(0xF0000 + i) for i in range(arch.n_vocab)]
    taken = [False] * arch.n_vocab
    for symbol, ids in voice_config.get("phoneme_id_map", {}).items():
        for i in ids:
            if len(symbol) == 1 and not taken[i] and symbol not in vocab:
                vocab[i], taken[i] = symbol, True
    pad = vocab[0] if taken[0] else None
    characters = CharactersConfig(
        characters_class="TTS.tts.utils.text.characters.Graphemes",
        characters="".join(vocab[1:] if pad else vocab),
        punctuations="",
        pad=pad,
        eos=None,
        bos=None,
        blank=None,
        is_unique=False,
        is_sorted=False,
    )
    args = VitsArgs(
        num_chars=arch.n_vocab,
        out_channels=513,  # posterior encoder input (1024-point FFT); not in the ONNX, unused
        hidden_channels=arch.hidden_channels,
        hidden_channels_ffn_text_encoder=arch.filter_channels,
        num_heads_text_encoder=arch.n_heads,
        num_layers_text_encoder=arch.n_layers,
        kernel_size_text_encoder=arch.kernel_size,
        dropout_p_text_encoder=0.1,
        dropout_p_duration_predictor=0.5,
        kernel_size_flow=arch.flow_kernel_size,
        dilation_rate_flow=arch.flow_dilation_rate,
        num_layers_flow=arch.flow_n_layers,
        resblock_type_decoder=arch.resblock_type,
        resblock_kernel_sizes_decoder=list(arch.resblock_kernel_sizes),
        resblock_dilation_sizes_decoder=[list(d) for d in arch.resblock_dilation_sizes],
        upsample_rates_decoder=list(arch.upsample_rates),
        upsample_initial_channel_decoder=arch.upsample_initial_channel,
        upsample_kernel_sizes_decoder=list(arch.upsample_kernel_sizes),
        use_sdp=arch.use_sdp,
        init_discriminator=False,
        use_speaker_embedding=False,
        use_language_embedding=False,
    )
    inference = voice_config.get("inference", {})
    args.inference_noise_scale = float(inference.get("noise_scale", 0.667))
    args.length_scale = float(inference.get("length_scale", 1.0))
    args.inference_noise_scale_dp = float(inference.get("noise_w", 0.8))

    config = VitsConfig(model_args=args, characters=characters, use_phonemes=False, add_blank=False)
    config.text_cleaner = None
    config.audio.sample_rate = arch.sample_rate
    config.audio.hop_length = arch.hop_length
    config.audio.win_length = 1024
    config.audio.fft_size = 1024
    return config


def _remove_weight_norm(module) -> int:
    """Fold weight-norm parametrizations into plain ``weight`` tensors; count removed."""
    from torch.nn.utils import parametrize

    n = 0
    for m in module.modules():
        if parametrize.is_parametrized(m, "weight"):
            parametrize.remove_parametrizations(m, "weight", leave_parametrized=True)
            n += 1
        elif hasattr(m, "weight_g") and hasattr(m, "weight_v"):  # old-style weight_norm hook
            import torch

            torch.nn.utils.remove_weight_norm(m)
            n += 1
    return n


def build_coqui_vits(config_json_path: str | Path, onnx_path: str | Path) -> tuple[Vits, WeightsReport]:
    """A coqui-tts ``Vits`` carrying exactly the weights of a Piper ONNX voice (eval mode).

    Raises ``ValueError`` if any inference parameter of the coqui model stays unassigned
    or an ONNX tensor does not fit its target.
    """
    import torch
    from TTS.tts.models.vits import Vits

    voice_config = json.loads(Path(config_json_path).read_text(encoding="utf-8"))
    g = read_onnx_vits(onnx_path)
    arch = derive_arch(g, voice_config)
    config = _coqui_config(arch, voice_config)

    tts_log = logging.getLogger("TTS")
    level = tts_log.level
    tts_log.setLevel(logging.ERROR)  # "Could not identify language", audio processor dump
    try:
        model = Vits(config)
    finally:
        tts_log.setLevel(level)
    if model.args.num_chars != arch.n_vocab or model.text_encoder.emb.num_embeddings != arch.n_vocab:
        raise ValueError(f"coqui built a {model.text_encoder.emb.num_embeddings}-row embedding, not {arch.n_vocab}")
    # the ONNX holds weight-norm-folded weights: drop the parametrizations of every
    # module inference runs (the posterior encoder is training-only and keeps its own)
    for sub in (model.text_encoder, model.duration_predictor, model.flow, model.waveform_decoder):
        _remove_weight_norm(sub)

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
    unused_params = [n for n in report.unused_onnx if _is_param_name(n)]
    if unused_params:
        raise ValueError(f"ONNX parameters that found no place in coqui's Vits: {unused_params}")

    model.eval()
    log.info("Piper -> coqui Vits: %s", report.summary())
    if report.unused_onnx:
        log.info("unused ONNX initializers (folded constants): %s", report.unused_onnx)
    return model, report


def piper_voice_config(config_json_path: str | Path) -> dict[str, Any]:
    """The voice's ``.onnx.json`` as a dict."""
    return json.loads(Path(config_json_path).read_text(encoding="utf-8"))


__all__ = [
    "OnnxVitsGraph",
    "PiperVitsArch",
    "WeightsReport",
    "build_coqui_vits",
    "derive_arch",
    "load_onnx_initializers",
    "piper_to_coqui_name",
    "piper_voice_config",
    "read_onnx_vits",
]
