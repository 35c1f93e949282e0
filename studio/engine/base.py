"""The one interface every synthesis backend implements.

Why this shape: the render worker, the batcher and the child-process isolation all
drive engines the same way, so an engine exposes only what they need: load, the
voice's own front end (text + language -> id sequence), batch synthesis of id
sequences returning each item's own audio, its sample rate, and close.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.core.lexicon import Lexicon

#: Longest phoneme-id sequence one synthesis request may carry. The text layer splits
#: sentences at 500 characters (~1,200 ids of prose, ~2,900 of spelled-out numbers),
#: so only an edited sentence or a wall of digits gets near it. Above it a VITS voice
#: needs gigabytes and minutes for one item (8,000 ids: ~4 GB, ~160 s on a CPU), so
#: the request is refused with :class:`SentenceTooLong` instead of being auto-split:
#: a cut in the middle of the phoneme stream would be audible, and only the text
#: layer knows where clauses end.
MAX_IDS_PER_SENTENCE = 4000

#: Sentences per batch on a CUDA device: the render plan's batch, the batcher's
#: largest batch, the TensorRT profile's optimum and the Triton config's largest
#: batch. One number because all four must agree (kernels tuned for 32 and fed 16
#: run slower than either); measured best on the bench's batch sweep.
CUDA_BATCH = 32


class SentenceTooLong(EngineError):
    """One sentence is too long to synthesize in one piece (see :data:`MAX_IDS_PER_SENTENCE`)."""

    def __init__(self, n_ids: int, limit: int = MAX_IDS_PER_SENTENCE) -> None:
        self.n_ids = n_ids
        self.limit = limit
        super().__init__(
            f"sentence too long for the voice ({n_ids} phoneme ids, the limit is {limit}); "
            "split it into shorter sentences"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.n_ids, self.limit))


def check_ids_length(ids: Sequence[int], limit: int = MAX_IDS_PER_SENTENCE) -> None:
    """Raise :class:`SentenceTooLong` when one request's id sequence exceeds ``limit``.

    :meth:`Engine.synthesize` calls it; callers of :meth:`Engine.synthesize_batch`
    (batchers) call it per item before batching.
    """
    if len(ids) > limit:
        raise SentenceTooLong(len(ids), limit)


@dataclass(frozen=True)
class SynthesisSettings:
    """Sampling knobs of a VITS-style voice. All zeros noise = deterministic audio."""

    noise_scale: float = 0.667
    length_scale: float = 1.0
    noise_w: float = 0.8
    speaker_id: int | None = None
    #: which draw of the sampling noise (:mod:`studio.engine.noise`): 0 for a sentence's
    #: first synthesis, another number for each new take. Not in the cache key: the
    #: cache file of a key holds whichever take was chosen.
    take: int = 0
    #: words to stress, by index into the whitespace-split text the voice is given
    #: (:mod:`studio.engine.emphasis`); in the cache key when any
    emphasis: tuple[int, ...] = ()
    #: the same words as phoneme-id spans ``(start, stop)`` of the sentence's ids: set by the
    #: render loop per sentence (:func:`studio.engine.emphasis.word_spans`), read by the engines
    #: that realize emphasis; derived from ``emphasis``, so not in the cache key
    emphasis_ids: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        # settings read back from JSON carry lists; the render loop keys dicts by settings
        object.__setattr__(self, "emphasis", tuple(int(w) for w in self.emphasis))
        object.__setattr__(self, "emphasis_ids", tuple((int(a), int(b)) for a, b in self.emphasis_ids))

    def cache_token(self) -> str:
        """Stable text that enters the audio cache key (the take does not: see ``take``)."""
        token = f"ns={self.noise_scale:g};ls={self.length_scale:g};nw={self.noise_w:g};sid={self.speaker_id}"
        return token + (f";emph={','.join(map(str, self.emphasis))}" if self.emphasis else "")


@dataclass(frozen=True)
class PendingBuild:
    """What an engine's :meth:`~Engine.load` will build once and keep on disk before it can speak.

    ``what`` names it for a producer ("the fast INT8 model"); ``about`` says how long
    in words ("about a minute"), since a progress bar cannot be honest about a
    quantizer or a TensorRT builder that report no steps.
    """

    what: str
    about: str


class Engine(ABC):
    """A loaded voice that turns id sequences into float32 mono audio in [-1, 1]."""

    #: short backend name, e.g. ``"onnx"`` or ``"torch"``
    name: str = ""

    @property
    @abstractmethod
    def sample_rate(self) -> int: ...

    @abstractmethod
    def load(self) -> None:
        """Load weights / create sessions. Idempotent."""

    @abstractmethod
    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        """The voice's own front end: one id sequence for one sentence.

        ``language`` (ISO 639-1, e.g. ``"fr"``) is passed to the phonemizer
        explicitly; the engine never guesses it. ``lexicon`` (the pronunciation
        entries that apply to this sentence) is applied by the shared Piper front
        end (:class:`~studio.engine.voice.phonemize.PiperFrontEnd`); wrappers only
        forward it, so every engine and preset says a word the same way.
        """

    @abstractmethod
    def synthesize_batch(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[np.ndarray]:
        """Synthesize each id sequence; item ``i`` gets exactly its own audio.

        Padding used internally must never leak into an item's audio.
        """

    def synthesize_each(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> "list[np.ndarray | Exception]":
        """Like :meth:`synthesize_batch`, but an item may come back as the exception
        that item alone raised. The render loop calls this: an engine that can tell
        which item broke the batch (a model process that crashed on one sentence)
        fails that sentence only. Other errors propagate; the loop then tries each
        item alone."""
        return list(self.synthesize_batch(ids, settings))

    def synthesize(self, text: str, language: str, settings: SynthesisSettings) -> np.ndarray:
        """Convenience for one sentence; refuses over-long ones (:class:`SentenceTooLong`)."""
        ids = self.text_to_ids(text, language)
        check_ids_length(ids)
        return self.synthesize_batch([ids], settings)[0]

    def describe(self) -> str:
        """One line a producer can read: what this engine really runs, on what, in
        which precision. Presets are honest through it: wrappers add what they do
        (streams, batches, a model process) to their inner engine's line."""
        return f"{self.name} engine at {self.sample_rate} Hz"

    def pending_build(self) -> PendingBuild | None:
        """The one-time build :meth:`load` would run now (None: loaded, cached, or nothing to build).

        Asked before ``load`` so the app can say "preparing, only once" from the start
        of a build instead of guessing from how long loading takes. Cheap: looks at
        the cache on disk, loads no model.
        """
        return None

    def close(self) -> None:
        """Release sessions / GPU memory. Idempotent."""

    def __enter__(self) -> "Engine":
        self.load()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DelegatingEngine(Engine):
    """An engine that forwards to another one; wrappers override only what they change.

    Why: lending, counting or guarding an engine (the GUI worker lends its loaded
    model to a render; tests count what is spoken) should not restate the interface.
    ``close`` is not forwarded: the owner of ``inner`` closes it. Nor is
    ``synthesize_each``: it goes through this wrapper's ``synthesize_batch``, so a
    wrapper that changes batches is obeyed; a pure lend forwards it itself.
    """

    def __init__(self, inner: Engine) -> None:
        self.inner = inner
        self.name = inner.name

    @property
    def sample_rate(self) -> int:
        return self.inner.sample_rate

    def load(self) -> None:
        self.inner.load()

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return self.inner.text_to_ids(text, language, lexicon)

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        return self.inner.synthesize_batch(ids, settings)

    def describe(self) -> str:
        return self.inner.describe()

    def pending_build(self) -> PendingBuild | None:
        return self.inner.pending_build()

    def close(self) -> None:
        pass
