"""Tiny Coqui checkpoints built offline with coqui-tts's own classes, saved as coqui-tts saves them.

Why here: the Coqui benchmark (``bench/coqui.py``) and the tests need one checkpoint of
each architecture, and model hubs are out of reach. Weights are random (seeded), so the
audio is noise-like, but every layer, tokenizer, speaker and language table is real: a
folder with ``config.json`` and ``model.pth`` (``{"model": state_dict, "config": ...}``,
what coqui's trainer writes), plus ``speakers.json`` / ``language_ids.json`` where the
model has them, and for Tacotron 2 a HiFi-GAN vocoder saved in its own folder.
``bench/`` scripts import it as a sibling; the tests put ``bench/`` on their path.
"""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

#: grapheme tokens only: the tests run without espeak-ng
_CHARACTERS = {
    "characters_class": "TTS.tts.utils.text.characters.Graphemes",
    "pad": "<PAD>", "eos": "<EOS>", "bos": "<BOS>", "blank": "<BLNK>",
    "characters": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "punctuations": "!'(),-.:;? ", "phonemes": None, "is_unique": True, "is_sorted": True,
}
_AUDIO = {"sample_rate": 22050, "num_mels": 80, "hop_length": 256, "win_length": 1024, "fft_size": 1024,
          "mel_fmin": 0.0, "mel_fmax": 8000.0}


def _save(model, config, folder: Path) -> Path:
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    config.save_json(str(folder / "config.json"))
    torch.save({"model": model.state_dict(), "config": config.to_dict()}, folder / "model.pth")
    return folder


def _quiet() -> None:
    logging.getLogger("TTS").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")


def _common(config, language: str = "en") -> None:
    from TTS.tts.configs.shared_configs import CharactersConfig

    config.use_phonemes = False
    config.text_cleaner = "basic_cleaners"
    config.characters = CharactersConfig(**_CHARACTERS)
    config.phoneme_language = language
    for key, value in _AUDIO.items():
        config.audio[key] = value


def tacotron2(folder: Path, seed: int = 0, max_decoder_steps: int = 120, stop_below: float | None = None) -> Path:
    """A Tacotron 2 (coqui's default sizes: the LSTMs and Linears dynamic-int8 quantizes).

    A random stop token never fires where a trained one would (its logit sits near 0, so
    coqui's rule stops every sentence after two frames). ``stop_below``: the stop token
    fires once its untrained logit falls below this value instead, which happens after a
    few frames for some sentences and never for others (they run ``max_decoder_steps``):
    mixed lengths, each decided by the item's own stop token. None keeps it as built.
    """
    import torch
    from TTS.tts.configs.tacotron2_config import Tacotron2Config
    from TTS.tts.models.tacotron2 import Tacotron2

    _quiet()
    torch.manual_seed(seed)
    config = Tacotron2Config(max_decoder_steps=max_decoder_steps, r=1)
    _common(config)
    model = Tacotron2.init_from_config(config).eval()
    if stop_below is not None:
        layer = model.decoder.stopnet[-1].linear_layer
        with torch.no_grad():  # logit' = 1000 * (stop_below - logit)
            layer.weight.mul_(-1000.0)
            layer.bias.copy_(1000.0 * (stop_below - layer.bias))
    return _save(model, config, folder)


