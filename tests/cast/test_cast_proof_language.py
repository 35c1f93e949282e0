"""Proof-listening hears each part of a cast sentence in its voice's language: a character
cast with a voice of another language (a test-built French voice) is heard in French, the
narration around it in English; rendered and heard for real (bundled voice, embedded recogniser)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from support.cast import other_language_voice
from support.render import real_engine
from support.voice import DETERMINISTIC

from studio.engine.presets import open_preset
from studio.engine.voice.catalog import VOICES_DIR_ENV, get_voice
from studio.project.cast import Casting, Performance
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.proofs import results
from studio.proof.check import Checker
from studio.rendering.proofing import proof_project
from studio.rendering.render import render_project

BOOK = """# The Inn

The inn was quiet when the stranger came in from the rain.

"Bonjour, madame," said Amélie to the keeper, who was standing behind the long wooden counter by the door.

"We have one room left at the top of the stairs," said the keeper.
"""
LINE = '"Bonjour, madame," said Amélie to the keeper, who was standing behind the long wooden counter by the door.'


def test_a_line_cast_in_another_languages_voice_is_proof_listened_in_that_language(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VOICES_DIR_ENV, str(tmp_path / "voices"))  # installed: the catalog finds it
    other_language_voice(tmp_path / "voices", "fr")
    fr = get_voice("fr_FR-testjoe-medium")
    assert fr.language_family == "fr"
    (tmp_path / "inn.md").write_text(BOOK, encoding="utf-8")
    settings = replace(new_project_settings(get_voice(None)), synthesis=DETERMINISTIC)
    project = open_for_manuscript(tmp_path / "inn.md", tmp_path / "inn.studio", settings).project
    project.cast.set_enabled(True)
    project.cast.set_casting("Amélie", Casting(voice_id=fr.id))

    def render() -> None:
        done = render_project(project, real_engine(), engine_for=lambda _v: open_preset("fp32-cpu", fr), batch_size=8)
        assert done.failed == 0

    render()
    row = next(r for r in project.sentences() if r.text == LINE)
    assert row.language == "en" and [p.name for p in row.cast] == ["Amélie", ""]
    assert [p.language for p in row.parts] == ["fr", "en"]  # the rendition says what each part is said in
    checker = Checker.open()
    asked: list[tuple[str, str]] = []
    begin = checker.listener.begin

    def listening(audios, texts, language):  # noqa: ANN001, ANN202 - the real listener, its languages noted
        asked.extend((language, t) for t in texts)
        return begin(audios, texts, language)

    checker.listener.begin = listening
    proof_project(project, checker, retry=0)
    assert ("fr", '"Bonjour, madame,"') in asked  # Amélie's words in French
    assert ("en", "said Amélie to the keeper, who was standing behind the long wooden counter by the door.") in asked
    assert not any(text == LINE for _lang, text in asked)  # not the whole sentence in one language
    record = results(project.db, [row])[row.id]
    assert record.note == "heard part by part (fr, en)"
    narration = record.heard.split(" / ")[-1].lower()
    assert "keeper" in narration and "counter" in narration  # the English part heard as English
    assert not any("cut short" in reason for reason in record.reasons)  # parts cut in the joins' pauses

    # Amélie as a performance of the narrator's voice instead: one language, the sentence heard whole
    project.cast.set_casting("Amélie", Casting(performance=Performance(pitch=2.0)))
    render()
    asked.clear()
    proof_project(project, checker, retry=0)
    assert [lang for lang, text in asked if "Bonjour" in text] == ["en"]
    assert ("en", LINE) in asked
