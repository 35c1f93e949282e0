"""Check sentences: audio + expected text in, a :class:`~studio.project.proofs.ProofRecord` out.

Why one checker object: loading the recogniser costs seconds and ~250 MiB, so the
CLI, the desktop's background task, the render's ``--proof`` and the benchmark
load it once and hand it batches (a chapter at a time: the listener packs a
batch's sentences into 28 s windows, so bigger batches are cheaper per second).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from studio.audio.resample import resample
from studio.core.lexicon import Lexicon
from studio.project.proofs import FLAGGED, NOT_CHECKED, PASSED, ProofRecord
from studio.proof.judge import DEFAULT, Thresholds, judge
from studio.proof.listen import Heard, Hearing, Listener, whisper_language
from studio.proof.windows import RATE
from studio.proof.pronounce import guessed_flags, pronunciation_flags
from studio.proof.model import ModelChoice, choose_model, load_model, load_model_later, model_workers
from studio.proof.second import SecondOpinion
from studio.proof.signal import check_signal
from studio.proof.words import exclaimed, expected_text, normalize_words


@dataclass(frozen=True)
class ProofItem:
    """One sentence to check: its audio (any rate), and what the voice was asked to say."""

    audio: np.ndarray
    rate: int
    text: str
    language: str
    lexicon: Lexicon = Lexicon()
    #: what the voice was given (its spoken form, respellings included); None: unknown (a recording)
    spoken: str | None = None
    #: the studio's own voice made it (False: ``--audio``, perhaps a human narrator)
    own_render: bool = True
    #: lower-cased words of the names the project knows (:mod:`studio.proof.names`): never "guessed"
    names: frozenset[str] = frozenset()


class Pending:
    """Items being heard (:meth:`Checker.begin`)."""

    def __init__(self, out: list[Heard | ProofRecord | None], hearings: list[tuple[list[int], Hearing]]) -> None:
        self._out, self._hearings = out, hearings

    def heard(self, settled: Callable[[list[int], list[Heard | ProofRecord]], None] | None = None
              ) -> list[Heard | ProofRecord]:
        """What the recogniser made of each item, or a verdict given without listening, in order.

        ``settled``: told of the items whose hearing is final (their indices, what was heard) while
        others are still heard again (:meth:`Hearing.heard`).
        """
        given = [i for i, r in enumerate(self._out) if r is not None]
        if settled is not None and given:
            settled(given, [self._out[i] for i in given])
        for indices, hearing in self._hearings:
            def mine(local: list[int], heard: list[Heard], indices: list[int] = indices) -> None:
                for k, h in zip(local, heard):
                    self._out[indices[k]] = h
                if settled is not None:
                    settled([indices[k] for k in local], list(heard))

            hearing.heard(mine)
        return [r for r in self._out if r is not None]


class Checker:
    """A loaded recogniser and the judgement; :meth:`open` it once, :meth:`check` many times."""

    def __init__(self, model: Any, choice: ModelChoice, thresholds: Thresholds = DEFAULT,
                 second: SecondOpinion | None = SecondOpinion()) -> None:
        self.listener = Listener(model, workers=model_workers(choice))
        self.choice = choice
        self.thresholds = thresholds
        self.second = second  # None: Whisper's flags stand without a second listener
        self.cleared = 0  # sentences Whisper flagged that the second listener heard as written

    @classmethod
    def open(cls, model: str | None = None, device: str | None = None, threads: int = 0,
             progress: Callable[[Any], None] | None = None, *, wait: bool = True) -> Checker:
        """Load the recogniser once (``progress``: a first download's :class:`~studio.proof.download.Progress`).

        ``wait`` False: the model loads on a thread while the caller goes on (its first pass needs no
        model); a load error is then raised where the model is first needed.
        """
        choice = choose_model(model, device, progress)
        return cls(load_model(choice, threads) if wait else load_model_later(choice, threads), choice)

    def loaded(self) -> Any:
        """The model, waited for while it loads: its load error is raised here even when nothing
        needed hearing."""
        return self.listener.model

    @property
    def label(self) -> str:
        return f"{self.choice.label} ({self.choice.device})"

    def check(self, items: Sequence[ProofItem]) -> list[ProofRecord]:
        """One verdict per item, in order. Languages the recogniser lacks are "not checked"."""
        return self.verdicts(items, self.hear(items))

    def hear(self, items: Sequence[ProofItem]) -> list[Heard | ProofRecord]:
        """What the recogniser made of each item, or a verdict given without listening."""
        return self.begin(items).heard()

    def begin(self, items: Sequence[ProofItem]) -> Pending:
        """Start hearing ``items`` (the first pass runs in the calling thread): :meth:`Pending.heard`
        gives what was heard, while the next items may be begun meanwhile."""
        out: list[Heard | ProofRecord | None] = [None] * len(items)
        by_language: dict[str, list[int]] = {}
        for i, item in enumerate(items):
            lang = whisper_language(item.language)
            if lang is None:
                out[i] = ProofRecord(NOT_CHECKED, note=f"the speech model does not know language {item.language!r}",
                                     model=self.label)
            elif item.audio.size == 0 or not normalize_words(item.text, item.language):
                out[i] = ProofRecord(PASSED, score=100.0, note="nothing to say", model=self.label)
            else:
                by_language.setdefault(lang, []).append(i)
        hearings = []
        for lang, indices in by_language.items():
            audios = [resample(items[i].audio, items[i].rate, RATE) for i in indices]
            texts = [expected_text(items[i].text, items[i].language, items[i].lexicon) for i in indices]
            hearings.append((indices, self.listener.begin(audios, texts, lang)))
        return Pending(out, hearings)

    def verdicts(self, items: Sequence[ProofItem], heard: Sequence[Heard | ProofRecord],
                 t: Thresholds | None = None) -> list[ProofRecord]:
        """The judgement of what was heard (and of the phonemes the voice was given)."""
        out = []
        for item, h in zip(items, heard):
            if isinstance(h, ProofRecord):
                out.append(h)
                continue
            lexicon_words = frozenset(w for m in item.lexicon.find(item.text, item.language)
                                      for w in normalize_words(m.entry.value if m.entry.kind == "alias"
                                                               else item.text[m.start:m.end], item.language))
            record = judge(h, whisper_language(item.language) or "en", check_signal(item.audio, item.rate),
                           lexicon_words=lexicon_words, duration=item.audio.size / item.rate,
                           t=t or self.thresholds, own_render=item.own_render, said=item.spoken or item.text,
                           shouted=exclaimed(item.text, item.language))
            if record.status == FLAGGED and self.second is not None and whisper_language(item.language) == "en":
                record = self.second.review(record, [w.text for w in h.expected], [w.text for w in h.heard],
                                            resample(item.audio, item.rate, RATE))
                self.cleared += record.status == PASSED
            checks = pronunciation_flags(item.text, item.spoken, item.language, item.lexicon) \
                + guessed_flags(item.spoken, item.language, item.lexicon, item.names) if item.spoken is not None else []
            flags = record.flags + tuple(checks)
            status = FLAGGED if flags else record.status
            out.append(ProofRecord(status, max((f.severity for f in flags), default=0), record.score, record.heard,
                                   flags, model=self.label))
        return out
