"""SplitEngine loads its two halves at the same time: the encoder serves (and the streams
encode ahead) while the decoder starts.

The encoder is the bundled voice's real ONNX encoder; the decoder is a small one made
here that decodes silence, so that its start can be held and failed at will (torch's
real start-up is ~2 s and cannot be held).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from studio.engine.base import EngineError, PendingBuild
from studio.engine.onnx.piper import OnnxPiperEngine
from studio.engine.serving.split_engine import SplitEngine
from studio.engine.serving.streams import MultiStreamSynthesizer
from studio.engine.voice.catalog import get_voice
from studio.engine.decode_windows import Latent, Window

from support.voice import DETERMINISTIC as SILENT


class HeldDecoder:
    """Decodes windows as silence of the right length, once its start is released."""

    def __init__(self, hop: int, fail: bool = False) -> None:
        self.hop = hop
        self.fail = fail
        self.release = threading.Event()
        self.started = threading.Event()
        self.loaded = False
        self.closed = False

    def load(self) -> None:
        self.started.set()
        assert self.release.wait(30)
        if self.fail:
            raise EngineError("the decoder's runtime is broken")
        self.loaded = True

    def decode_window(self, latent: Latent, window: Window) -> np.ndarray:
        assert self.loaded
        return np.zeros((window.stop - window.start) * self.hop, dtype=np.float32)

    def pending_build(self) -> PendingBuild | None:
        return None

    def describe(self) -> str:
        return "silence"

    def close(self) -> None:
        self.closed = True


def _split(fail: bool = False) -> tuple[SplitEngine, HeldDecoder]:
    voice = get_voice(None)
    encoder = OnnxPiperEngine(voice.model_path, voice.config_path, threads=1, window_frames=128, encode_only=True)
    decoder = HeldDecoder(encoder.config.hop_length, fail)
    return SplitEngine(encoder, decoder, "split"), decoder


def test_the_encoder_serves_while_the_decoder_is_still_starting() -> None:
    engine, decoder = _split()
    try:
        engine.load()  # returns with the decoder's start still held
        assert decoder.started.wait(30) and not decoder.loaded
        ids = engine.text_to_ids("The lamps were lit along the quay before the boats came in.", "en")
        (latent,) = engine.encode_batch([ids], SILENT)
        assert latent.frames > 0 and latent.windows

        got: list[np.ndarray] = []
        first = threading.Thread(target=lambda: got.append(engine.decode_window(latent, latent.windows[0])))
        first.start()
        first.join(0.3)
        assert first.is_alive() and not got  # the first window waits for the decoder
        decoder.release.set()
        first.join(30)
        window = latent.windows[0]
        assert len(got) == 1 and got[0].size == (window.stop - window.start) * decoder.hop
    finally:
        decoder.release.set()
        engine.close()
    assert decoder.closed


def test_a_decoder_that_fails_to_start_fails_every_window_and_still_closes() -> None:
    engine, decoder = _split(fail=True)
    decoder.release.set()
    try:
        engine.load()
        ids = engine.text_to_ids("Nobody answered the bell.", "en")
        (latent,) = engine.encode_batch([ids], SILENT)
        for _ in range(2):
            with pytest.raises(EngineError, match="runtime is broken"):
                engine.decode_window(latent, latent.windows[0])
        with pytest.raises(EngineError, match="runtime is broken"):
            engine.synthesize_batch([ids], SILENT)
    finally:
        engine.close()
    assert decoder.closed


class CountingEncoder(OnnxPiperEngine):
    """The real encoder, counting the sentences it has encoded (across streams)."""

    lock = threading.Lock()
    encoded = 0

    def encode_batch(self, ids, settings):
        latents = super().encode_batch(ids, settings)
        with CountingEncoder.lock:
            CountingEncoder.encoded += len(ids)
        return latents


def test_the_streams_encode_ahead_while_the_decoder_is_still_starting() -> None:
    voice = get_voice(None)
    decoders: list[HeldDecoder] = []

    def split() -> SplitEngine:
        encoder = CountingEncoder(voice.model_path, voice.config_path, threads=1, window_frames=128, encode_only=True)
        decoders.append(HeldDecoder(encoder.config.hop_length))
        return SplitEngine(encoder, decoders[-1], "split")

    texts = ["The lamps were lit along the quay.", "Nobody answered the bell.", "The tide came in at dusk.",
             "She folded the map twice.", "A gull cried over the harbour wall."]
    CountingEncoder.encoded = 0
    synth = MultiStreamSynthesizer(split, streams=2)
    try:
        ids = [synth.text_to_ids(t, "en") for t in texts]
        got: list[list[np.ndarray]] = []
        run = threading.Thread(target=lambda: got.append(synth.synthesize_all(ids, SILENT)))
        run.start()
        deadline = time.monotonic() + 30
        while CountingEncoder.encoded < len(texts) and time.monotonic() < deadline:
            time.sleep(0.01)
        # every sentence was encoded while both decoders were still held
        assert CountingEncoder.encoded == len(texts) and not any(d.loaded for d in decoders)
        for d in decoders:
            d.release.set()
        run.join(30)
        assert len(got) == 1 and [a.size > 0 for a in got[0]] == [True] * len(texts)
    finally:
        for d in decoders:
            d.release.set()
        synth.close()
