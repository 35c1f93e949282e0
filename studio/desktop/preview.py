"""Preview playback for the GUI: sentences in, sound out, the heard sentence reported.

Why this split: :class:`~studio.desktop.playback.Player` is plain Python (testable with
a device-less sink); this controller turns a list of sentences into a play list
(rendered ones from the cache, runs of unrendered ones as passages the model
worker streams), posts the synthesis part to the job queue's preview slot (latest
request wins there too), and polls the player from a GUI timer so the window can
highlight the sentence being heard. It never waits on audio or the model.
"""

from __future__ import annotations

import itertools
import logging
from typing import Callable, Sequence

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from studio.audio.assemble import Pauses
from studio.project.cast import Casting
from studio.project.store import Project
from studio.desktop.jobqueue import JobQueue
from studio.desktop.messages import PlaybackPosition, PreviewPassage, PreviewRequest
from studio.desktop.playback import PlayList, Player, Segment
from studio.desktop.scrub import SCRUB_LABEL, Grain, cut_grain, grain_key, parse_grain_key
from studio.desktop.sinks import AudioSink, SoundDeviceSink
from studio.desktop.snapshot import SentenceNode

log = logging.getLogger(__name__)

SinkFactory = Callable[[], AudioSink]
#: the sample rate previews are played at when nothing else is known
DEFAULT_RATE = 22050
#: a play-list "cache key" naming a kept take instead of a cache file
TAKE_PREFIX = "take:"


def build_playlist(
    request_id: int,
    nodes: Sequence[SentenceNode],
    voice_for: Callable[[str], str],
    pauses: Pauses = Pauses(),
    label: str = "",
) -> tuple[PlayList, tuple[PreviewPassage, ...]]:
    """Rendered sentences play from the cache; consecutive unrendered ones of one
    paragraph, language and speaking rate become one passage for the streaming
    synthesizer, spoken at their direction's rate. The pauses are export's: the
    producer's own pause after a sentence replaces the project's, a pause before
    one is added (a run of unrendered sentences is broken where either is set, so
    the pause falls where it will in the file)."""
    segments: list[Segment] = []
    passages: list[PreviewPassage] = []
    run: list[SentenceNode] = []

    def pause_after(i: int) -> float:
        if i + 1 >= len(nodes):
            return 0.0
        nxt, cur = nodes[i + 1], nodes[i]
        before = nxt.direction.pause_before or 0.0
        if cur.paragraph is None:
            return pauses.title + before
        if cur.pause_after is not None:
            return cur.pause_after + before
        if (nxt.chapter, nxt.paragraph) != (cur.chapter, cur.paragraph):
            return pauses.paragraph + before
        return pauses.sentence + before

    def joins(prev: SentenceNode, node: SentenceNode) -> bool:
        """Whether ``node`` is spoken in one breath with ``prev`` (one passage)."""
        return ((prev.chapter, prev.paragraph, prev.language, prev.direction.rate)
                == (node.chapter, node.paragraph, node.language, node.direction.rate)
                and prev.pause_after is None and not node.direction.pause_before)

    def close_run(last_index: int) -> None:
        if not run:
            return
        offsets, text = [], ""
        for s in run:
            offsets.append(len(text))
            text += (s.spoken or s.text) + " "  # what the render will say
        passage = PreviewPassage(len(passages), text.rstrip(), run[0].language, voice_for(run[0].language),
                                 run[0].direction.rate)
        passages.append(passage)
        segments.append(Segment(tuple(s.id for s in run), passage=passage.index, offsets=tuple(offsets),
                                pause_after=pause_after(last_index)))
        run.clear()

    for i, node in enumerate(nodes):
        if node.cached and node.cache_key:
            close_run(i - 1)
            segments.append(Segment((node.id,), cache_key=node.cache_key, pause_after=pause_after(i)))
            continue
        if run and not joins(run[-1], node):
            close_run(i - 1)
        run.append(node)
    close_run(len(nodes) - 1)
    return PlayList(request_id, tuple(segments), label), tuple(passages)


