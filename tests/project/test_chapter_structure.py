"""Merging and splitting chapters on real SQLite projects: ids, keys, undo, reopen, re-import."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.render import make_book, para

from studio.core.errors import ProjectError
from studio.core.types import Book, Chapter
from studio.project.settings import ProjectSettings
from studio.project.store import Project

VOICE = "en_US-joe-medium"


def three_chapters() -> Book:
    """Morning and Evening have spoken titles; "Night" starts with its heading as a paragraph."""
    book = make_book()
    night = Chapter("Night", (para("Night"), para("Owls called."), para("Much Later"), para("The end.")))
    prologue = Chapter("Prologue", (para("Before it all."),), front_matter=True)
    return Book(book.title, book.author, book.language, (prologue, *book.chapters, night), source="memory")


@pytest.fixture
def project(tmp_path: Path):
    proj = Project.create(tmp_path / "p", three_chapters(), ProjectSettings(VOICE))
    yield proj
    proj.close()


def shape(project: Project) -> list[tuple[str, bool, tuple[int, ...]]]:
    """(name, included, sentence ids) per chapter: what a producer and the audio see."""
    rows = project.sentences()
    return [(c.name, c.included, tuple(r.id for r in rows if r.chapter == c.index))
            for c in project.chapter_control.all()]


def keys(project: Project) -> dict[int, str]:
    return {r.id: r.expected_key for r in project.sentences()}


def test_merge_keeps_sentences_keys_and_order_and_split_undoes_it(project: Project) -> None:
    before, before_keys = shape(project), keys(project)
    orders = [r.id for r in project.sentences()]
    book_before = project.book()
    control = project.chapter_control
    control.merge_with_next(1)  # Morning + Evening
    after = shape(project)
    assert [n for n, _, _ in after] == ["Prologue", "Morning", "Night"]
    assert after[1][2] == before[1][2] + before[2][2]  # the same sentences, in reading order
    assert keys(project) == before_keys and [r.id for r in project.sentences()] == orders
    merged = project.book().chapters[1]
    assert merged.paragraphs[2].text == "Evening"  # the spoken title stays, as a paragraph
    assert len(merged.paragraphs) == 2 + 1 + 3
    assert [c.index for c in project.chapters()] == [0, 1, 2]
    control.split(1, 2)  # at the paragraph where Evening began
    assert shape(project) == before and keys(project) == before_keys
    assert project.book() == book_before
    assert project.sentences([2])[0].is_title  # Evening's title is a title again


def test_split_elsewhere_names_part_two_or_the_heading_and_merge_undoes_it(project: Project) -> None:
    before, before_keys = shape(project), keys(project)
    control = project.chapter_control
    control.rename(1, "Dawn")
    control.split(1, 1)
    assert [c.name for c in control.all()] == ["Prologue", "Dawn", "Dawn (part 2)", "Evening", "Night"]
    assert keys(project) == before_keys
    assert project.book().chapters[2].paragraphs[0].text == "Tea was hot. We sat."
    control.merge_with_next(1)
    assert [c.name for c in control.all()] == ["Prologue", "Dawn", "Evening", "Night"]
    control.merge_with_next(2)  # Evening + Night: Night starts with its heading paragraph
    control.split(2, 3)
    assert [c.name for c in control.all()] == ["Prologue", "Dawn", "Evening", "Night"]
    control.split(3, 2)  # a fresh split at a heading is named after it
    assert [c.name for c in control.all()] == ["Prologue", "Dawn", "Evening", "Night", "Much Later"]
    assert project.book().chapters[4].paragraphs[0].text == "Much Later"
    control.merge_with_next(3)
    control.rename(1, None)
    assert shape(project) == before and keys(project) == before_keys


def test_included_state_after_merge_and_split(project: Project) -> None:
    control = project.chapter_control
    assert control.included() == [1, 2, 3]
    control.merge_with_next(0)  # an excluded prologue merged into an included chapter: the result is included
    assert (control.all()[0].name, control.all()[0].included) == ("Prologue", True)
    control.split(0, 1)  # undo: as before
    assert control.included() == [1, 2, 3] and control.all()[0].front_matter
    control.set_included(2, False)
    control.split(2, 1)  # a part of an excluded chapter is excluded too
    assert [c.included for c in control.all()] == [False, True, False, False, True]


def test_refusals(project: Project) -> None:
    control = project.chapter_control
    with pytest.raises(ProjectError, match="last chapter"):
        control.merge_with_next(3)
    with pytest.raises(ProjectError, match="first paragraph"):
        control.split(1, 0)
    with pytest.raises(ProjectError, match="no paragraph"):
        control.split(1, 9)
    with pytest.raises(ProjectError, match="no chapter"):
        control.merge_with_next(7)
    assert len(control.all()) == 4


def test_decisions_survive_reopening(project: Project) -> None:
    control = project.chapter_control
    control.merge_with_next(1)
    control.split(2, 2)
    expected = shape(project)
    folder = project.folder
    project.close()
    with Project.open(folder) as again:
        assert shape(again) == expected
        again.chapter_control.merge_with_next(2)
        again.chapter_control.split(1, 2)
        assert [c.name for c in again.chapter_control.all()] == ["Prologue", "Morning", "Evening", "Night"]


def test_reimport_replays_choices_whose_text_is_still_there(project: Project, caplog: pytest.LogCaptureFixture) -> None:
    control = project.chapter_control
    control.merge_with_next(1)  # Evening joins Morning
    control.split(2, 1)  # Night split before "Owls called."
    control.rename(2, "Dusk")
    control.set_included(0, True)
    expected = [(n, inc) for n, inc, _ in shape(project)]
    assert expected == [("Prologue", True), ("Morning", True), ("Dusk", True), ("Night (part 2)", True)]
    project.replace_book(three_chapters())
    assert [(n, inc) for n, inc, _ in shape(project)] == expected
    book = three_chapters()  # the new manuscript no longer has Evening nor "Owls called."
    night = Chapter("Night", (para("Night"), para("Bats flew."), para("Much Later"), para("The end.")))
    project.replace_book(Book(book.title, book.author, book.language, (*book.chapters[:2], night)))
    assert [(n, inc) for n, inc, _ in shape(project)] == [("Prologue", True), ("Morning", True), ("Dusk", True)]
    assert "no longer match" in caplog.text and "Evening" in caplog.text and "Owls called" in caplog.text


def test_a_project_from_schema_3_opens_with_its_chapters_as_imported(tmp_path: Path) -> None:
    with Project.create(tmp_path / "old", three_chapters(), ProjectSettings(VOICE)) as proj:
        before = shape(proj)
    conn = sqlite3.connect(tmp_path / "old" / Project.DB_NAME)  # what the previous version saved
    conn.execute("DROP TABLE chapter_joins")
    conn.execute("ALTER TABLE chapters DROP COLUMN origin")
    conn.execute("ALTER TABLE chapters DROP COLUMN front_reason")
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    with Project.open(tmp_path / "old") as old:
        assert shape(old) == before
        old.chapter_control.merge_with_next(1)
        old.chapter_control.split(1, 2)
        assert shape(old) == before


def test_cli_lists_and_changes_chapters(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    from studio.cli import main

    folder = str(project.folder)
    assert main(["chapters", folder]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0].split() == ["#", "CHAPTER", "INCLUDED", "SENTENCES", "RENDERED", "DURATION"]
    assert listing[1].split()[:5] == ["1", "Prologue", "no", "2", "0/2"]
    assert main(["chapters", folder, "--merge", "2"]) == 0
    out = capsys.readouterr().out
    assert "Evening" not in out and out.splitlines()[2].split()[:5] == ["2", "Morning", "yes", "10", "0/10"]
    assert main(["chapters", folder, "--show", "2"]) == 0
    assert "     3  Evening" in capsys.readouterr().out
    assert main(["chapters", folder, "--split", "2:3"]) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()[1:]] == \
        ["Prologue", "Morning", "Evening", "Night"]
    assert main(["chapters", folder, "--rename", "4", "The Dark"]) == 0
    assert main(["chapters", folder, "--include", "1"]) == 0
    assert [(c.name, c.included) for c in project.chapter_control.all()][::3] == [("Prologue", True), ("The Dark", True)]
    assert main(["chapters", folder, "--split", "2:1"]) == 2
    assert "first paragraph" in capsys.readouterr().err
    assert main(["inspect", folder]) == 0  # a project folder: its chapters as the producer left them
    report = capsys.readouterr().out
    assert "The Dark" in report and "Prologue" in report and "excluded" not in report


def test_reimport_keeps_an_edit_to_a_title_inside_a_merged_chapter(project: Project) -> None:
    project.chapter_control.merge_with_next(1)
    title = next(r for r in project.sentences([1]) if r.text == "Evening")
    project.edit_sentence(title.id, "Evening falls")
    project.replace_book(three_chapters())
    assert [c.name for c in project.chapter_control.all()] == ["Prologue", "Morning", "Night"]
    assert "Evening falls" in [r.text for r in project.sentences([1])]
    project.chapter_control.split(1, 2)
    assert project.sentences([2])[0].is_title and project.sentences([2])[0].text == "Evening falls"
