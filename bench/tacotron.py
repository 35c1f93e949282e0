"""A Tacotron 2 built offline, for the dynamic-int8 benchmark and its tests.

Why here and not in the studio package: nothing the studio runs needs a randomly
initialised Tacotron; it exists to show what ``quantize_dynamic`` does on a model
that has LSTM and Linear layers (a VITS voice has none). ``bench/`` scripts import
it as a sibling; the tests put ``bench/`` on their path (``tests/conftest.py``).
"""

from __future__ import annotations

import copy
import logging
import warnings


def random_tacotron2(seed: int = 0, max_decoder_steps: int = 200):
    """A randomly initialised coqui ``Tacotron2`` (default ``Tacotron2Config``), built offline.

    Its stop token is disabled (threshold above sigmoid's range) so inference
    always runs exactly ``max_decoder_steps`` decoder steps: a fixed amount of
    work for benchmarks. The default character tokenizer is built from the
    config, nothing is downloaded.
    """
    import torch
    from TTS.tts.configs.tacotron2_config import Tacotron2Config
    from TTS.tts.models.tacotron2 import Tacotron2

    torch.manual_seed(seed)
    logging.getLogger("TTS").setLevel(logging.ERROR)
    config = Tacotron2Config(max_decoder_steps=max_decoder_steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Tacotron2(config).eval()
    model.decoder.stop_threshold = 2.0  # sigmoid < 1: never stop early
    model.decoder.max_decoder_steps = max_decoder_steps
    return model


def tacotron2_input(model, length: int = 60, seed: int = 0) -> "torch.Tensor":  # noqa: F821 - torch is imported inside
    """``[1, length]`` random character ids valid for ``model``'s embedding."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    return torch.randint(1, model.num_chars, (1, length), generator=gen)


def copy_model(model):
    """A deep copy (quantize the copy, keep the FP32 original for comparison)."""
    return copy.deepcopy(model)
