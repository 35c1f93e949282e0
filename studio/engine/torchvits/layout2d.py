"""The HiFi-GAN decoder on 2-D convolutions in channels-last memory: what BF16 needs on a CPU.

Why: oneDNN keeps a 1-D convolution's activations in its own blocked layout
(``nCw16c``) and torch keeps them plain (``ncw``), so every convolution of the
decoder reordered its input and its output, and its element-wise neighbours
(leaky ReLU, the residual adds) read the plain copy. In BF16 on a 2-core Zen 4 the
reorders were 28 % of the decoder's time and left BF16 no faster than ONNX
Runtime's FP32 kernels. The same convolutions as 2-D ones over ``[B, C, 1, T]``
in torch's channels-last format (``nhwc``) run on oneDNN's ``nhwc`` kernels
directly, and the element-wise ops read the same memory: one 448-frame window's
decoder went from ~250 ms to ~150 ms (frozen, weights pre-packed), outputs
equal to BF16 rounding (docs/speed-notes.md).

The flow stays 1-D (a quarter of the time, at the latent's frame rate, with masks
shaped for 1-D). The decoder is copied, not changed in place: the model's own
forward (whole-sentence synthesis) keeps working.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def decoder_to_2d(decoder: "torch.nn.Module") -> "torch.nn.Module":
    """A copy of ``decoder`` with every ``Conv1d`` / ``ConvTranspose1d`` as its 2-D
    twin (kernel ``(1, k)``), in channels-last memory; it takes ``[B, C, 1, T]``."""
    import torch

    twin = copy.deepcopy(decoder)
    _convert(twin)
    return twin.to(memory_format=torch.channels_last)


def _convert(module: "torch.nn.Module") -> None:
    import torch

    for name, child in list(module.named_children()):
        if isinstance(child, (torch.nn.Conv1d, torch.nn.ConvTranspose1d)):
            setattr(module, name, _conv_2d(child))
        else:
            _convert(child)


def _conv_2d(conv: "torch.nn.Conv1d | torch.nn.ConvTranspose1d") -> "torch.nn.Module":
    import torch

    common = dict(stride=(1, conv.stride[0]), padding=(0, conv.padding[0]), dilation=(1, conv.dilation[0]),
                  groups=conv.groups, bias=conv.bias is not None)
    if isinstance(conv, torch.nn.ConvTranspose1d):
        twin = torch.nn.ConvTranspose2d(conv.in_channels, conv.out_channels, (1, conv.kernel_size[0]),
                                        output_padding=(0, conv.output_padding[0]), **common)
    else:
        twin = torch.nn.Conv2d(conv.in_channels, conv.out_channels, (1, conv.kernel_size[0]), **common)
    weight = conv.weight.detach()  # weight norm folded: the weight the 1-D conv computes with
    twin = twin.to(weight.dtype)
    with torch.no_grad():
        twin.weight.copy_(weight.unsqueeze(2))
        if conv.bias is not None:
            twin.bias.copy_(conv.bias.detach())
    return twin.eval()


def flow_decoder_2d(model) -> "torch.nn.Module":
    """``(z_p, y_mask) -> audio [B, 1, T]``: ``model``'s reverse flow (1-D) and a 2-D
    channels-last copy of its waveform decoder (:func:`decoder_to_2d`)."""
    import torch

    from studio.engine.torchvits.infer import module_dtype

    class FlowDecoder2d(torch.nn.Module):
        """Reverse flow + the decoder's 2-D twin, each in its own dtype."""

        def __init__(self) -> None:
            super().__init__()
            self.flow = model.flow
            self.decoder = decoder_to_2d(model.waveform_decoder)
            self.flow_dtype = module_dtype(model.flow)
            self.dec_dtype = module_dtype(model.waveform_decoder)

        def forward(self, z_p: "torch.Tensor", y_mask: "torch.Tensor") -> "torch.Tensor":
            mask = y_mask.to(self.flow_dtype)
            z = self.flow(z_p.to(self.flow_dtype), mask, g=None, reverse=True)
            x = (z * mask).to(self.dec_dtype).unsqueeze(2).contiguous(memory_format=torch.channels_last)
            return self.decoder(x, g=None).squeeze(2)

    return FlowDecoder2d().eval()