def hifigan(folder: Path, seed: int = 0, **audio) -> Path:
    """A small HiFi-GAN generator (upsampling 256x: the Tacotron's hop), in its own folder."""
    import torch
    from TTS.vocoder.configs.hifigan_config import HifiganConfig
    from TTS.vocoder.models import setup_model

    _quiet()
    torch.manual_seed(seed)
    config = HifiganConfig()
    for key, value in {**_AUDIO, **audio}.items():
        config.audio[key] = value
    config.generator_model_params = {
        "upsample_factors": [8, 8, 4], "upsample_kernel_sizes": [16, 16, 8], "upsample_initial_channel": 64,
        "resblock_kernel_sizes": [3], "resblock_dilation_sizes": [[1, 3, 5]], "resblock_type": "1",
    }
    model = setup_model(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    config.save_json(str(folder / "config.json"))
    # the generator alone, with an empty ``model_disc``: how coqui's released GAN vocoders are saved
    torch.save({"model": model.model_g.state_dict(), "model_disc": {}, "config": config.to_dict()},
               folder / "model.pth")
    return folder


def glow_tts(folder: Path, seed: int = 0) -> Path:
    """A small Glow-TTS (few channels and flow blocks)."""
    import torch
    from TTS.tts.configs.glow_tts_config import GlowTTSConfig
    from TTS.tts.models.glow_tts import GlowTTS

    _quiet()
    torch.manual_seed(seed)
    config = GlowTTSConfig(hidden_channels_enc=32, hidden_channels_dec=32, hidden_channels_dp=32,
                           num_flow_blocks_dec=2, num_block_layers=2)
    config.encoder_params = {**config.encoder_params, "hidden_channels_ffn": 64, "num_heads": 2, "num_layers": 2}
    _common(config)
    model = GlowTTS.init_from_config(config).eval()
    return _save(model, config, folder)


def vits(folder: Path, seed: int = 0, speakers: tuple[str, ...] = (), languages: tuple[str, ...] = ()) -> Path:
    """A small VITS: one speaker, or several (``speakers.json``), or multilingual (``language_ids.json``)."""
    import torch
    from TTS.tts.configs.vits_config import VitsConfig
    from TTS.tts.models.vits import Vits, VitsArgs

    _quiet()
    torch.manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    args = VitsArgs(hidden_channels=32, hidden_channels_ffn_text_encoder=64, num_heads_text_encoder=2,
                    num_layers_text_encoder=2, num_layers_flow=2, num_layers_posterior_encoder=2,
                    resblock_kernel_sizes_decoder=[3], resblock_dilation_sizes_decoder=[[1, 3, 5]],
                    upsample_rates_decoder=[8, 8, 4], upsample_kernel_sizes_decoder=[16, 16, 8],
                    upsample_initial_channel_decoder=64, spec_segment_size=8,
                    init_discriminator=False)
    if speakers:
        (folder / "speakers.json").write_text(json.dumps({name: i for i, name in enumerate(speakers)}))
        args.use_speaker_embedding, args.num_speakers = True, len(speakers)
        args.speakers_file = str(folder / "speakers.json")
    if languages:
        (folder / "language_ids.json").write_text(json.dumps({name: i for i, name in enumerate(languages)}))
        args.use_language_embedding, args.num_languages = True, len(languages)
        args.language_ids_file = str(folder / "language_ids.json")
    config = VitsConfig(model_args=args)
    _common(config, languages[0] if languages else "en")
    if languages:
        config.language_ids_file = args.language_ids_file
    if speakers:
        config.speakers_file, config.num_speakers, config.use_speaker_embedding = args.speakers_file, len(speakers), True
    model = Vits.init_from_config(config).eval()
    return _save(model, config, folder)


def xtts(folder: Path, seed: int = 0, languages: tuple[str, ...] = ("en", "fr")) -> Path:
    """A small XTTS v2 (a 2-layer GPT; the HiFi-GAN decoder and speaker encoder have coqui's fixed
    sizes) with its tokenizer file ``vocab.json``: a BPE trained here with the ``tokenizers``
    library on a few sentences, with the special tokens coqui's ``VoiceBpeTokenizer`` uses.
    Its audio-token limit is small, so an untrained GPT that never emits its stop token still
    ends each request after 40 codes."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from TTS.tts.configs.xtts_config import XttsConfig
    from TTS.tts.layers.xtts.tokenizer import VoiceBpeTokenizer
    from TTS.tts.models.xtts import Xtts, XttsArgs

    _quiet()
    torch.manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    special = ["[STOP]", "[UNK]", "[SPACE]", "[START]", *(f"[{lang}]" for lang in languages)]
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=160, special_tokens=special,
                                  initial_alphabet=list("abcdefghijklmnopqrstuvwxyz.,!?;:'-"))
    tokenizer.train_from_iterator(["the river was quiet today and the garden was green",
                                   "hello there my friend", "bonjour mes amis"], trainer)
    tokenizer.save(str(folder / "vocab.json"))
    args = XttsArgs(gpt_layers=2, gpt_n_model_channels=64, gpt_n_heads=2, decoder_input_dim=64,
                    gpt_max_audio_tokens=40, gpt_max_text_tokens=200, gpt_max_prompt_tokens=20,
                    gpt_num_audio_tokens=258, gpt_start_audio_token=256, gpt_stop_audio_token=257)
    config = XttsConfig(model_args=args, languages=list(languages))
    model = Xtts.init_from_config(config)
    model.tokenizer = VoiceBpeTokenizer(vocab_file=str(folder / "vocab.json"))
    model.init_models()
    config.save_json(str(folder / "config.json"))
    torch.save({"model": model.state_dict()}, folder / "model.pth")
    return folder


def speech_like(seconds: float = 8.0, rate: int = 22050, seed: int = 0):
    """A voiced-sounding test recording (a gliding pitch with syllable-rate pauses), float32 mono."""
    import numpy as np

    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    pitch = 140 + 30 * np.sin(2 * np.pi * 0.7 * t)
    voice = sum(np.sin(2 * np.pi * k * np.cumsum(pitch) / rate) / k for k in range(1, 6))
    syllables = 0.6 + 0.4 * np.sin(2 * np.pi * 4 * t)
    return (0.2 * voice * syllables + 0.002 * rng.standard_normal(t.size)).astype(np.float32)
