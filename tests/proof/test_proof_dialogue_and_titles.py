"""Proof-listening on dialogue, headings and symbols (issue 39), with the real bundled voice and the
real embedded Whisper base: a symbol's name read aloud is flagged; a clean dialogue passage with
interjections, and a chapter of short headings, pass (each short sentence heard with its own audio).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.proof import speak
from support.takes import Lent
from support.voice import DETERMINISTIC, bundled_engine

from studio.engine.voice.catalog import get_voice
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.proofs import PASSED, results
from studio.proof.check import Checker, ProofItem
from studio.rendering.proofing import proof_project
from studio.rendering.render import render_project
from studio.text.normalize import spoken_form

OWL = '"Hoot!" cried the owl from the old oak.'
DIALOGUE = ('"Hoot!" cried the owl from the old oak. "Ha!" said the captain, "you are late." '
            '"Aye, aye, sir," answered the mate. "Huzza!" shouted the men on the deck. '
            '"Alas! alas!" she sighed. The little boat was tost upon the waves all night. '
            '"Oho!" laughed the goblin. "Pooh!" said the bear.')
HEADINGS = ("# Chapter 3. Characteristics of the Good Index\n\n## Index entries\n\n"
            "A good index leads users to the right place.\n\n## Headings\n\nSubheadings\n\nSee also\n")


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker.open()


def item(text: str, audio) -> ProofItem:  # noqa: ANN001
    return ProofItem(audio, bundled_engine().sample_rate, text, "en", spoken=spoken_form(text, "en"))


def test_a_symbols_name_read_aloud_is_flagged(checker: Checker) -> None:
    named, clean, slash = checker.check([
        item(OWL, speak('Hoot exclamation cried the owl from the old oak.')),  # the voice read the "!"
        item(OWL, speak(spoken_form(OWL, "en"))),
        item("The road/track was closed.", speak(spoken_form("The road/track was closed.", "en"))),
    ])
    assert [f.kind for f in named.flags] == ["symbol"], named.reasons
    assert "exclamation" in named.reasons[0] and "!" in named.reasons[0]
    assert clean.status == PASSED, clean.reasons
    # a slash between words is said as "or" since the spoken forms' third round: no name to hear
    assert "road or track" in spoken_form("The road/track was closed.", "en")
    assert "symbol" not in {f.kind for f in slash.flags}, (slash.heard, slash.reasons)


def render_and_proof(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, checker: Checker):  # noqa: ANN201
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    book = write_manuscript(tmp_path / "books", text, "book.md")
    settings = new_project_settings(get_voice(None)).with_changes(synthesis=DETERMINISTIC)
    project = open_for_manuscript(book, tmp_path / "book.studio", settings).project
    render_project(project, Lent(bundled_engine()))
    proof_project(project, checker, retry=0)
    rows = project.sentences()
    verdicts = results(project.db, rows)
    project.close()
    return [(r.text, verdicts[r.id]) for r in rows]


def test_a_clean_dialogue_passage_with_interjections_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            checker: Checker) -> None:
    heard = render_and_proof(tmp_path, monkeypatch, f"# Chapter One\n\n{DIALOGUE}\n", checker)
    assert len(heard) >= 9
    wrong = [(text, rec.heard, rec.reasons) for text, rec in heard if rec.status != PASSED]
    assert not wrong, wrong


def test_a_title_and_one_word_headings_are_heard_with_their_own_audio(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      checker: Checker) -> None:
    heard = dict(render_and_proof(tmp_path, monkeypatch, HEADINGS, checker))
    wrong = [(text, rec.heard, rec.reasons) for text, rec in heard.items() if rec.status != PASSED]
    assert not wrong, wrong
    # a heading's first word once went to the title before it ("... the Good Index Index", "entries")
    title = next(rec for text, rec in heard.items() if text.startswith("Characteristics"))
    assert title.heard.lower().count("index") == 1, title.heard
    assert "index" in heard["Index entries"].heard.lower(), heard["Index entries"].heard


def test_the_recognisers_own_dollar_sign_is_not_a_word_added() -> None:
    """Whisper writes a number it hears as money ("2000" as "$2,000"); the text named no dollar."""
    from studio.proof.judge import judge
    from studio.proof.listen import Heard, Word
    from studio.proof.words import normalize_words

    def words(text: str) -> tuple[Word, ...]:
        return tuple(Word(w, 0.3 * i, 0.3 * i + 0.25, 0.9, 0.9) for i, w in enumerate(normalize_words(text, "en")))

    heard = Heard(words("only forty had a population exceeding $2,000"),
                  words("only forty had a population exceeding 2000"), "only 40 had a population exceeding $2,000")
    assert judge(heard, "en", []).status == PASSED
    priced = Heard(words("it was sold for two thousand dollars dollars"), words("it was sold for 2000 dollars"), "")
    assert {f.kind for f in judge(priced, "en", []).flags} == {"repeated"}  # the text names dollars: judged
