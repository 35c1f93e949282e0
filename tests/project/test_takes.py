"""Takes in the project layer: every synthesis kept, one chosen, export uses it,
the choice survives reopening, older projects are migrated.

Real project files, real SQLite, the real bundled voice and the real render loop.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.gui import write_manuscript

from studio.engine.voice.catalog import get_voice
from studio.delivery.export import export_chapter_files
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project import schema
from studio.project.store import Project
from studio.project.takes import MAX_TAKES, take_path
from support.takes import FRONT, pcm, render, sha

pytestmark = pytest.mark.usefixtures("private_dirs")


def make_project(tmp_path: Path) -> Project:
    book = write_manuscript(tmp_path / "books")
    return open_for_manuscript(book, tmp_path / "books" / "tiny.studio", new_project_settings(get_voice(None))).project


def new_take(project: Project, sentence_id: int) -> None:
    """What the model worker does for "New take": keep the current audio as a take, forget it, render."""
    row = next(r for r in project.sentences() if r.id == sentence_id)
    project.takes.keep_current(row.cache_key)
    project.invalidate_key(row.cache_key)
    render(project, {sentence_id}, {row.chapter})


def test_each_take_is_kept_listed_chosen_exported_and_remembered(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    render(project)
    target = next(r for r in project.sentences([1]) if r.paragraph is not None)
    first = project.takes.for_sentence(target.id)
    assert len(first) == 1 and first[0].chosen and first[0].preset and first[0].voice_id
    assert first[0].duration == pytest.approx(target.duration)
    new_take(project, target.id)
    new_take(project, target.id)
    takes = project.takes.for_sentence(target.id)
    assert len(takes) == 3 and [t.chosen for t in takes] == [False, False, True]  # the newest is used
    assert all(take_path(project.folder, t.id).is_file() for t in takes)
    assert len({t.id for t in takes}) == 3 and project.takes.size() >= sum(t.size for t in takes)
    # each new take drew its own noise, and the draw is stored with it (repeatable renders)
    seeds = project.db.read().execute("SELECT seed FROM takes WHERE key = ? ORDER BY id", (target.cache_key,))
    assert [s for (s,) in seeds] == [0, 1, 2]
    assert project.takes.next_take(target.cache_key) == 3

    project.takes.choose(target.id, takes[0].id)
    row = next(r for r in project.sentences([1]) if r.id == target.id)
    assert row.state == "done" and row.duration == pytest.approx(takes[0].duration)
    assert sha(project.cache.path_for(row.cache_key)) == sha(take_path(project.folder, takes[0].id))
    out = export_chapter_files(project, tmp_path / "out", "wav", [1])
    exported = pcm(out[0].path)
    assert pcm(take_path(project.folder, takes[0].id)) in exported  # the chosen take is what is exported
    assert pcm(take_path(project.folder, takes[2].id)) not in exported
    folder = project.folder
    project.close()

    with Project.open(folder) as again:  # the choice survives reopening
        listed = again.takes.for_sentence(target.id)
        assert [t.chosen for t in listed] == [True, False, False]
        rows = again.sentences([1])
        assert again.counts([1])["done"] == len(rows)  # nothing to render again
        audio = again.takes.audio(listed[1].id)
        assert audio is not None and audio[0].size / audio[1] == pytest.approx(listed[1].duration, abs=0.01)


def test_takes_are_limited_per_sentence_oldest_first(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    render(project)
    target = next(r for r in project.sentences([1]) if r.paragraph is not None)
    for _ in range(MAX_TAKES + 1):
        new_take(project, target.id)
    takes = project.takes.for_sentence(target.id)
    assert len(takes) == MAX_TAKES and takes[-1].chosen
    oldest = min(t.id for t in takes)
    assert not take_path(project.folder, oldest - 1).exists()  # the dropped take's file is gone
    project.close()


def test_a_project_from_before_takes_is_migrated_and_its_audio_becomes_the_first_take(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    render(project)
    folder = project.folder
    target = next(r for r in project.sentences([1]) if r.paragraph is not None)
    project.close()
    conn = sqlite3.connect(folder / Project.DB_NAME)  # what a project saved by the previous version looks like
    conn.execute("DROP TABLE takes")
    conn.execute("ALTER TABLE chapters DROP COLUMN included")
    conn.execute("ALTER TABLE chapters DROP COLUMN name")
    conn.execute("DROP TABLE chapter_joins")  # and without what schema 4 added
    conn.execute("ALTER TABLE chapters DROP COLUMN origin")
    conn.execute("ALTER TABLE chapters DROP COLUMN front_reason")
    conn.execute("DROP TABLE spoken_overrides")  # and without the spoken-form overrides' step
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()

    with Project.open(folder) as old:
        version = old.db.read().execute("PRAGMA user_version").fetchone()[0]
        assert version == schema.SCHEMA_VERSION
        assert old.takes.for_sentence(target.id) == []  # no takes yet, nothing lost
        assert old.counts([1])["done"] == len(old.sentences([1]))
        assert old.chapter_control.included() == [0, 1, 2]  # the import's choice until the producer decides
        new_take(old, target.id)
        takes = old.takes.for_sentence(target.id)
        assert len(takes) == 2 and takes[1].chosen
        assert takes[0].duration == pytest.approx(target.duration)  # the audio from before is kept


def test_chapters_included_excluded_renamed_and_export_numbers_follow(tmp_path: Path) -> None:
    from studio.delivery.export import default_chapters

    book = write_manuscript(tmp_path / "books", FRONT, "front.md")
    project = open_for_manuscript(book, tmp_path / "books" / "front.studio",
                                  new_project_settings(get_voice(None))).project
    control = project.chapter_control
    assert [c.front_matter for c in control.all()] == [True, False, False, False]
    assert default_chapters(project) == [1, 2, 3]  # the import's choice: front matter left out
    control.set_included(0, True)
    control.set_included(2, False)
    control.rename(1, "  The   Opening ")
    assert default_chapters(project) == [0, 1, 3]
    render(project, None, {0, 1, 3})
    files = export_chapter_files(project, tmp_path / "out", "wav")
    # the book's numbers: excluding "Two" leaves a gap, it does not renumber "Three"
    assert [f.path.name for f in files] == ["01 - Dedication.wav", "02 - The Opening.wav", "04 - Three.wav"]
    assert all(project.chapters()[i].title == t for i, t in ((1, "One"), (2, "Two")))  # imported titles kept
    folder = project.folder
    project.close()
    with Project.open(folder) as again:
        assert [c.included for c in again.chapter_control.all()] == [True, True, False, True]
        assert again.chapter_control.all()[1].name == "The Opening"
        again.chapter_control.rename(1, "")
        again.chapter_control.set_included(0, None)
        assert again.chapter_control.all()[1].name == "One" and again.chapter_control.included() == [1, 3]
