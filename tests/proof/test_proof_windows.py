"""Whisper's windows: how sentences are packed into them, and two heard side by side (issue 45).

On a CPU with two cores the recogniser hears two windows at once, one per worker, while the
first pass goes on; each sentence must still get what was heard in its own stretch of its own
window, whichever worker heard it and in whatever order the windows finished.
"""

from __future__ import annotations

import gc
import itertools
import os
import threading
import time
import weakref
from pathlib import Path

import numpy as np
import pytest
from support.proof import speak
from support.render import rendered_test_book

from studio.project.store import Project
from studio.proof import sentences, windows
from studio.proof.check import Checker, ProofItem
from studio.proof.listen import SAID_ROOM, Heard
from studio.proof.windows import GAP_S, RATE, WINDOW_S, Item, Packer, Workers
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


def _seconds(window: list[Item]) -> float:
    return sum(len(i.audio) for i in window) / RATE + GAP_S * (len(window) - 1)


def test_sentences_fill_windows_closer_than_end_to_end() -> None:
    rng = np.random.default_rng(3)
    items = [Item(i, np.zeros(int(RATE * s), np.float32), "x") for i, s in enumerate(rng.uniform(1.5, 12.0, 80))]

    def pack(packer: Packer) -> list[list[Item]]:
        windows = [w for item in items for w in packer.add(item)]
        return windows + packer.close()

    filled, end_to_end = pack(Packer()), pack(Packer(filling=1))
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


def test_the_workers_hear_the_oldest_hearing_first_and_one_hearings_waiting_windows_together() -> None:
    """A window of an earlier batch (rank) jumps the queue; windows of one hearing waiting together are
    heard in one call; a failure reaches whoever waits for that window."""
    started, gate = threading.Event(), threading.Event()
    heard: list[tuple[str, list[int]]] = []

    def hear(hearing: str, windows: list[list[Item]]) -> None:
        started.set()
        gate.wait(30)
        if hearing == "broken":
            raise RuntimeError("no model")
        heard.append((hearing, [w[0].index for w in windows]))

    def window(i: int) -> list[Item]:
        return [Item(i, np.zeros(160, np.float32), "x")]

    workers = Workers(1, hear, batch=2)
    futures = [workers.submit(1, "running", window(0))]
    assert started.wait(30)  # the one worker holds window 0: the rest wait in the queue
    futures += [workers.submit(2, "next", window(1)), workers.submit(2, "next", window(2)),
                workers.submit(1, "again", window(3)), workers.submit(2, "next", window(4)),
                workers.submit(3, "broken", window(5))]
    gate.set()
    for f in futures[:-1]:
        f.result(30)
    with pytest.raises(RuntimeError, match="no model"):
        futures[-1].result(30)
    assert heard == [("running", [0]), ("again", [3]), ("next", [1, 2]), ("next", [4])]


def test_a_batch_is_begun_before_the_batch_before_it_is_judged(tmp_path: Path, monkeypatch) -> None:
    """The next batch's first pass runs while the workers hear this batch's windows; every sentence still
    gets its verdict, and the progress comes batch by batch, in order."""
    folder = rendered_test_book(tmp_path / "book.studio")
    checker = Checker.open()
    calls: list[tuple[str, int]] = []
    batch_of: dict[int, int] = {}  # each item's batch, by the item's identity

    def begun(items: list[ProofItem]) -> object:
        number = 1 + max(batch_of.values(), default=-1)
        batch_of.update((id(item), number) for item in items)
        calls.append(("begin", number))
        return begin(items)

    def judged(items: list[ProofItem], heard: list) -> list:
        calls.append(("judge", batch_of[id(items[0])]))
        return verdicts(items, heard)

    begin, verdicts = checker.begin, checker.verdicts
    monkeypatch.setattr(checker, "begin", begun)
    monkeypatch.setattr(checker, "verdicts", judged)
    monkeypatch.setattr(sentences, "BATCH", 3)
    seen: list[sentences.ProofProgress] = []
    with Project.open(folder) as project:
        rows = sentences.to_check(project, project.sentences())
        out = sentences.check_rows(project, checker, rows, progress=seen.append)
    turns = [call for call, _ in itertools.groupby(calls)]  # a batch is judged in turns, as its sentences settle
    n = sum(kind == "begin" for kind, _ in turns)
    assert n >= 3 and turns == [("begin", 0)] + [c for b in range(1, n) for c in (("begin", b), ("judge", b - 1))] \
        + [("judge", n - 1)], calls
    assert set(out) == {r.id for r in rows}
    assert [p.done for p in seen] == sorted(p.done for p in seen) and seen[-1].done == len(rows)


def test_idle_workers_end_and_let_go_of_the_listener(monkeypatch) -> None:
    """A worker with nothing to hear ends, so a dropped checker's model is freed; the next window
    starts a worker again."""
    monkeypatch.setattr(windows, "IDLE_S", 0.1)

    class Ears:
        def hear(self, hearing: str, batch: list[list[Item]]) -> None:
            heard.append(batch[0][0].index)

    heard: list[int] = []
    ears = Ears()
    gone = weakref.ref(ears)
    workers = Workers(2, ears.hear)
    workers.submit(0, "first", [Item(0, np.zeros(160, np.float32), "x")]).result(30)
    time.sleep(0.5)  # every worker ended
    workers.submit(0, "again", [Item(1, np.zeros(160, np.float32), "x")]).result(30)
    assert heard == [0, 1]
    del ears, workers
    deadline = time.monotonic() + 10
    while gone() is not None and time.monotonic() < deadline:
        time.sleep(0.1)
        gc.collect()
    assert gone() is None
