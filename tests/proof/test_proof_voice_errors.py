"""A word the voice lost or said again is the voice's error, on real audio (issue 30, second round).

The bundled voice renders the text with a word left out or said twice (what a glitching
synthesiser does); the checker expects the original sentence and must say so, while the
same sentences rendered as written pass.
"""

from __future__ import annotations

import pytest
from support.proof import speak

from studio.project.proofs import FLAGGED, PASSED
from studio.proof.check import Checker, ProofItem
from studio.text.normalize import spoken_form

RATE = 22050

#: (the text, what the voice was given: a word lost)
DROPPED = (
    ("She opened the heavy wooden door and stepped into the garden.",
     "She opened the heavy door and stepped into the garden."),
    ("The captain gave the order and the sailors raised the heavy anchor.",
     "The captain gave the order and the sailors raised the anchor."),
    ("In 1863 north-west Georgia was involved in the Chattanooga campaign.",
     "In 1863 north-west Georgia was involved in the campaign."),
)


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker.open()


def _item(text: str, said: str) -> ProofItem:
    spoken = spoken_form(said, "en")
    return ProofItem(speak(spoken), RATE, text, "en", spoken=spoken_form(text, "en"))


def test_a_word_the_voice_left_out_is_missing(checker: Checker) -> None:
    records = checker.check([_item(text, said) for text, said in DROPPED])
    for (text, _said), record in zip(DROPPED, records):
        assert record.status == FLAGGED, (text, record)
        assert any(f.kind in ("missing", "garbled") for f in record.flags), (text, record.reasons)
    clean = checker.check([_item(text, text) for text, _said in DROPPED])
    assert [r.status for r in clean] == [PASSED] * len(DROPPED), [(r.heard, r.reasons) for r in clean]


def test_a_word_said_three_times_across_the_stretch_is_repeated(checker: Checker) -> None:
    text = "There is said to be a wonderful bird here called a Nightingale, said the Emperor."
    (record,) = checker.check([_item(text, text.replace("is said", "is said said said"))])
    assert record.status == FLAGGED, record
    assert any(f.kind == "repeated" for f in record.flags), (record.heard, record.reasons)
