"""Piper's VITS inference recipe on a coqui ``Vits``, written once.

Why one module: the torch engine, the ONNX/TensorRT export and the TensorRT
engine's torch half must run exactly the operations Piper exports, in the same
order; two copies drifted (the export's copy ignored the per-submodule dtypes the
engine's low-precision presets rely on). The recipe has two halves:

* :func:`encode_latents`: text encoder, stochastic duration predictor in reverse
  with ``noise_w``, ``ceil`` durations times ``length_scale``, monotonic path,
  ``z_p = m_p + eps * exp(logs_p) * noise_scale`` (everything up to the flow);
* :func:`flow_decode`: reverse flow, HiFi-GAN decoder on ``z * y_mask``.

:func:`split_infer` glues both halves with any decoder (ONNX Runtime, TensorRT,
:func:`flow_decode`), :func:`piper_vits_infer` is the whole model in torch.

Each stage runs in its own submodule's dtype: the text encoder and duration
predictor stay float32 so durations (and lengths) hold while the flow and decoder
may run in float16 / bfloat16. torch and coqui-tts are imported on call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    import torch


class Latents(NamedTuple):
    """What the encoder half hands the flow+decoder half."""

    z_p: "torch.Tensor"  # [B, C, T_y], noise already applied, float32
    y_mask: "torch.Tensor"  # [B, 1, T_y] 0/1, float32
    y_lengths: "torch.Tensor"  # [B] int64 frames
    durations: "torch.Tensor"  # [B, T_x] frames per input id (ceil'ed, float)


def module_dtype(module) -> "torch.dtype":
    """The dtype a submodule's weights (and so its inputs) are in."""
    return next(module.parameters()).dtype


def encode_latents(
    model,
    x: "torch.Tensor",
    x_lengths: "torch.Tensor",
    noise_scale: "float | torch.Tensor" = 0.667,
    length_scale: "float | torch.Tensor" = 1.0,
    noise_w: "float | torch.Tensor" = 0.8,
) -> Latents:
    """Text encoder + stochastic duration predictor + prior expansion + noise."""
    import torch
    from TTS.tts.utils.helpers import generate_path, sequence_mask

    x_enc, m_p, logs_p, x_mask = model.text_encoder(x, x_lengths)
    dp_dtype = module_dtype(model.duration_predictor)
    logw = model.duration_predictor(
        x_enc.to(dp_dtype), x_mask.to(dp_dtype), g=None, reverse=True, noise_scale=noise_w
    )
    w = torch.exp(logw.to(x_mask.dtype)) * x_mask * length_scale
    w_ceil = torch.ceil(w)
    y_lengths = torch.clamp_min(torch.sum(w_ceil, [1, 2]), 1).long()
    y_mask = sequence_mask(y_lengths, None).to(x_mask.dtype).unsqueeze(1)  # [B, 1, T_y]
    attn_mask = x_mask.transpose(1, 2) * y_mask  # [B, T_x, T_y]
    attn = generate_path(w_ceil.squeeze(1), attn_mask)  # [B, T_x, T_y]
    m_p = torch.matmul(m_p, attn)  # [B, C, T_y]
    logs_p = torch.matmul(logs_p, attn)
    z_p = m_p + torch.randn_like(m_p) * torch.exp(logs_p) * noise_scale
    return Latents(z_p, y_mask, y_lengths, w_ceil[:, 0, :])


def flow_decode(model, z_p: "torch.Tensor", y_mask: "torch.Tensor") -> "torch.Tensor":
    """Reverse flow + HiFi-GAN decoder, each in its submodule's dtype: ``[B, 1, T_y * hop]`` audio."""
    flow_dtype = module_dtype(model.flow)
    y_mask_f = y_mask.to(flow_dtype)
    z = model.flow(z_p.to(flow_dtype), y_mask_f, g=None, reverse=True)
    dec_dtype = module_dtype(model.waveform_decoder)
    return model.waveform_decoder((z * y_mask_f).to(dec_dtype), g=None)


def split_infer(
    model,
    decode: Callable[["torch.Tensor", "torch.Tensor"], "torch.Tensor"],
    x: "torch.Tensor",
    x_lengths: "torch.Tensor",
    noise_scale: "float | torch.Tensor",
    length_scale: "float | torch.Tensor",
    noise_w: "float | torch.Tensor",
    hop_length: int,
) -> tuple["torch.Tensor", "torch.Tensor"]:
    """Whole inference with the flow+decoder half delegated to ``decode(z_p, y_mask)``.

    Returns ``(audio [B, T_wav], audio_lengths [B])``: item ``b`` is
    ``audio[b, :audio_lengths[b]]``.
    """
    lat = encode_latents(model, x, x_lengths, noise_scale, length_scale, noise_w)
    audio = decode(lat.z_p, lat.y_mask)
    return audio[:, 0, :], lat.y_lengths * hop_length


def piper_vits_infer(
    model,
    x: "torch.Tensor",
    x_lengths: "torch.Tensor",
    noise_scale: "float | torch.Tensor",
    length_scale: "float | torch.Tensor",
    noise_w: "float | torch.Tensor",
    hop_length: int,
) -> tuple["torch.Tensor", "torch.Tensor"]:
    """Piper's ``SynthesizerTrn.infer`` (single speaker) on a coqui ``Vits``, all in torch."""
    return split_infer(model, lambda z_p, y_mask: flow_decode(model, z_p, y_mask), x, x_lengths,
                       noise_scale, length_scale, noise_w, hop_length)


__all__ = ["Latents", "encode_latents", "flow_decode", "module_dtype", "piper_vits_infer", "split_infer"]
