"""A second opinion on what Whisper heard wrong: which reading does another recogniser's ear prefer?

Why: Whisper base mishears clean synthetic speech now and then ("whether" as "water",
"touching" as "tushy"), and a mishearing it makes once it makes again on a new take, so
a producer is sent to listen to sentences that are fine. A second listener decides: for
each stretch Whisper flagged, pocketsphinx (an acoustic model of another kind entirely:
Gaussian mixtures over MFCC frames, no language model in the way) forces both readings,
the written one and the one Whisper heard, onto the sentence's audio and says which one
the sound holds (:meth:`studio.proof.sphinx.Aligner.prefer`). The written reading
explaining the audio at least as well is the first listener's mishearing: the flag goes.
Both listeners hearing the same other words is the voice's doing, and the flag says so
("the voice slurs \u201ctouching\u201d: both listeners hear \u201ctushy\u201d").

Why not Whisper small, as the issue first proposed: the two PyPI packages that carry it
hold only the first 180 MiB of its 484 MB model file (docs/proof-listening-benchmark.md);
it cannot be assembled offline.

Only substituted words are reviewed (the clean sentences' false alarms are names, numbers
and words Whisper wrote otherwise); reviewing missing, repeated and garbled stretches too
cleared planted errors on the tuning half (recall 96.0 to 92.9 %), so those flags stand.
Sound faults, symbols read aloud and the pronunciation checks are not a matter of hearing.
English only (the acoustic model's).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from studio.project.proofs import FLAGGED, PASSED, ProofFlag, ProofRecord
from studio.proof.words import sound_alike

#: the flags a second listener can confirm or clear
HEARD_KINDS = frozenset({"substituted"})


@dataclass(frozen=True)
class SecondOpinion:
    """How sure the second listener must be that the audio says what Whisper heard.

    Set on the tuning half of the evaluation set (``bench/proof.py --tune``).
    """

    margin: float = 0.1  # the heard reading must beat the written one by more than this (nats per frame) to stand
    slurred: float = 0.5  # a confirmed substitution that sounds at least this alike is "slurred" ("touching", "tushy")

    def review(self, record: ProofRecord, written: list[str], heard: list[str], audio: np.ndarray,
               language: str = "en") -> ProofRecord:
        """``record`` with the flags the second listener does not confirm taken off.

        ``written``: the expected words as the judgement compared them; ``heard``: what Whisper
        heard (normalised); ``audio``: the sentence at 16 kHz.
        """
        from studio.proof.sphinx import aligner

        kept: list[ProofFlag] = []
        for flag in record.flags:
            other = _reading(flag, written, heard) if flag.kind in HEARD_KINDS else None
            if other is None or other == written:
                kept.append(flag)
                continue
            prefer = aligner().prefer(audio, written, other)
            if prefer is not None and prefer <= self.margin:
                continue  # the written words explain the sound about as well: Whisper misheard
            if prefer is None:  # no opinion: what Whisper heard cannot be forced onto the sound at all
                kept.append(flag)
                continue
            kept.append(self._voices(flag, language))
        if tuple(kept) == record.flags:
            return record
        if not kept:
            return dataclasses.replace(record, status=PASSED, severity=0, flags=(),
                                       note="the second listener heard it as written")
        return dataclasses.replace(record, status=FLAGGED, severity=max(f.severity for f in kept), flags=tuple(kept))

    def _voices(self, flag: ProofFlag, language: str) -> ProofFlag:
        """A flag both listeners agree on, said as the voice's doing."""
        if flag.kind != "substituted":
            return dataclasses.replace(flag, reason=f"{flag.reason} (both listeners hear it)")
        said, got = flag.expected, flag.heard
        if sound_alike(said.split(), got.split(), language) >= self.slurred:
            reason = f"the voice slurs \u201c{said}\u201d: both listeners hear \u201c{got}\u201d"
        else:
            reason = f"the voice says \u201c{got}\u201d for \u201c{said}\u201d: both listeners hear it"
        return dataclasses.replace(flag, reason=reason)


def _reading(flag: ProofFlag, written: list[str], heard: list[str]) -> list[str] | None:
    """The sentence as Whisper heard it at this flag: the written words with the flagged stretch as heard
    (None: the stretch cannot be placed in the written words)."""
    if flag.kind == "garbled":
        return heard or None
    said, got = flag.expected.split(), flag.heard.split()
    if flag.kind == "repeated":  # the run heard twice: the written words with it said twice
        half = got[:len(got) // 2]
        at = _find(written, half)
        return None if at is None or not half else written[:at] + half + written[at:]
    at = _find(written, said)
    if at is None or not said:
        return None
    instead = [] if flag.kind == "missing" else got
    return written[:at] + instead + written[at + len(said):]


def _find(words: list[str], run: list[str]) -> int | None:
    for i in range(len(words) - len(run) + 1):
        if run and words[i:i + len(run)] == run:
            return i
    return None
