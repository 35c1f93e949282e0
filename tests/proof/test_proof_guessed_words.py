"""A word the phonemizer only guessed is "check the pronunciation" unless the project knows it.

Real audio from the bundled voice; the check reads what the voice was given (no
recogniser decides it), and the lexicon or the project's names clear it.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.proof import speak
from support.voice import DETERMINISTIC, bundled_engine

from studio.core.lexicon import Lexicon, LexiconEntry
from studio.desktop.proof import ProofEntry, ProofView
from studio.project.proofs import FLAGGED, PASSED
from studio.proof.check import Checker, ProofItem
from studio.proof.names import book_names
from studio.rendering.synthesizer import SynthRequest, each_synthesizer
from studio.ui.proof_dock import ProofPanel

RATE = 22050
RARE = "She played a slow tune on her mandoline by the open window."
NAME = "At dawn Coriolanus rode out through the gate of the city."


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker.open()


def _guessed(record) -> list[str]:  # ProofRecord
    return [f.expected for f in record.flags if f.kind == "pronunciation"]


def test_a_guessed_word_is_a_pronunciation_to_check_until_it_is_in_the_lexicon(checker: Checker) -> None:
    (record,) = checker.check([ProofItem(speak(RARE), RATE, RARE, "en", spoken=RARE)])
    assert record.status == FLAGGED and _guessed(record) == ["mandoline"], record
    flag = next(f for f in record.flags if f.kind == "pronunciation")
    assert "check the pronunciation" in flag.reason and "no pronouncing dictionary" in flag.reason
    lexicon = Lexicon.of([LexiconEntry("mandoline", "alias", "mandolin")])
    (audio,) = each_synthesizer(bundled_engine(), DETERMINISTIC)([SynthRequest(0, RARE, "en", lexicon)])
    item = ProofItem(np.asarray(audio, np.float32), RATE, RARE, "en", lexicon, spoken=RARE)
    (known,) = checker.check([item])
    assert known.status == PASSED, (known.heard, known.reasons)


def test_a_name_the_project_knows_is_not_asked_about(checker: Checker) -> None:
    audio = speak(NAME)
    (unknown,) = checker.check([ProofItem(audio, RATE, NAME, "en", spoken=NAME)])
    assert _guessed(unknown) == ["Coriolanus"], unknown  # printed once, in no dictionary: asked about
    book = [NAME, "The people cheered when Coriolanus came home.", "Nobody knew what he would do."]
    names = book_names(book)
    assert "coriolanus" in names and "nobody" not in names
    (known,) = checker.check([ProofItem(audio, RATE, NAME, "en", spoken=NAME, names=names)])
    assert known.status == PASSED, (known.heard, known.reasons)


def test_ordinary_words_outside_the_dictionary_are_not_asked_about() -> None:
    from studio.proof.pronounce import guessed_flags

    # not in cmudict, but a dictionary word with an ending, a compound, a British spelling: read right by rules
    for text in ("The firmament shone above the sackcloth tents.", "Her splendour was unlooked for.",
                 "The kinsmen met at the seedtime, and the coquette smiled."):
        assert guessed_flags(text, "en") == [], text


def test_the_dock_says_what_to_do_about_a_guessed_word(qtbot) -> None:  # noqa: ANN001
    from studio.proof.pronounce import guessed_flags

    flags = tuple(guessed_flags(RARE, "en"))
    panel = ProofPanel()
    qtbot.addWidget(panel)
    entry = ProofEntry(3, 0, 1, RARE, RARE.lower(), 1, 100.0, flags)
    panel.set_view(ProofView("book", (entry,), ((0, "90.0 % passed, 1 to review"),)))
    why = panel.table.item(0, 2).text()
    assert "check the pronunciation" in why and "mandoline" in why
    panel.table.selectRow(0)
    assert "new take will not change it" in panel.details.toPlainText()
    words = []
    panel.addPronunciation.connect(words.append)
    panel.lexicon_btn.click()
    assert words == ["mandoline"]


def test_a_project_asks_about_a_guessed_word_until_the_producer_adds_it(tmp_path, checker: Checker) -> None:  # noqa: ANN001
    """The producer's whole path: render, proof, add the word to the lexicon, render again, proof."""
    from support.render import para, real_engine

    from studio.core.types import Book, Chapter
    from studio.engine.voice.catalog import get_voice
    from studio.project.store import Project
    from studio.project.opening import new_project_settings
    from studio.rendering.proofing import flagged_rows, proof_project
    from studio.rendering.render import render_project

    book = Book(title="Rome", author="Ann Author", language="en", source="memory", chapters=(
        Chapter("One", (para(NAME, "The people cheered when Coriolanus came home."), para(RARE))),))
    project = Project.create(tmp_path / "p", book, new_project_settings(get_voice(None)))
    try:
        render_project(project, real_engine())
        proof_project(project, checker, retry=0)
        asked = {row.text: [f.expected for f in rec.flags if f.kind == "pronunciation"]
                 for row, rec in flagged_rows(project)}
        assert asked.get(RARE) == ["mandoline"], asked  # the recurring name is known, the rare word is not
        assert NAME not in asked, asked
        project.lexicon.add([LexiconEntry("mandoline", "alias", "mandolin")])
        render_project(project, real_engine())  # the sentence with the new pronunciation is rendered again
        proof_project(project, checker, retry=0)
        assert RARE not in {row.text for row, _rec in flagged_rows(project)}
    finally:
        project.close()
