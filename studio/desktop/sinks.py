"""Where preview audio goes: a sound card (sounddevice) or a device-less sink.

Why a sink interface: the player's logic (ordering, latest request wins, pause,
which sentence is being heard) must not depend on a sound card being present --
machines in CI, remote desktops and this build box have none. A sink *pulls*
audio from the player (``pull(frames) -> float32 array``) at its own pace:

* :class:`SoundDeviceSink` from the PortAudio callback (real hardware);
* :class:`NullSink` from a thread that consumes samples in real time and throws
  them away (no device) -- a real consumer with real timing, used by tests and
  by anyone who wants to follow a render's timing without sound.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from typing import Callable

import numpy as np

from studio.core.errors import StudioError

log = logging.getLogger(__name__)

Pull = Callable[[int], np.ndarray]


class AudioUnavailable(StudioError):
    """No way to play sound here; the message says why and what still works."""


class AudioSink(ABC):
    """Consumes mono float32 audio at ``rate`` by calling ``pull(frames)``."""

    rate: int = 0

    @abstractmethod
    def start(self, rate: int, pull: Pull) -> None:
        """Open the output and start pulling. Raises AudioUnavailable."""

    @abstractmethod
    def close(self) -> None:
        """Stop pulling and release the output. Idempotent."""


class NullSink(AudioSink):
    """A sink without a device: pulls ``block_s`` of audio every ``block_s / speed`` seconds.

    ``speed`` > 1 consumes faster than real time (tests that do not want to wait
    for a whole sentence); the pacing is still driven by the clock, like a card.
    """

    def __init__(self, block_s: float = 0.02, speed: float = 1.0) -> None:
        self.block_s = block_s
        self.speed = speed
        self.consumed = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, rate: int, pull: Pull) -> None:
        self.rate = int(rate)
        self._stop.clear()
        frames = max(1, int(rate * self.block_s))
        period = self.block_s / self.speed

        def run() -> None:
            next_at = time.monotonic()
            while not self._stop.is_set():
                block = pull(frames)
                self.consumed += len(block)
                next_at += period
                delay = next_at - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
                else:
                    next_at = time.monotonic()

        self._thread = threading.Thread(target=run, name="null-audio-sink", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(1.0)
        self._thread = None


#: what a producer reads when this computer cannot play sound (PortAudio's "Error querying device -1" goes to the log)
NO_DEVICE = "No sound output device found."


def output_device_problem() -> str | None:
    """Why sound cannot be played here, in a producer's words (None when an output device exists);
    the library's own reason is logged for whoever fixes the setup."""
    try:
        import sounddevice as sd
    except (ImportError, OSError) as exc:  # OSError: the PortAudio library is missing
        log.info("no sound output: the sound library cannot be loaded (%s)", exc)
        return "No sound output: the sound library (PortAudio) is not installed."
    try:
        sd.query_devices(kind="output")
    except Exception as exc:  # noqa: BLE001 - sd.PortAudioError, ValueError
        log.info("no sound output device: %s", exc)
        return NO_DEVICE
    return None


class SoundDeviceSink(AudioSink):
    """The default output device through ``sounddevice.OutputStream`` (callback mode)."""

    def __init__(self, latency: str = "low") -> None:
        self.latency = latency
        self._stream = None

    def start(self, rate: int, pull: Pull) -> None:
        problem = output_device_problem()
        if problem:
            raise AudioUnavailable(problem + " Preview playback is off; rendering and export still work.")
        import sounddevice as sd

        def callback(outdata, frames, _time, status) -> None:  # noqa: ANN001 - PortAudio signature
            if status:
                log.debug("audio output status: %s", status)
            outdata[:, 0] = pull(frames)

        try:
            self._stream = sd.OutputStream(
                samplerate=int(rate), channels=1, dtype="float32", callback=callback, latency=self.latency
            )
            self._stream.start()
        except Exception as exc:  # noqa: BLE001 - PortAudioError and friends
            self._stream = None
            raise AudioUnavailable(f"Cannot open the audio output ({exc}). Preview playback is off.") from exc
        self.rate = int(rate)

    def close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.stop()
                stream.close()
            except Exception:  # noqa: BLE001 - closing must not fail loudly
                log.debug("closing audio stream failed", exc_info=True)