class PreviewController(QObject):
    """Owns the player; the session attaches the open project and its job queue."""

    positionChanged = Signal(object)  # PlaybackPosition
    problem = Signal(str)  # why there is no sound (shown in the window)

    def __init__(self, sink_factory: SinkFactory | None = SoundDeviceSink, parent: QObject | None = None,
                 poll_ms: int = 50) -> None:
        super().__init__(parent)
        self._project: Project | None = None
        self._queue: JobQueue | None = None
        self._voice_for: Callable[[str], str] = lambda _lang: ""
        self._pauses = Pauses()
        self._ids = itertools.count(1)
        #: the sentence scrub grains are being cut from: (cache key, audio, rate)
        self._grain_source: tuple[str, np.ndarray, int] | None = None
        self.player = Player(self._load_cached, sink_factory, rate=DEFAULT_RATE, on_room=self._room)
        self._last = PlaybackPosition()
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._poll)
        self._timer.start()

    def attach(self, project: Project, queue: JobQueue, voice_for: Callable[[str], str], pauses: Pauses) -> None:
        self.player.stop()
        self._project, self._queue = project, queue
        self._grain_source = None
        self._voice_for, self._pauses = voice_for, pauses

    def detach(self) -> None:
        self.player.stop()
        self._project = self._queue = None
        self._grain_source = None

    def set_voices(self, voice_for: Callable[[str], str], pauses: Pauses) -> None:
        self._voice_for, self._pauses = voice_for, pauses

    def play(self, nodes: Sequence[SentenceNode], label: str = "") -> int:
        """Start playing ``nodes`` (replacing any preview); returns the request id (0: none)."""
        if not nodes or self._queue is None:
            return 0
        rid = next(self._ids)
        playlist, passages = build_playlist(rid, nodes, self._voice_for, self._pauses, label)
        if not self.player.play(playlist):
            self._queue.set_preview(None)
            self.problem.emit(self.player.problem or "No audio output.")
            return 0
        self._queue.set_preview(PreviewRequest(rid, passages) if passages else None)
        log.debug("preview %d: %s (%d segments, %d to synthesize)", rid, label, len(playlist.segments), len(passages))
        return rid

    def play_text(self, text: str, language: str, voice_id: str, label: str = "",
                  casting: Casting | None = None) -> int:
        """Speak free text with a given voice (voice samples in the voices dialog; with a
        ``casting``, a character's speaker and performance: the Cast dock's samples)."""
        if self._queue is None:
            return 0
        rid = next(self._ids)
        passage = PreviewPassage(0, text, language, voice_id, casting=casting)
        playlist = PlayList(rid, (Segment((-1,), passage=0, offsets=(0,)),), label)
        if not self.player.play(playlist):
            self.problem.emit(self.player.problem or "No audio output.")
            return 0
        self._queue.set_preview(PreviewRequest(rid, (passage,)))
        return rid

    def play_takes(self, takes: Sequence[tuple[int, int]], label: str = "", gap_s: float = 0.6) -> int:
        """Play kept takes one after another (``(take id, sentence id)`` pairs): a take, or A then B."""
        if not takes or self._queue is None:
            return 0
        rid = next(self._ids)
        segments = tuple(Segment((sid,), cache_key=f"{TAKE_PREFIX}{tid}", pause_after=gap_s if i + 1 < len(takes) else 0.0)
                         for i, (tid, sid) in enumerate(takes))
        if not self.player.play(PlayList(rid, segments, label)):
            self.problem.emit(self.player.problem or "No audio output.")
            return 0
        self._queue.set_preview(None)
        return rid

    def play_grain(self, sentence_id: int, grain: Grain) -> int:
        """Play one scrub grain of a rendered sentence (replacing whatever plays); returns the
        request id (0: no output). Nothing is synthesized: a grain is cached audio only."""
        if self._queue is None:
            return 0
        rid = next(self._ids)
        playlist = PlayList(rid, (Segment((sentence_id,), cache_key=grain_key(grain)),), SCRUB_LABEL)
        if not self.player.play(playlist):
            self.problem.emit(self.player.problem or "No audio output.")
            return 0
        self._queue.set_preview(None)
        return rid

    def toggle(self) -> None:
        if self.player.position().state in ("idle", "finished", "error"):
            return
        self.player.toggle()

    def stop(self) -> None:
        self.player.stop()
        if self._queue is not None:
            self._queue.set_preview(None)

    def position(self) -> PlaybackPosition:
        return self._last

    def close(self) -> None:
        self._timer.stop()
        self.player.close()

    def _load_cached(self, key: str):  # feeder thread
        project = self._project
        if project is None:
            return None
        if key.startswith(TAKE_PREFIX):
            return project.takes.audio(int(key[len(TAKE_PREFIX):]))
        grain = parse_grain_key(key)
        if grain is None:
            return self._load_entry(project, key)
        source = self._grain_source  # grains come in runs from one sentence: load it once
        if source is None or source[0] != grain.cache_key:
            got = self._load_entry(project, grain.cache_key)
            if got is None:
                return None
            source = self._grain_source = (grain.cache_key, got[0], got[1])
        return cut_grain(source[1], source[2], grain.offset_s, grain.length_s), source[2]

    @staticmethod
    def _load_entry(project: Project, key: str) -> tuple[np.ndarray, int] | None:  # feeder thread
        entry = project.cache_entry(key)
        if entry is None:
            return None
        audio = project.cache.load(entry)
        return None if audio is None else (audio, entry.sample_rate)

    def _room(self) -> None:  # feeder thread: the worker may synthesize more
        queue = self._queue
        if queue is not None:
            queue.poke()

    def _poll(self) -> None:
        pos = self.player.position()
        if pos != self._last:
            self._last = pos
            self.positionChanged.emit(pos)
