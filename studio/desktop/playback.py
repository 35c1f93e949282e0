"""The preview player: a play list of cached and streamed pieces, one sink, latest wins.

Why it works this way:

* A preview is a :class:`PlayList` of :class:`Segment` s in reading order. A
  segment is either a rendered sentence (pulled from the project cache by its key,
  on the player's own feeder thread) or a *passage* that the model worker is
  synthesizing right now: its chunks arrive through :meth:`Player.deliver` as the
  streaming synthesizer yields them, so playback starts with the first chunk.
* **Latest request wins**: :meth:`Player.play` makes the new play list current;
  the old feeder notices and exits, queued audio is dropped, and chunks the worker
  still delivers for an old request are refused (``deliver`` returns False), which
  tells the worker to stop synthesizing it.
* The sink pulls audio (:mod:`studio.desktop.sinks`); every block carries the id of the
  sentence it belongs to, so :meth:`position` knows which sentence is being heard
  -- a passage chunk covering several sentences is split in proportion to their
  characters.
* Nothing here touches Qt: :mod:`studio.desktop.preview` polls :meth:`position` from a
  GUI timer.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np

from studio.audio.resample import resample
from studio.desktop.messages import PlaybackPosition
from studio.desktop.sinks import AudioSink, AudioUnavailable

log = logging.getLogger(__name__)

#: synthesized audio queued ahead of the listener beyond which the worker waits
SYNTH_AHEAD_S = 8.0
#: cached audio read ahead of the listener
READ_AHEAD_S = 20.0

LoadCached = Callable[[str], "tuple[np.ndarray, int] | None"]


@dataclass(frozen=True)
class Segment:
    """One piece of a play list.

    ``cache_key`` set: a rendered sentence (``sentence_ids`` has one id). Else
    ``passage`` is the index of a :class:`~studio.desktop.messages.PreviewPassage` the
    worker synthesizes, ``sentence_ids`` its sentences and ``offsets`` where each
    starts in the passage text. ``pause_after`` seconds of silence follow.
    """

    sentence_ids: tuple[int, ...]
    cache_key: str | None = None
    passage: int | None = None
    offsets: tuple[int, ...] = (0,)
    pause_after: float = 0.0


@dataclass(frozen=True)
class PlayList:
    request_id: int
    segments: tuple[Segment, ...]
    label: str = ""


@dataclass
class _Chunk:
    samples: np.ndarray
    rate: int
    span: tuple[int, int]
    last: bool
    error: str = ""


class Player:
    """Plays :class:`PlayList` s through a sink made by ``sink_factory`` (lazily)."""

    def __init__(
        self,
        load_cached: LoadCached,
        sink_factory: Callable[[], AudioSink] | None,
        *,
        rate: int = 22050,
        on_room: Callable[[], None] | None = None,
    ) -> None:
        self._load_cached = load_cached
        self._sink_factory = sink_factory
        self._rate = rate
        self._on_room = on_room
        self._cond = threading.Condition()
        self._sink: AudioSink | None = None
        self._list: PlayList | None = None
        self._out: deque[tuple[np.ndarray, int | None]] = deque()
        self._out_frames = 0
        self._inbox: dict[int, deque[_Chunk]] = {}
        self._inbox_s = 0.0
        self._fed = False
        self._paused = False
        self._played = 0
        self._sentence: int | None = None
        self._message = ""
        self._problem: str | None = None

    # ------------------------------------------------------------ control

    def play(self, playlist: PlayList) -> bool:
        """Make ``playlist`` current (dropping whatever played before). False: no output."""
        if not self._ensure_sink():
            with self._cond:
                self._list = playlist
                self._message = self._problem or "no audio output"
            return False
        with self._cond:
            self._list = playlist
            self._out.clear()
            self._out_frames = 0
            self._inbox = {s.passage: deque() for s in playlist.segments if s.passage is not None}
            self._inbox_s = 0.0
            self._fed = False
            self._paused = False
            self._played = 0
            self._sentence = playlist.segments[0].sentence_ids[0] if playlist.segments else None
            self._message = ""
            self._cond.notify_all()
        threading.Thread(target=self._feed, args=(playlist,), name=f"preview-feed-{playlist.request_id}", daemon=True).start()
        return True

    def stop(self) -> None:
        with self._cond:
            self._list = None
            self._out.clear()
            self._out_frames = 0
            self._inbox = {}
            self._sentence = None
            self._cond.notify_all()

    def pause(self) -> None:
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        with self._cond:
            self._paused = False

    def toggle(self) -> bool:
        """Pause if playing, resume if paused; returns True when now paused."""
        with self._cond:
            self._paused = not self._paused
            return self._paused

    def close(self) -> None:
        self.stop()
        sink, self._sink = self._sink, None
        if sink is not None:
            sink.close()

    @property
    def problem(self) -> str | None:
        """Why there is no sound (None while a sink works or none was tried)."""
        return self._problem

    # ------------------------------------------------------------ the worker's side

    def deliver(self, request_id: int, passage: int, samples: np.ndarray, rate: int, span: tuple[int, int], last: bool) -> bool:
        """A synthesized chunk for ``passage``; False if that request is no longer current."""
        with self._cond:
            if self._list is None or self._list.request_id != request_id or passage not in self._inbox:
                return False
            self._inbox[passage].append(_Chunk(np.asarray(samples, np.float32), int(rate), span, last))
            self._inbox_s += len(samples) / float(rate)
            self._cond.notify_all()
            return True

    def fail(self, request_id: int, passage: int, message: str) -> None:
        """The worker could not synthesize ``passage``; playback skips it and says why."""
        with self._cond:
            if self._list is not None and self._list.request_id == request_id and passage in self._inbox:
                self._inbox[passage].append(_Chunk(np.zeros(0, np.float32), self._rate, (0, 0), True, message))
                self._cond.notify_all()

    def wants_more(self, request_id: int) -> bool:
        """Whether the worker should synthesize the next chunk of ``request_id`` now."""
        with self._cond:
            if self._list is None or self._list.request_id != request_id:
                return False
            return self._inbox_s + self._out_frames / float(self._rate) < SYNTH_AHEAD_S

    def is_current(self, request_id: int) -> bool:
        with self._cond:
            return self._list is not None and self._list.request_id == request_id

    # ------------------------------------------------------------ position

    def position(self) -> PlaybackPosition:
        with self._cond:
            pl = self._list
            if pl is None:
                return PlaybackPosition(message=self._message)
            if self._problem and self._sink is None:
                state = "error"
            elif self._paused:
                state = "paused"
            elif self._out_frames:
                state = "playing"
            elif self._fed:
                state = "finished"
            else:
                state = "buffering"
            return PlaybackPosition(
                pl.request_id, state, self._sentence, self._played / float(self._rate), pl.label, self._message
            )

    # ------------------------------------------------------------ internals

    def _ensure_sink(self) -> bool:
        if self._sink is not None:
            return True
        if self._sink_factory is None:
            self._problem = self._problem or "No audio output is configured."
            return False
        try:
            sink = self._sink_factory()
            sink.start(self._rate, self._pull)
        except AudioUnavailable as exc:
            self._problem = str(exc)
            log.warning("%s", exc)
            return False
        self._problem = None
        self._sink = sink
        return True

    def _current(self, playlist: PlayList) -> bool:
        return self._list is playlist

    def _push(self, playlist: PlayList, audio: np.ndarray, rate: int, sentence: int | None) -> bool:
        """Queue audio for the sink (resampled to its rate); False if superseded."""
        if audio.size == 0:
            return self._current(playlist)
        if rate != self._rate:
            audio = resample(audio, rate, self._rate)
        with self._cond:
            if not self._current(playlist):
                return False
            self._out.append((np.ascontiguousarray(audio, np.float32), sentence))
            self._out_frames += len(audio)
            return True

    def _room(self, playlist: PlayList, limit_s: float) -> bool:
        """Wait until less than ``limit_s`` is queued; False if superseded meanwhile."""
        with self._cond:
            while self._current(playlist) and self._out_frames / float(self._rate) >= limit_s:
                self._cond.wait(0.1)
            return self._current(playlist)

    def _feed(self, playlist: PlayList) -> None:
        """Feeder thread: walk the play list in order, loading or waiting for each piece."""
        try:
            for seg in playlist.segments:
                if not self._room(playlist, READ_AHEAD_S):
                    return
                if seg.cache_key is not None:
                    got = self._load_cached(seg.cache_key)
                    if got is None:
                        self._note(playlist, f"sentence {seg.sentence_ids[0]} has no usable audio in the cache")
                    elif not self._push(playlist, got[0], got[1], seg.sentence_ids[0]):
                        return
                elif seg.passage is not None and not self._feed_passage(playlist, seg):
                    return
                if seg.pause_after > 0:
                    silence = np.zeros(int(seg.pause_after * self._rate), np.float32)
                    if not self._push(playlist, silence, self._rate, seg.sentence_ids[-1]):
                        return
        except Exception as exc:  # noqa: BLE001 - a preview must never take the app down
            log.exception("preview playback failed")
            self._note(playlist, f"preview failed: {exc}")
        finally:
            with self._cond:
                if self._current(playlist):
                    self._fed = True

    def _feed_passage(self, playlist: PlayList, seg: Segment) -> bool:
        while True:
            with self._cond:
                inbox = self._inbox.get(seg.passage)  # type: ignore[arg-type]
                while self._current(playlist) and inbox is not None and not inbox:
                    self._cond.wait(0.1)
                if not self._current(playlist) or inbox is None:
                    return False
                chunk = inbox.popleft()
                self._inbox_s = max(0.0, self._inbox_s - len(chunk.samples) / float(chunk.rate))
            if self._on_room is not None:
                self._on_room()
            if chunk.error:
                self._note(playlist, chunk.error)
                return True
            for audio, sentence in _split_by_sentence(chunk, seg):
                if not self._push(playlist, audio, chunk.rate, sentence):
                    return False
            if chunk.last:
                return True

    def _note(self, playlist: PlayList, message: str) -> None:
        with self._cond:
            if self._current(playlist):
                self._message = message
        log.warning("preview: %s", message)

    def _pull(self, frames: int) -> np.ndarray:
        """Called by the sink: the next ``frames`` samples (silence when paused or starved)."""
        out = np.zeros(frames, np.float32)
        with self._cond:
            if self._paused or self._list is None:
                return out
            pos = 0
            while pos < frames and self._out:
                block, sentence = self._out[0]
                take = min(frames - pos, len(block))
                out[pos : pos + take] = block[:take]
                pos += take
                self._sentence = sentence
                if take == len(block):
                    self._out.popleft()
                else:
                    self._out[0] = (block[take:], sentence)
            self._out_frames -= pos
            self._played += pos
            if pos:
                self._cond.notify_all()
        return out


def _split_by_sentence(chunk: _Chunk, seg: Segment) -> list[tuple[np.ndarray, int | None]]:
    """Cut a passage chunk's audio among the sentences its span covers (by characters)."""
    starts = list(seg.offsets) + [1 << 60]
    a, b = chunk.span
    parts: list[tuple[int, int]] = []
    for k, sid in enumerate(seg.sentence_ids):
        lo, hi = max(a, starts[k]), min(b, starts[k + 1])
        if hi > lo:
            parts.append((sid, hi - lo))
    if not parts:
        return [(chunk.samples, seg.sentence_ids[0] if seg.sentence_ids else None)]
    total = sum(n for _, n in parts)
    out = []
    pos = 0
    for i, (sid, n) in enumerate(parts):
        end = len(chunk.samples) if i == len(parts) - 1 else pos + int(round(len(chunk.samples) * n / total))
        out.append((chunk.samples[pos:end], sid))
        pos = end
    return out
