"""Issue 30's judgement on real audio: the bundled voice renders, the embedded Whisper base listens.

Each test renders its sentences in the test (no noise, so the audio is the same on
every run) and checks what a producer would be told: a sentence after a heading's
long pause passes, a tripled word is "repeated", clean archaic prose full of short
function words passes, a heteronym read against its context is "check the
pronunciation", and a recording of several paragraphs has no "cut short" inside.
"""

from __future__ import annotations

import dataclasses
import wave
from pathlib import Path

import numpy as np
import pytest
from support.proof import speak
from support.voice import bundled_engine

from studio.audio.pcm import to_int16
from studio.project.proofs import FLAGGED, PASSED
from studio.proof.check import Checker, ProofItem
from studio.proof.recording import proof_recording
from studio.text.normalize import spoken_form

RATE = 22050


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker.open()


def _wav(path: Path, audio: np.ndarray) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(bundled_engine().sample_rate)
        w.writeframes(to_int16(audio).tobytes())
    return path


def _pause(seconds: float) -> np.ndarray:
    return np.zeros(int(bundled_engine().sample_rate * seconds), np.float32)


def test_a_tripled_word_is_flagged_as_repeated(checker: Checker) -> None:
    text = "The boy kicked the ball over the garden wall."
    audio = speak("The boy kicked kicked kicked the ball over the garden wall.")
    (record,) = checker.check([ProofItem(audio, RATE, text, "en", spoken=text)])
    assert record.status == FLAGGED, record
    assert any(f.kind == "repeated" and "kick" in f.heard for f in record.flags), record


def test_a_word_said_twice_and_written_as_one_is_flagged_as_repeated(checker: Checker) -> None:
    """Whisper writes "fire fire" as "firefire" at times (the evaluation set's held half): one differing word
    whose sound holds the expected one, which the near-tie rule used to excuse."""
    text = "And he said, Behold the fire and the wood."
    item = ProofItem(speak(text), RATE, text, "en", spoken=text)
    checker.listener.first_pass, first_pass = None, checker.listener.first_pass
    try:
        (heard,) = checker.hear([item])
    finally:
        checker.listener.first_pass = first_pass
    assert any(w.text == "fire" for w in heard.heard), heard.raw
    (clean,) = checker.verdicts([item], [heard])
    glued = dataclasses.replace(heard, heard=tuple(dataclasses.replace(w, text="firefire") if w.text == "fire" else w
                                                   for w in heard.heard))
    (record,) = checker.verdicts([item], [glued])
    assert clean.status == PASSED, clean.reasons
    assert record.status == FLAGGED and any(f.kind == "repeated" for f in record.flags), record.reasons


CLEAN_ARCHAIC = (
    "Bethink thee of the forenoon, when the terror of that bluff was upon us.",
    "Whether in this house or in that one, he sat in the dark and said nothing.",
    "And it came to pass in those days, that there went out a decree from the king.",
    "Dost thou want the bread that is in this basket, or the fish that is in that one?",
)


def test_function_word_mishearings_in_clean_audio_pass(checker: Checker) -> None:
    items = [ProofItem(speak(spoken_form(t, "en")), RATE, t, "en", spoken=spoken_form(t, "en")) for t in CLEAN_ARCHAIC]
    records = checker.check(items)
    assert [r.status for r in records] == [PASSED] * len(items), [(r.heard, r.reasons) for r in records]


def test_a_heteronym_read_against_its_context_is_a_pronunciation_to_check(checker: Checker) -> None:
    text = "Every night she wound the old clock on the mantel."
    assert "wownd" in spoken_form(text, "en")  # the rules want the verb
    given = text  # ... but the voice was given the printed word: espeak reads the injury
    (record,) = checker.check([ProofItem(speak(given), RATE, text, "en", spoken=given)])
    assert record.status == FLAGGED, record
    flag = next(f for f in record.flags if f.kind == "pronunciation")
    assert "check the pronunciation" in flag.reason and "wound" in flag.reason
    right = spoken_form(text, "en")
    (fine,) = checker.check([ProofItem(speak(right), RATE, text, "en", spoken=right)])
    assert not any(f.kind == "pronunciation" for f in fine.flags), fine


def test_a_sentence_after_a_heading_with_a_long_pause_passes(checker: Checker, tmp_path: Path) -> None:
    sentences = ["Chapter Four.", "The ship sailed out of the harbour at first light, with every sail set.",
                 "By noon the coast was only a grey line behind them."]
    audio = np.concatenate([_pause(0.5), speak(sentences[0]), _pause(3.0), speak(sentences[1]), _pause(0.4),
                            speak(sentences[2]), _pause(0.5)])
    verdicts = proof_recording(checker, _wav(tmp_path / "heading.wav", audio), sentences, "en")
    assert [v.record.status for v in verdicts[1:]] == [PASSED, PASSED], [(v.record.heard, v.record.reasons)
                                                                         for v in verdicts]
    assert verdicts[1].start > verdicts[0].end + 2.0  # placed after the pause, not inside it


PARAGRAPHS = (
    ("The village lay at the foot of a green hill.", "A river ran past the mill and under the old bridge.",
     "Every morning the miller opened his doors before the sun was up."),
    ("One winter the river froze from bank to bank.", "The children skated on it all day long.",
     "Their mothers watched from the windows and worried."),
    ("In the spring the ice broke with a sound like thunder.", "The mill wheel turned again, and the miller sang."),
)


def test_a_recording_of_several_paragraphs_has_no_cut_short_inside(checker: Checker, tmp_path: Path) -> None:
    parts, sentences = [_pause(0.3)], []
    for para in PARAGRAPHS:
        for s in para:
            parts += [speak(s), _pause(0.25)]  # the studio's own sentence gap inside a paragraph
            sentences.append(s)
        parts.append(_pause(0.6))
    verdicts = proof_recording(checker, _wav(tmp_path / "chapter.wav", np.concatenate(parts)), sentences, "en")
    cuts = [(v.text, v.record.reasons) for v in verdicts if any(f.kind == "cut" for f in v.record.flags)]
    assert cuts == []
    flagged = [(v.text, v.record.reasons) for v in verdicts if v.record.status != PASSED]
    assert len(flagged) <= 1, flagged
