"""Undo and redo of the producer's edits on a real SQLite project, across a reopen (issue 41, point 2)."""

from __future__ import annotations

from pathlib import Path

from support.render import make_book

from studio.project.settings import ProjectSettings

from studio.project.store import Project
from studio.core.lexicon import LexiconEntry
from studio.project.undo import UndoHistory

VOICE = "en_US-joe-medium"


def texts(project: Project) -> list[str]:
    return [r.text for r in project.sentences()]


def chapters(project: Project) -> list[tuple[str, bool]]:
    return [(c.name, c.included) for c in project.chapter_control.all()]


def test_edits_undo_and_redo_and_the_history_survives_a_reopen(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", make_book(), ProjectSettings(VOICE))
    history = UndoHistory(project.db)
    first, structure, keys = texts(project), chapters(project), [r.expected_key for r in project.sentences()]
    sid = next(r.id for r in project.sentences() if r.text == "Birds sang.")
    with history.step("edit sentence"):
        project.edit_sentence(sid, "Birds sang loudly.")
    with history.step("merge the chapters"):
        project.chapter_control.merge_with_next(0)
    with history.step("spoken form"):
        project.spoken.set(sid, "Birds sang very loudly.")
    assert len(chapters(project)) == 1 and "Birds sang loudly." in texts(project)
    assert history.next_labels() == ("spoken form", None)
    project.close()

    project = Project.open(tmp_path / "p")  # a restart: the history is in the project
    history = UndoHistory(project.db)
    assert history.undo() == "spoken form"
    assert sid not in project.spoken.overrides()
    assert history.undo() == "merge the chapters" and chapters(project) == structure
    assert history.undo() == "edit sentence" and texts(project) == first
    assert [r.expected_key for r in project.sentences()] == keys  # the old audio is found again
    assert history.undo() is None and history.next_labels() == (None, "edit sentence")
    assert history.redo() == "edit sentence" and "Birds sang loudly." in texts(project)
    assert history.redo() == "merge the chapters" and len(chapters(project)) == 1
    with history.step("exclude"):  # a new edit: what was undone cannot be redone
        project.chapter_control.set_included(0, False)
    assert history.next_labels() == ("exclude", None)
    assert history.undo() == "exclude" and chapters(project)[0][1] is True
    project.close()


def test_a_render_is_not_an_edit_and_an_edit_that_changes_nothing_is_no_step(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", make_book(), ProjectSettings(VOICE))
    history = UndoHistory(project.db)
    row = project.sentences()[1]
    project.mark_failed(row.id, "a render's bookkeeping")
    with history.step("nothing"):
        pass
    assert history.next_labels() == (None, None)
    with history.step("pronunciation"):
        project.lexicon.add([LexiconEntry("Birds", "alias", "Burdz")])
    assert project.lexicon.entries().entries
    assert history.undo() == "pronunciation" and not project.lexicon.entries().entries
    assert project.sentences()[1].state == "failed"  # undo leaves a render's bookkeeping alone
    project.close()
