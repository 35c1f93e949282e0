"""Whisper's windows: how sentences are packed into them, and two heard side by side (issue 45).

On a CPU with two cores the recogniser hears two windows at once, one per worker, while the
first pass goes on; each sentence must still get what was heard in its own stretch of its own
window, whichever worker heard it and in whatever order the windows finished.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from support.proof import speak

from studio.proof.check import Checker, ProofItem
from studio.proof.listen import GAP_S, RATE, SAID_ROOM, WINDOW_S, Heard, _Item, _Packer
from studio.proof.sphinx import FirstPass, Fit, WordFit
from studio.proof.words import normalize_words

SENTENCES = (
    "The harbour master counted eleven fishing boats before the storm arrived.",
    "Her grandmother kept a jar of buttons on the kitchen windowsill.",
    "Nobody in the village had ever seen a purple giraffe.",
    "The train to the mountains leaves at seven every morning.",
    "A small brown dog followed the postman along the lane.",
    "They painted the wooden fence a bright shade of yellow.",
    "The library closes early on the first Monday of each month.",
    "Snow covered the orchard and the apples froze on the branches.",
    "He wrote the letter twice because the first one was too angry.",
    "The lighthouse keeper polished the great lamp every evening at dusk.",
    "Two old friends met on the bridge and talked about the weather.",
    "The baker's cat slept on a sack of flour beside the warm oven.",
)


def _seconds(window: list[_Item]) -> float:
    return sum(len(i.audio) for i in window) / RATE + GAP_S * (len(window) - 1)


def test_sentences_fill_windows_closer_than_end_to_end() -> None:
    rng = np.random.default_rng(3)
    items = [_Item(i, np.zeros(int(RATE * s), np.float32), "x") for i, s in enumerate(rng.uniform(1.5, 12.0, 80))]

    def pack(packer: _Packer) -> list[list[_Item]]:
        windows = [w for item in items for w in packer.add(item)]
        return windows + packer.close()

    filled, end_to_end = pack(_Packer()), pack(_Packer(filling=1))
    for windows in (filled, end_to_end):
        assert sorted(i.index for w in windows for i in w) == list(range(len(items)))  # each sentence once
        assert max(_seconds(w) for w in windows) <= WINDOW_S
    assert len(filled) < len(end_to_end)
    # every window but the last few still filling is nearly full
    assert np.median([_seconds(w) for w in filled]) > WINDOW_S - 2.0


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one window at a time on one core")
def test_windows_heard_side_by_side_give_each_sentence_its_own_words() -> None:
    checker = Checker.open()
    assert checker.listener.workers == 2
    checker.listener.first_pass = None  # every sentence to Whisper: several windows
    items = [ProofItem(speak(text), 22050, text, "en") for text in SENTENCES]
    assert sum(p.audio.size / p.rate for p in items) > WINDOW_S + 5  # two windows at least
    heard = checker.hear(items)
    assert checker.listener.decoded >= len(SENTENCES)  # and any the decoder left half heard, heard again
    for text, h in zip(SENTENCES, heard):
        assert isinstance(h, Heard)
        expected, got = set(normalize_words(text, "en")), [w.text for w in h.heard]
        assert got and sum(w in expected for w in got) >= 0.8 * len(expected), (text, h.raw)


def test_a_window_is_decoded_no_further_than_its_expected_words_allow() -> None:
    """A decoder caught in a loop stops near what the window should say, not at Whisper's 448 tokens: here
    the audio says a whole sentence where the text expects two words, and only the start is written."""
    checker = Checker.open()
    checker.listener.first_pass = None
    said = " ".join(SENTENCES[:3])
    (heard,) = checker.hear([ProofItem(speak(said), 22050, "Yes, indeed.", "en")])
    assert isinstance(heard, Heard)
    bound = int(SAID_ROOM * 4) + 16  # "Yes, indeed." is at most 4 tokens
    assert 0 < len(heard.heard) < bound < len(normalize_words(said, "en")), heard.raw


def test_the_first_pass_excuses_a_swallowed_short_word_only() -> None:
    """A short word said in a few frames ("the", "of") scores far below a long one on clean audio: it is held
    to the looser bar; a long word scored as low is still doubted."""
    first = FirstPass()

    def fit(seconds: float, score: float) -> Fit:
        words = [WordFit("over", 0.0, 0.3, -1.0, None), WordFit("x", 0.3, 0.3 + seconds, score, None),
                 WordFit("hill", 0.3 + seconds, 0.8 + seconds, -1.2, None)]
        return Fit(tuple(words), frames=100, silence=0.0, forced=-1.3, free=None)

    assert first.trusts(fit(0.06, first.word - 1.0))
    assert not first.trusts(fit(0.06, first.short_word - 1.0))
    assert not first.trusts(fit(0.40, first.word - 1.0))
