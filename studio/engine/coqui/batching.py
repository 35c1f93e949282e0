"""Tacotron 2 on a padded batch, masked so that padding never changes an item's mel.

Why not coqui's ``Tacotron2.inference`` for a batch: it runs the encoder's convolutions
and LSTM over the padding, its decoder's attention looks at padded positions, it stops
the whole batch on one stop token and its postnet smears the padding into the last
frames. Here, with coqui's own submodules (embedding, encoder convolutions and LSTM,
decoder cell, attention, prenet, postnet):

* padded input positions are zeroed after the embedding and after every encoder
  convolution (so a convolution at an item's end sees zeros, as alone), and the LSTM
  gets packed sequences;
* the attention is masked to each item's own characters;
* each item stops at its own stop token (``stop > threshold`` after the first step,
  coqui's rule for one sentence), the batch runs until the last one stops;
* frames past an item's end are zeroed before and inside the postnet;
* a prenet that keeps dropout at inference draws each item's mask from its own
  generator seeded by the sentence (:func:`studio.engine.noise.sentence_seed`).

So a sentence alone and inside a batch of mixed lengths give the same mel up to float
rounding (the exactness test and ``bench/coqui.py`` measure it).
"""

from __future__ import annotations

from typing import Any, Sequence


def tacotron2_mels(model: Any, ids: Sequence[Sequence[int]], speaker_ids: Sequence[int] | None,
                   seeds: Sequence[int]) -> list[Any]:
    """Each item's postnet mel ``[frames, mels]`` (the model's normalisation), as a torch tensor."""
    import torch
    import torch.nn.functional as F
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    device = next(model.parameters()).device
    n = len(ids)
    lengths = torch.tensor([len(x) for x in ids], dtype=torch.long)
    longest = int(lengths.max())
    x = torch.zeros((n, longest), dtype=torch.long)
    for i, seq in enumerate(ids):
        x[i, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
    x = x.to(device)
    mask = (torch.arange(longest)[None, :] < lengths[:, None]).to(device)
    keep = mask[:, None, :].to(next(model.embedding.parameters()).dtype)

    o = model.embedding(x).transpose(1, 2) * keep
    for layer in model.encoder.convolutions:
        o = layer(o) * keep
    packed = pack_padded_sequence(o.transpose(1, 2), lengths, batch_first=True, enforce_sorted=False)
    o, _ = model.encoder.lstm(packed)
    o, _ = pad_packed_sequence(o, batch_first=True, total_length=longest)
    if getattr(model, "num_speakers", 1) > 1 and getattr(model, "speaker_embedding", None) is not None:
        sid = torch.as_tensor(list(speaker_ids or [0] * n), dtype=torch.long, device=device)
        o = model._concat_speaker_embedding(o, model.speaker_embedding(sid).unsqueeze(1))

    decoder = model.decoder
    generators = [torch.Generator().manual_seed(s & 0x7FFF_FFFF_FFFF_FFFF) for s in seeds]
    memory = decoder._update_memory(decoder.get_go_frame(o))
    decoder._init_states(o, mask=mask)
    decoder.attention.init_states(o)
    outputs, stops, alignments = [], [], []
    stopped: list[int | None] = [None] * n
    for step in range(decoder.max_decoder_steps):
        memory = _prenet(decoder.prenet, memory, generators, F)
        out, alignment, stop = decoder.decode(memory)
        stop = torch.sigmoid(stop.float()).reshape(n)
        outputs.append(out.squeeze(1))
        stops.append(stop)
        alignments.append(alignment)
        for i in range(n):
            if stopped[i] is None and step > 0 and float(stop[i]) > decoder.stop_threshold:
                stopped[i] = step + 1
        if all(s is not None for s in stopped):
            break
        memory = decoder._update_memory(out)
    mel, _, _ = decoder._parse_outputs(outputs, stops, alignments)  # [B, mels, frames]
    frames = torch.tensor([(s or len(outputs)) * decoder.r for s in stopped])
    keep_frames = (torch.arange(mel.shape[2])[None, :] < frames[:, None]).to(device)[:, None, :].to(mel.dtype)
    mel = mel * keep_frames
    post = mel
    for layer in model.postnet.convolutions:
        post = layer(post) * keep_frames
    mel = mel + post
    return [mel[i, :, : int(frames[i])].transpose(0, 1) for i in range(n)]


def _prenet(prenet: Any, x: Any, generators: list[Any], F: Any) -> Any:
    """coqui's Prenet, with each item's inference dropout drawn from its own generator."""
    import torch

    for linear in prenet.linear_layers:
        x = F.relu(linear(x))
        if prenet.prenet_dropout and prenet.dropout_at_inference:
            drawn = torch.stack([torch.rand(x.shape[1], generator=g) for g in generators]).to(x.device)
            x = x * (drawn >= 0.5).to(x.dtype) * 2.0
    return x
