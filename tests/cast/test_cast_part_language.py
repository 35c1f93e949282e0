"""A part's language is the rendition's: a character cast with a voice of another language
has its words written out in that language (numbers included), and the project notices the
voice being installed here later without a write to the database."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support.cast import other_language_voice
from support.voice import DETERMINISTIC

from studio.engine.voice.catalog import VOICES_DIR_ENV, get_voice
from studio.project.cast import Casting
from studio.project.lexicon import USER_LEXICON_ENV
from studio.project.opening import new_project_settings, open_for_manuscript

BOOK = """# The Inn

The inn was quiet when the stranger came in from the rain.

"Il est 21 heures," said Amélie to the keeper.
"""
LINE = '"Il est 21 heures," said Amélie to the keeper.'
FRENCH = "fr_FR-testjoe-medium"
#: the key the code before part languages gave this line (Amélie cast with a voice not installed)
KEY_BEFORE = "a16dc5a706809e81d782a3bc172f9484f0d0a1f709263e7743d0c404880de941"


def test_a_part_in_another_language_is_written_out_in_it_once_its_voice_is_installed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VOICES_DIR_ENV, str(tmp_path / "voices"))
    monkeypatch.setenv(USER_LEXICON_ENV, str(tmp_path / "no-user-lexicon.pls"))
    (tmp_path / "inn.md").write_text(BOOK, encoding="utf-8")
    settings = replace(new_project_settings(get_voice(None)), synthesis=DETERMINISTIC)
    project = open_for_manuscript(tmp_path / "inn.md", tmp_path / "inn.studio", settings).project
    project.cast.set_enabled(True)
    project.cast.set_casting("Amélie", Casting(voice_id=FRENCH))

    def line():  # noqa: ANN202 - the line's row as the project reads it now
        return next(r for r in project.sentences() if r.text == LINE)

    before = line()
    assert [p.name for p in before.cast] == ["Amélie", ""]
    assert [p.language for p in before.parts] == ["en", "en"]  # the voice's language unknown here
    assert "twenty-one" in before.parts[0].spoken
    assert before.expected_key == KEY_BEFORE  # parts all in the sentence's language: the key as before

    other_language_voice(tmp_path / "voices", "fr")  # installed later: no write to the project
    after = line()
    assert [p.language for p in after.parts] == ["fr", "en"]
    assert "vingt" in after.parts[0].spoken and "twenty" not in after.parts[0].spoken
    assert after.parts[1].spoken == before.parts[1].spoken  # the narration stays English
    assert after.said == "en" and after.expected_key != before.expected_key  # its audio renders again

    for made in (tmp_path / "voices").iterdir():  # uninstalled: back to the first key (its audio reused)
        made.unlink()
    assert line().expected_key == before.expected_key
