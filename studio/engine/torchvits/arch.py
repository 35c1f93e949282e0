"""A Piper voice's architecture, read from its ONNX, as a coqui-tts ``VitsConfig``.

Every size is derived from initializer shapes and Conv node attributes
(dilations, strides), never assumed: Piper voices come in several sizes
(x_low ... high) and a wrong guess would load silently and sound wrong. The voice's
JSON is used only for cross-checks and for what the graph cannot tell (sample
rate, inference scales). coqui's ``Vits`` hard-codes a few sizes, so voices that
differ there are refused up front rather than mis-loaded.

``TTS`` is imported lazily inside :func:`coqui_config`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from studio.engine.torchvits.onnx_reader import OnnxVitsGraph


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
        convs = "convs"
    elif "dec.resblocks.0.convs1.0.weight" in w:
        resblock_type = "1"
        convs = "convs1"
    else:
        raise ValueError("unknown HiFi-GAN resblock layout")
    rb_kernels: list[int] = []
    rb_dilations: list[tuple[int, ...]] = []
    for j in range(n_kernels):
        rb_kernels.append(shape(f"dec.resblocks.{j}.{convs}.0.weight")[2])
        n_convs = len(_indices(w, rf"dec\.resblocks\.{j}\.{convs}\.(\d+)\."))
        rb_dilations.append(
            tuple(int(ca[f"dec.resblocks.{j}.{convs}.{c}"]["dilations"][0]) for c in range(n_convs))
        )
    # the same kernels / dilations repeat after every upsampling layer
    for i in range(len(up_idx)):
        for j in range(n_kernels):
            r = i * n_kernels + j
            k = shape(f"dec.resblocks.{r}.{convs}.0.weight")[2]
            d0 = int(ca[f"dec.resblocks.{r}.{convs}.0"]["dilations"][0])
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


def coqui_config(arch: PiperVitsArch, voice_config: dict[str, Any]):
    """coqui's ``VitsConfig`` for ``arch``, with a tokenizer that keeps Piper's phoneme ids."""
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


__all__ = [
    "PiperVitsArch",
    "coqui_config",
    "derive_arch",
]
