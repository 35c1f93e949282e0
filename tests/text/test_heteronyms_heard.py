"""Heteronym respellings checked by ear: each respelling of the heteronym table, in a
sentence where the rules choose it, is rendered with the bundled voice and heard back by
proof-listening's own ears (the embedded recogniser) as the intended word (issue 31, item 6; proof-listening's
phoneme check relies on the respellings meaning the word).

A respelling that espeak-ng says right can still be heard as something else; the words
that cannot be made to pass are listed in ``CANNOT_PASS`` with what is heard instead.

Why by sound, not by spelling: the recogniser's float math differs across CPUs (AVX2 or
AVX-512 kernels), so on another CPU the same audio can come back as another spelling of the
same sound ("does" as "doze" on one CPU, "dough's" on another). A hearing that espeak-ng
says exactly as the respelling is the word heard right; a different sound still fails.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from studio.proof.words import phonemes
from studio.text.normalize import spoken_form
from studio.text.normalize.heteronyms import HETERONYMS, PROPER

from support.voice import DETERMINISTIC

pytest.importorskip("faster_whisper")

#: one sentence per heteronym in which the rules pick its respelling
SENTENCES = {
    "record": "They will record the song.", "object": "I object to that plan.", "present": "They will present the prize.",
    "conduct": "She will conduct the orchestra.", "permit": "They will permit the change.", "perfect": "We must perfect it soon.",
    "conflict": "These rules conflict with ours.", "project": "They project power abroad.",
    "rebel": "They will rebel against the king.", "suspect": "I suspect foul play.", "convict": "They will convict the man.",
    "contest": "They will contest the result.", "insult": "Never insult the cook.", "increase": "Prices will increase sharply.",
    "progress": "Students progress slowly.", "insert": "Please insert the card.", "transfer": "They will transfer the money.",
    "content": "She was content with her lot.", "console": "He tried to console her.", "survey": "They will survey the land.",
    "attribute": "They attribute it to luck.", "desert": "Do not desert them.", "use": "We use the tools.",
    "close": "Please close the door.", "excuse": "Please excuse me.", "abuse": "They abuse the system.",
    "house": "They house the refugees.", "mouth": "He would mouth the words.", "separate": "We must separate the eggs.",
    "estimate": "We estimate the cost.", "graduate": "She will graduate from college.", "moderate": "He will moderate the debate.",
    "intimate": "He did intimate the plan.", "alternate": "They alternate between jobs.", "deliberate": "They will deliberate on it.",
    "approximate": "We approximate the curve.", "appropriate": "They will appropriate the funds.",
    "associate": "He is an associate professor.", "refuse": "The refuse collection is late.", "convert": "He is a convert.",
    "refund": "I want a refund.", "digest": "She bought the digest.", "resume": "Send me your resume.",
    "produce": "Buy fresh produce here.", "wound": "She wound the clock.", "read": "He had read the book.",
    "lead": "The pipe was made of lead.", "tear": "Do not tear up the letter.", "tears": "He tears up the letter.",
    "wind": "They wind up the toy.", "winds": "The road winds through the hills.", "bow": "They bow before the king.",
    "row": "They had a blazing row.", "lives": "He lives in London.", "live": "They heard live music.",
    "minute": "The minute details matter.", "number": "His hands grew number.", "dove": "She dove into the pool.",
    "bass": "He caught a sea bass.", "does": "The does graze there.", "sow": "The old sow slept.", "axes": "Draw the two axes.",
    "learned": "He is a learned man.", "aged": "The aged man sat.", "blessed": "It was a blessed event.",
    "august": "An august body met.", "Polish": "The Polish army marched.", "Job": "The book of Job is old.",
}
#: spellings the recogniser writes for a sound espeak-ng says differently, accepted as the word heard
#: right (every homophone of the respelling, "red" for "read", is accepted by sound: :func:`_sounds_as`)
SPELLED_OTHERWISE = {"bass": {"base"}, "sow": {"sough"}}
#: respellings espeak-ng says right that the embedded recogniser (Whisper base) hears as another word
CANNOT_PASS = {
    "bow": "bˈaʊ is right; heard as 'bow' on an AVX2 EPYC, as 'bowed' on an AVX-512 one (2026-12-07)",
    "conflict": "kənflˈɪkt is right; heard as 'can flick'",
    "number": "nˈʌmɚ ('more numb') is right; heard as 'numb' alone, as 'number' in the listener's windows",
    "sow": "sˈaʊ is right; heard as 'South'",
}


def test_every_heteronym_has_a_sentence_where_its_respelling_is_chosen() -> None:
    assert set(SENTENCES) == set(HETERONYMS) | set(PROPER)
    for word, sentence in SENTENCES.items():
        alt = _respelling(word)
        assert alt.lower() in spoken_form(sentence, "en").lower(), (word, spoken_form(sentence, "en"))


@pytest.fixture(scope="module")
def heard(onnx_engine) -> dict[str, str]:
    """word -> what proof-listening's ears (the listener, every sentence decoded, no vocabulary prompt)
    heard of its sentence, rendered from the spoken form. The listener packs the sentences into
    28 s windows: a tenth of the CPU time of one recogniser call per sentence."""
    from studio.audio.resample import resample
    from studio.proof.listen import Listener
    from studio.proof.windows import RATE
    from studio.proof.model import choose_model, load_model

    model = load_model(choose_model(None, "cpu"), threads=2)
    words = list(SENTENCES)
    spoken = [spoken_form(SENTENCES[w], "en") for w in words]
    ids = [onnx_engine.text_to_ids(text, "en") for text in spoken]
    audios = [resample(np.asarray(audio, np.float32), onnx_engine.sample_rate, RATE)
              for start in range(0, len(ids), 8) for audio in onnx_engine.synthesize_batch(ids[start:start + 8],
                                                                                           DETERMINISTIC)]
    return {word: h.raw for word, h in zip(words, Listener(model, first_pass=None).begin(audios, spoken, "en").heard())}


def _respelling(word: str) -> str:
    return (HETERONYMS[word] if word in HETERONYMS else PROPER[word])[0]


def _sounds_as(word: str, text: str) -> bool:
    """The recogniser wrote ``word``, an accepted spelling of it, or one or two words that espeak-ng
    says exactly as its respelling (stress and length aside: "dough's" for "doze")."""
    words = re.findall(r"[a-z']+", text.lower())
    if set(words) & ({word.lower()} | SPELLED_OTHERWISE.get(word.lower(), set())):
        return True
    said = phonemes(_respelling(word), "en")
    runs = words + [" ".join(pair) for pair in zip(words, words[1:])]
    return bool(said) and any(phonemes(run, "en") == said for run in runs)


def test_a_hearing_counts_by_its_sound_not_its_spelling() -> None:
    """Other spellings of the respelling's sound pass; another sound, or the sound of a near word, fails."""
    assert _sounds_as("does", "The dough's graze there.") and _sounds_as("does", "The doze graze there.")
    assert _sounds_as("read", "He had red the book.") and _sounds_as("Job", "The book of Jobe is old.")
    assert not _sounds_as("does", "The dogs graze there.") and not _sounds_as("number", "His hands grew numb.")
    assert not _sounds_as("lead", "The pipe was made of lid.")


@pytest.mark.slow
def test_each_respelling_is_heard_as_its_word(heard: dict[str, str]) -> None:
    wrong = {word: text for word, text in heard.items() if not _sounds_as(word, text) and word not in CANNOT_PASS}
    assert not wrong, f"heard as something else: {wrong}"
    passing_now = [w for w in CANNOT_PASS if _sounds_as(w, heard[w])]
    print(f"\nheard right: {len(heard) - len(CANNOT_PASS)} of {len(heard)}; listed as unable to pass: "
          f"{sorted(CANNOT_PASS)} (passing this run: {passing_now})")
