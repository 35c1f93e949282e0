"""pocketsphinx: the cheap first pass (forced-alignment scores) and a free transcription.

Why pocketsphinx as a first pass: its aligner places the expected words' phones on
the audio several times faster than Whisper base hears it (one core, no neural
network: Gaussian mixtures on MFCCs),
and it installs offline with its US-English acoustic model and dictionary inside the
wheel. Alone it hears too poorly to judge a sentence, but it scores every frame
against the best-fitting sound of that frame, so a word the voice said scores a
little below zero per frame and a changed, dropped or repeated word leaves frames
the forced phones (or a forced pause) explain far worse: :class:`FirstPass`
trusts or doubts a sentence by those scores. A word said twice can hide in its
neighbours' frames, so the most drawn-out words are also forced said again onto
their own stretch (:meth:`Aligner.repeat`). A free phone loop over the same frames
(``fit(loop=True)``) separates no better at several times the cost, so it is only
measured (docs/proof-listening-benchmark.md).

Words outside its dictionary get espeak-ng's phones (what the voice itself said),
mapped to the model's ARPAbet. pocketsphinx is imported only here (the import-linter
contract "Only studio.proof imports the speech recognisers").

One aligner per process (:func:`aligner`), shared by the first pass and the second
listener: a decoder with its acoustic model and dictionary is about 30 MiB, and the
bundled trigram language model, which forced alignment never reads, another 64 MiB,
so it is not loaded. Every utterance starts from a fresh front end: its noise
estimate otherwise carries over from the audio before, so a sentence's scores moved
with whatever the decoder (or the other listener) had heard last.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

log = logging.getLogger(__name__)

RATE = 16_000
FRAMES_PER_S = 100
_EDGE_S = 0.05  # audio kept either side of a stretch aligned on its own
_FILLERS = ("<", "[")  # a forced path's pauses and noises: "<sil>", "[NOISE]"
#: espeak-ng's IPA (stress and length stripped) to the acoustic model's phones; longest match first
_IPA = {
    "aɪ": "AY", "aʊ": "AW", "ɔɪ": "OY", "oʊ": "OW", "əʊ": "OW", "eɪ": "EY", "tʃ": "CH", "dʒ": "JH", "ɜ": "ER",
    "ɚ": "ER", "ɝ": "ER", "i": "IY", "ɪ": "IH", "e": "EH", "ɛ": "EH", "æ": "AE", "ɑ": "AA", "ɒ": "AA", "a": "AA",
    "ɔ": "AO", "o": "OW", "ʊ": "UH", "u": "UW", "ʌ": "AH", "ə": "AH", "ɐ": "AH", "ᵻ": "IH", "p": "P", "b": "B",
    "t": "T", "d": "D", "k": "K", "g": "G", "ɡ": "G", "f": "F", "v": "V", "θ": "TH", "ð": "DH", "s": "S",
    "z": "Z", "ʃ": "SH", "ʒ": "ZH", "h": "HH", "m": "M", "n": "N", "ŋ": "NG", "l": "L", "ɹ": "R", "r": "R",
    "w": "W", "j": "Y", "ɾ": "T", "x": "K", "ç": "HH",
}


@dataclass(frozen=True)
class WordFit:
    """How one expected word fits its stretch of audio (scores in natural log units, per frame)."""

    text: str
    start: float  # seconds into the sentence
    end: float
    forced: float  # the forced phones' acoustic log-likelihood per frame, each frame against its best senone
    free: float | None  # the free phone loop's over the same frames (None: not decoded)


@dataclass(frozen=True)
class Repeat:
    """The word whose stretch of audio fits best said more than once, and how much better (nats per frame)."""

    word: WordFit
    times: int  # 2 or 3
    gain: float  # over the word said once; -inf: no path holds it said twice


@dataclass(frozen=True)
class Fit:
    """The whole sentence's alignment: each word's fit, and what the aligner could not place."""

    words: tuple[WordFit, ...]
    frames: int
    silence: float  # seconds of the forced path spent in pauses or noise between the first and the last word
    forced: float  # per frame, whole utterance
    free: float | None
    failed: bool = False  # the aligner found no path through the expected words
    repeat: Repeat | None = None  # the word the audio fits best said again (:meth:`Aligner.repeat`); None: not tried


@dataclass(frozen=True)
class FirstPass:
    """When a sentence skips Whisper: pocketsphinx forced every expected word onto its audio, each
    word (with the pause after it) fits its frames well (:class:`Fit`), and no word fits its stretch
    far better said again (:class:`Repeat`).

    Why per word and per frame: pocketsphinx scores each frame against its best-fitting sound, so a
    said word scores a little below zero per frame, and a changed, dropped or repeated word leaves
    frames the forced phones (or a forced pause) explain far worse; the whole sentence's mean says
    when all of it is off (another language's rules). Set on the tuning half of the evaluation set
    (``bench/proof.py --tune``).
    """

    word: float = -3.0  # a word's forced score per frame below this: doubted
    sentence: float = -1.8  # the whole sentence's below this: doubted
    pause: float = 1.0  # seconds of forced pauses inside the sentence above this: doubted
    #: a word said in at most ``short`` seconds is doubted below ``short_word`` only: the voice swallows
    #: "a", "of", "the", and their few frames scored most clean sentences into doubt
    short: float = 0.15
    short_word: float = -5.0
    #: a word's stretch of audio fitting it said again better than this (nats per frame): doubted, and
    #: flagged as repeated whatever Whisper hears (its language model tends to write a repeat once).
    #: A repeated word scores well, because its neighbours stretch over the extra sound; set on repeats
    #: rendered from the tuning half (``bench/proof_repeats.py``)
    repeat: float = 0.2
    #: the same where the other bars doubt the sentence: its alignment is off somewhere, and a word the
    #: expected text spells otherwise than the voice said it can fit better said again (a clean
    #: sentence of the development sets reached 0.58)
    repeat_doubted: float = 0.8
    top: int = 2  # the most drawn-out words (per phone) tried said again ...
    drawn: float = 0.1  # ... taking at least this long per phone (seconds): a third fewer words tried
    #: the whole sentence's score below this: it sounds unlike English throughout, as another language's
    #: rules make it, and the judgement calls it garbled on fewer words Whisper did not recognise
    unlike: float = -1.5

    def trusts(self, fit: Fit) -> bool:
        return self._scores(fit) and self.repeated(fit) is None

    def repeated(self, fit: Fit) -> Repeat | None:
        """The word the audio says more than once, by these bars; None: none."""
        bar = self.repeat if self._scores(fit) else self.repeat_doubted
        return fit.repeat if fit.repeat is not None and fit.repeat.gain > bar else None

    def foreign(self, fit: Fit) -> bool:
        """The sentence as a whole fits English phones poorly (another language's rules read it)."""
        return bool(fit.words) and not fit.failed and fit.forced < self.unlike

    def fit(self, audio: np.ndarray, words: Sequence[str]) -> Fit:
        """``words`` forced onto 16 kHz ``audio``, with the repeat test (about half the alignment's cost
        again: it is tried on doubted sentences too, because Whisper often writes a repeat once)."""
        return aligner().repeat(audio, aligner().fit(audio, words), self.top, self.drawn)

    def _scores(self, fit: Fit) -> bool:
        if fit.failed or not fit.words:
            return False
        return fit.forced >= self.sentence and fit.silence <= self.pause and all(
            w.forced >= (self.short_word if w.end - w.start <= self.short else self.word) for w in fit.words)


def model_path() -> str:
    from pocketsphinx import get_model_path

    return str(get_model_path())


class Aligner:
    """One pocketsphinx decoder: forced alignment of expected words and a free phone loop.

    Safe to share between threads: pocketsphinx decoders are not, so each call holds the
    aligner's lock for one sentence.
    """

    def __init__(self) -> None:
        from pocketsphinx import Config, Decoder

        # no lattice pass: the forced path's own segments, their scores kept as the search scaled them;
        # no language model: the forced path and the phone loop do not use it
        config = Config(samprate=float(RATE), loglevel="FATAL", bestpath=False, lm=None)
        self.decoder = Decoder(config)
        self.decoder.add_allphone_file("phones", f"{model_path()}/en-us/en-us-phone.lm.bin")
        self._known: dict[str, bool] = {}
        self._lock = threading.Lock()

    def _word(self, word: str) -> str | None:
        """The dictionary's spelling of ``word`` (added with espeak-ng's phones when missing); None: unsayable."""
        if word not in self._known:
            ok = self.decoder.lookup_word(word) is not None
            if not ok:
                phones = arpabet(word)
                if phones:
                    try:
                        self.decoder.add_word(word, " ".join(phones), True)
                        ok = True
                    except RuntimeError as exc:
                        log.debug("no phones for %r: %s", word, exc)
            self._known[word] = ok
        return word if self._known[word] else None

    def _decode(self, pcm: bytes) -> list[Any]:
        self.decoder.reinit_feat()  # the noise estimate of this sentence alone (0.1 ms)
        self.decoder.start_utt()
        self.decoder.process_raw(pcm, full_utt=True)
        self.decoder.end_utt()
        return list(self.decoder.seg() or ())

    def _forced(self, pcm: bytes, said: list[str]) -> list[Any]:
        """The forced path's segments (words, pauses, noises); [] when no path holds the words."""
        try:
            self.decoder.set_align_text(" ".join(said))
            return self._decode(pcm)
        except RuntimeError as exc:
            log.debug("alignment failed: %s", exc)
            return []

    def _per_frame(self, segments: list[Any], frames: int) -> np.ndarray:
        out = np.zeros(frames)
        for s in segments:  # a segment's score spread evenly over its frames
            out[s.start_frame:s.end_frame + 1] = self._nats(s.ascore) / (s.end_frame - s.start_frame + 1)
        return out

    def fit(self, audio: np.ndarray, words: Sequence[str], *, loop: bool = False) -> Fit:
        """The expected ``words`` (normalised, lower case) forced onto 16 kHz mono ``audio``.

        ``loop``: also decode a free phone loop over the same frames (four times the aligner's
        cost; measured, not what the first pass uses).
        """
        with self._lock:
            return self._fit(_pcm(audio), words, loop)

    def _fit(self, pcm: bytes, words: Sequence[str], loop: bool) -> Fit:
        said, forced, spoken = self._path(pcm, words)
        frames = max(1, self.decoder.n_frames())
        free_frame = None
        if loop:
            self.decoder.activate_search("phones")
            free_frame = self._per_frame(self._decode(pcm), frames)
        free = None if free_frame is None else float(free_frame.mean())
        if not said or len(spoken) != len(said):
            return Fit((), frames, 0.0, float("-inf"), free, failed=True)
        forced_frame = self._per_frame(forced, frames)
        # each word owns its frames and the pause after it (a word the voice did not say is squeezed into a
        # few frames and the rest of its audio forced into a "pause": scored together they show it)
        starts = [0] + [s.start_frame for s in spoken[1:]] + [frames]
        out = []
        for k, (s, w) in enumerate(zip(spoken, said)):
            a, b = starts[k], max(starts[k] + 1, starts[k + 1])
            out.append(WordFit(w, s.start_frame / FRAMES_PER_S, (s.end_frame + 1) / FRAMES_PER_S,
                               float(forced_frame[a:b].mean()),
                               None if free_frame is None else float(free_frame[a:b].mean())))
        first, last = spoken[0].start_frame, spoken[-1].end_frame
        pause = sum(s.end_frame - s.start_frame + 1 for s in forced
                    if s.word.startswith(_FILLERS) and first < s.start_frame < last)
        return Fit(tuple(out), frames, pause / FRAMES_PER_S, float(forced_frame.mean()), free)

    def prefer(self, audio: np.ndarray, written: Sequence[str], heard: Sequence[str]) -> float | None:
        """How much better the ``heard`` words explain the audio than the ``written`` ones: the two forced
        paths' scores over the whole sentence, per frame (positive: the audio says what was heard).
        None: no path holds the heard words, so this listener has no opinion."""
        pcm = _pcm(audio)
        with self._lock:
            scores = [self._score(pcm, written), self._score(pcm, heard)]
        if scores[1] is None:
            return None
        return scores[1] - scores[0] if scores[0] is not None else float("inf")

    def repeat(self, audio: np.ndarray, fit: Fit, top: int = 2, drawn: float = 0.0) -> Fit:
        """``fit`` with :attr:`Fit.repeat`: each of the ``top`` most drawn-out words (seconds per phone,
        the last word left out; at least ``drawn``) forced onto its stretch of audio with its neighbours,
        once, twice and, where twice fits better, three times; the best gain over once.

        Why the most drawn-out: a word the voice said twice is forced into the frames of one, and it,
        or a neighbour, stretches over the extra sound. Why not the last word: every sentence draws
        out its last word. Why only their stretch: the local paths cost half the sentence's alignment,
        and the gain is not diluted by the rest of it.
        """
        words = fit.words
        if fit.failed or len(words) < 2:
            return fit
        best: Repeat | None = None
        with self._lock:
            pace = [(w.end - w.start) / self._phones(w.text) for w in words[:-1]]
            for k in sorted(range(len(pace)), key=lambda k: -pace[k])[:top]:
                if pace[k] < drawn:
                    break
                lo, hi = max(0, k - 1), k + 2
                begin = max(0, int((words[lo].start - _EDGE_S) * RATE))
                pcm = _pcm(audio[begin:int((words[hi - 1].end + _EDGE_S) * RATE)])
                said = [w.text for w in words[lo:hi]]
                once = self._score(pcm, said)
                if once is None:
                    continue
                for times in (2, 3):
                    more = self._score(pcm, said[:k - lo] + [words[k].text] * times + said[k - lo + 1:])
                    gain = float("-inf") if more is None else more - once  # None: no room for it at all
                    if best is None or gain > best.gain:
                        best = Repeat(words[k], times, gain)
                    if more is None or more <= once:
                        break
        return dataclasses.replace(fit, repeat=best) if best is not None else fit

    def _phones(self, word: str) -> int:
        """How many phones the dictionary gives ``word`` (a word in a fit is always in it)."""
        return max(1, len((self.decoder.lookup_word(word) or "x").split()))

    def _path(self, pcm: bytes, words: Sequence[str]) -> tuple[list[str], list[Any], list[Any]]:
        """The words the aligner can say, the forced path's segments ([]: no path holds them) and its
        words' own segments (pauses and noises left out). Caller holds the lock."""
        said = [w for w in (self._word(w) for w in words) if w]
        forced = self._forced(pcm, said) if said else []
        return said, forced, [s for s in forced if not s.word.startswith(_FILLERS)]

    def _score(self, pcm: bytes, words: Sequence[str]) -> float | None:
        """The forced path's score per frame (None: no path holds the words). Caller holds the lock."""
        said, forced, spoken = self._path(pcm, words)
        if not said or len(spoken) != len(said):
            return None
        return float(self._per_frame(forced, max(1, self.decoder.n_frames())).mean())

    @staticmethod
    def _nats(density: float) -> float:
        """A segment's acoustic score in natural-log units (the decoder hands it back as exp(score >> 10))."""
        return 1024.0 * float(np.log(max(density, 1e-300)))

def _pcm(audio: np.ndarray) -> bytes:
    return (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


_local = threading.local()
_shared: list[Aligner] = []
_loading = threading.Lock()


def aligner() -> Aligner:
    """The process's aligner (loaded on first use, about 0.4 s)."""
    with _loading:
        if not _shared:
            _shared.append(Aligner())
        return _shared[0]


def transcribe(audio: np.ndarray, rate: int) -> str:
    """Recognise English speech in float audio at any rate with the bundled language model: lower-case
    words (the intelligibility measure, :mod:`studio.measure.asr`)."""
    from studio.audio.resample import resample

    if getattr(_local, "decoder", None) is None:
        from pocketsphinx import Decoder

        _local.decoder = Decoder(samprate=float(RATE), loglevel="FATAL")
    decoder = _local.decoder
    decoder.start_utt()
    decoder.process_raw(_pcm(resample(audio, rate, RATE)), full_utt=True)
    decoder.end_utt()
    hyp = decoder.hyp()
    return hyp.hypstr if hyp is not None else ""


@lru_cache(maxsize=8192)
def arpabet(word: str) -> tuple[str, ...]:
    """espeak-ng's phones of a word the dictionary lacks, as the acoustic model's ARPAbet."""
    from studio.proof.words import phonemes

    ipa = phonemes(word, "en-us")
    out: list[str] = []
    i = 0
    while i < len(ipa):
        for size in (2, 1):
            phone = _IPA.get(ipa[i:i + size])
            if phone:
                out.append(phone)
                i += size
                break
        else:
            i += 1  # a mark the model has no phone for
    return tuple(out)
