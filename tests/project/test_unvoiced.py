"""A passage in a language no voice speaks follows the project's policy.

Real project (SQLite), real bundled voice (English only), real render loop: the
policy is stored, enters the cache key of exactly the unvoiced passages, and decides
what the front end is given (or that the passage stays silent and is listed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.errors import ProjectError
from studio.core.types import Book, Chapter
from studio.engine.voice.catalog import get_voice
from studio.rendering.render import render_project
from studio.project.opening import new_project_settings
from studio.project.store import Project
from support.render import CountingEngine, para, real_engine, studio_cmd

FRENCH = "Le chat dort au soleil."


def book() -> Book:
    return Book(title="Mixed", author="A", language="en", source="memory", chapters=(
        Chapter("One", (para("The cat sleeps in the sun."), para(FRENCH, lang="fr"))),))


@pytest.fixture
def project(tmp_path: Path):
    proj = Project.create(tmp_path / "p", book(), new_project_settings(get_voice(None)))
    yield proj
    proj.close()


def _by_text(project: Project) -> dict:
    return {r.text: r for r in project.sentences()}


def test_policy_is_stored_and_keys_only_the_unvoiced_passage(project: Project) -> None:
    native = _by_text(project)
    assert project.settings().unvoiced == "native" and native[FRENCH].said == "fr"
    for policy, said in (("book", "en"), ("skip", "skip/fr")):
        project.update_settings(project.settings().with_changes(unvoiced=policy))
        rows = _by_text(project)
        assert project.settings().unvoiced == policy and rows[FRENCH].said == said
        assert rows[FRENCH].expected_key != native[FRENCH].expected_key
        assert all(rows[t].expected_key == native[t].expected_key for t in rows if t != FRENCH)
    with pytest.raises(ProjectError, match="unknown policy"):
        project.settings().with_changes(unvoiced="shout")


def test_render_speaks_or_silences_by_policy(project: Project) -> None:
    engine = CountingEngine(real_engine())
    render_project(project, engine)
    assert FRENCH in engine.spoken
    native = _by_text(project)[FRENCH]

    project.update_settings(project.settings().with_changes(unvoiced="book"))
    engine.spoken.clear()
    render_project(project, engine)
    assert engine.spoken == [FRENCH]  # only the unvoiced passage renders again
    as_english = _by_text(project)[FRENCH]
    assert as_english.state == "done" and as_english.cache_key != native.cache_key

    project.update_settings(project.settings().with_changes(unvoiced="skip"))
    engine.spoken.clear()
    result = render_project(project, engine)
    assert engine.spoken == [] and result.failed == 0
    silent = _by_text(project)[FRENCH]
    entry = project.cache_entry(silent.cache_key)
    assert silent.state == "done" and entry is not None
    assert entry.duration == 0 and project.cache.load(entry).size == 0  # silence: nothing is said


def test_cli_lists_what_it_left_silent(tmp_path: Path) -> None:
    ms = tmp_path / "mixed.md"
    ms.write_text("# Mixed\n\n## One\n\nThe cat sleeps in the sun, warm and still.\n\n"
                  "Le chat dort au soleil, et les oiseaux chantent dans les arbres du jardin.\n", encoding="utf-8")
    done = studio_cmd("render", str(ms), "-o", str(tmp_path / "out"), "--format", "wav", "--unvoiced", "skip",
                      "--in-process", timeout=300)
    assert done.returncode == 0, done.stderr
    assert "left silent (no 'fr' voice)" in done.stderr and "Le chat dort" in done.stderr
    assert len(list((tmp_path / "out").glob("*.wav"))) == 1


def test_the_producer_picks_the_policy_in_the_voices_dialog(qtbot) -> None:  # noqa: ANN001
    pytest.importorskip("PySide6")
    from studio.ui.voices_dialog import VoicesDialog

    settings = new_project_settings(get_voice(None)).with_changes(unvoiced="book")
    dlg = VoicesDialog(settings, ["en", "fr"])
    qtbot.addWidget(dlg)
    assert dlg.unvoiced.currentData() == "book"
    dlg.unvoiced.setCurrentIndex(dlg.unvoiced.findData("skip"))
    assert dlg.chosen_settings().unvoiced == "skip"
    assert "silent" in dlg.unvoiced.currentText()
