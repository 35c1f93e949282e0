"""The lexicon with the real bundled voice: phonemes, ids, and re-rendered audio."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from support.render import CountingEngine, para, real_engine

from studio.core.lexicon import Lexicon, LexiconEntry
from studio.core.types import Book, Chapter
from studio.engine.base import SynthesisSettings
from studio.engine.voice.catalog import get_voice
from studio.engine.voice.config import VoiceConfig
from studio.engine.voice.phonemize import PiperFrontEnd
from studio.rendering.render import render_project
from studio.project.opening import new_project_settings
from studio.project.store import Project
from studio.project.lexicon import USER_LEXICON_ENV

pytestmark = pytest.mark.slow

SENTENCES = ("Mr Nguyen came home.", "The river was cold.", "Nguyen smiled at the river.", "Birds sang.")
ALTAMAHA = LexiconEntry("Altamaha", "phoneme", "ˈɔltəməˌhɔ")


@pytest.fixture(scope="module")
def front_end() -> PiperFrontEnd:
    return PiperFrontEnd(VoiceConfig.from_file(get_voice(None).config_path))


def test_ipa_entry_is_spliced_into_the_phoneme_stream(front_end: PiperFrontEnd) -> None:
    text = "They rowed the Altamaha, then rested."
    plain = "".join(front_end.phonemize(text, "en"))
    with_entry = "".join(front_end.phonemize(text, "en", Lexicon.of([ALTAMAHA])))
    assert "ˈɔltəməˌhɔ," in with_entry and "ˈɔltəməˌhɔ" not in plain
    # the text around the word is phonemized as before, the comma's pause included
    assert with_entry.startswith(plain.split(" ")[0]) and with_entry.endswith(plain.split(" ")[-1])
    assert front_end.text_to_ids(text, "en", Lexicon.of([ALTAMAHA])) != front_end.text_to_ids(text, "en")


def test_respelling_is_phonemized_in_context(front_end: PiperFrontEnd) -> None:
    lex = Lexicon.of([LexiconEntry("Nguyen", "alias", "Win")])
    assert front_end.phonemize("Mr Nguyen came.", "en", lex) == front_end.phonemize("Mr Win came.", "en")
    assert front_end.phonemize("Birds sang.", "en", lex) == front_end.phonemize("Birds sang.", "en")


def test_ipa_is_checked_against_the_voice(front_end: PiperFrontEnd) -> None:
    assert front_end.unknown_phonemes("ˈægnɪs") == []  # ASCII g is read as IPA ɡ
    assert front_end.unknown_phonemes("ˈæ§nɪs") == ["§"]


def test_an_entry_rerenders_exactly_the_sentences_containing_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER_LEXICON_ENV, str(tmp_path / "no-user-lexicon.pls"))
    book = Book("B", "A", "en", (Chapter("One", (para(*SENTENCES[:2]), para(*SENTENCES[2:]))),), source="memory")
    with Project.create(tmp_path / "p", book, new_project_settings(get_voice(None))) as project:
        # deterministic voice: any difference in the audio comes from the lexicon
        project.update_settings(replace(project.settings(), synthesis=SynthesisSettings(0.0, 1.0, 0.0)))
        render_project(project, CountingEngine(real_engine()))
        before = _audio(project)

        project.lexicon.add([LexiconEntry("Nguyen", "alias", "Win")])
        engine = CountingEngine(real_engine())
        result = render_project(project, engine)
        assert sorted(engine.spoken) == ["Mr Nguyen came home.", "Nguyen smiled at the river."]
        assert result.synthesized == 2
        after = _audio(project)
        assert _changed(before, after) == {"Mr Nguyen came home.", "Nguyen smiled at the river."}

        project.lexicon.add([LexiconEntry("river", "phoneme", "ɹˈɑːvɚ")])
        engine = CountingEngine(real_engine())
        render_project(project, engine)
        assert sorted(engine.spoken) == ["Nguyen smiled at the river.", "The river was cold."]
        assert _changed(after, _audio(project)) == {"Nguyen smiled at the river.", "The river was cold."}

        # removing both entries finds the first render's audio again: nothing is spoken
        project.lexicon.remove("Nguyen")
        project.lexicon.remove("river")
        engine = CountingEngine(real_engine())
        assert render_project(project, engine).synthesized == 0 and engine.spoken == []
        assert _changed(before, _audio(project)) == set()


def _audio(project: Project) -> dict[str, tuple[str, np.ndarray]]:
    out = {}
    for row in project.sentences():
        entry = project.cache_entry(row.cache_key or "")
        assert row.state == "done" and entry is not None
        audio = project.cache.load(entry)
        assert audio is not None
        out[row.text] = (row.cache_key, audio)
    return out


def _changed(a: dict[str, tuple[str, np.ndarray]], b: dict[str, tuple[str, np.ndarray]]) -> set[str]:
    changed = set()
    for text, (key, audio) in a.items():
        key2, audio2 = b[text]
        same_audio = audio.shape == audio2.shape and np.array_equal(audio, audio2)
        assert (key == key2) == same_audio, text  # a new key always comes with new audio here
        if not same_audio:
            changed.add(text)
    return changed


@pytest.mark.timeout(120)
def test_the_model_process_applies_the_same_lexicon(front_end: PiperFrontEnd) -> None:
    """The lexicon crosses to a model process with the request; ids are cached per lexicon."""
    from studio.stack.build import engine_spec, plan_engine
    from studio.stack.isolation.engine import IsolatedEngine

    text = "They rowed the Altamaha."
    lex = Lexicon.of([ALTAMAHA])
    other = Lexicon.of([LexiconEntry("Altamaha", "alias", "Alta")])
    with IsolatedEngine(engine_spec(plan_engine("fp32-cpu", streams=1))) as engine:
        assert engine.text_to_ids(text, "en") == front_end.text_to_ids(text, "en")
        assert engine.text_to_ids(text, "en", lex) == front_end.text_to_ids(text, "en", lex)
        assert engine.text_to_ids(text, "en", other) == front_end.text_to_ids(text, "en", other)
        assert len({tuple(engine.text_to_ids(text, "en", x)) for x in (None, lex, other)}) == 3
