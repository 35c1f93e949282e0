"""The project's lexicon: real SQLite, the schema step, cache keys, the command line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.render import para

from studio.cli import main
from studio.core.errors import ProjectError
from studio.core.lexicon import LexiconEntry
from studio.core.types import Book, Chapter
from studio.engine.voice.catalog import get_voice
from studio.project.opening import new_project_settings, open_project
from studio.project.store import Project
from studio.project.lexicon import USER_LEXICON_ENV
from studio.project.schema import SCHEMA_VERSION
from studio.text.formats.pls import read_pls_file, write_pls_file

SENTENCES = ("Mr Nguyen came home.", "The river was cold.", "Nguyen smiled at the river.", "Birds sang.")


def book() -> Book:
    return Book("Lexicon Book", "A. Author", "en",
                (Chapter("One", (para(*SENTENCES[:2]), para(*SENTENCES[2:]))),), source="memory")


@pytest.fixture(autouse=True)
def user_lexicon_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own (absent) user lexicon, never the real one."""
    path = tmp_path / "user" / "lexicon.pls"
    monkeypatch.setenv(USER_LEXICON_ENV, str(path))
    return path


@pytest.fixture
def project(tmp_path: Path):
    proj = Project.create(tmp_path / "p", book(), new_project_settings(get_voice(None)))
    yield proj
    proj.close()


def keys(project: Project) -> dict[str, str]:
    return {r.text: r.expected_key for r in project.sentences() if not r.is_title}


def test_an_entry_changes_the_keys_of_exactly_the_sentences_containing_it(project: Project) -> None:
    before = keys(project)
    project.lexicon.add([LexiconEntry("Nguyen", "alias", "Win")])
    after = keys(project)
    changed = {t for t in before if before[t] != after[t]}
    assert changed == {"Mr Nguyen came home.", "Nguyen smiled at the river."}
    rows = {r.text: r for r in project.sentences()}
    assert [e.grapheme for e in rows["Mr Nguyen came home."].lexicon.entries] == ["Nguyen"]
    assert not rows["Birds sang."].lexicon

    project.lexicon.add([LexiconEntry("river", "phoneme", "ɹˈɪvɚ")])
    again = keys(project)
    assert {t for t in after if after[t] != again[t]} == {"The river was cold.", "Nguyen smiled at the river."}

    project.lexicon.add([LexiconEntry("NGUYEN", "alias", "Nwen")])  # same word, edited: replaces it
    edited = keys(project)
    assert {t for t in again if again[t] != edited[t]} == {"Mr Nguyen came home.", "Nguyen smiled at the river."}
    assert len(project.lexicon.entries()) == 2

    project.lexicon.remove("nguyen")
    project.lexicon.remove("river")
    assert keys(project) == before  # no entry left: the original keys (and audio) again
    with pytest.raises(ProjectError):
        project.lexicon.remove("river")


def test_user_lexicon_is_inherited_and_the_project_overrides_it(project: Project, user_lexicon_file: Path) -> None:
    before = keys(project)
    user_lexicon_file.parent.mkdir(parents=True)
    write_pls_file(user_lexicon_file, [LexiconEntry("Nguyen", "alias", "Win"), LexiconEntry("Birds", "alias", "Words")])
    inherited = keys(project)
    assert {t for t in before if before[t] != inherited[t]} == {
        "Mr Nguyen came home.", "Nguyen smiled at the river.", "Birds sang."}
    project.lexicon.add([LexiconEntry("Nguyen", "alias", "Nwen")])
    rows = {r.text: r for r in project.sentences()}
    assert rows["Mr Nguyen came home."].lexicon.entries[0].value == "Nwen"
    assert rows["Birds sang."].expected_key == inherited["Birds sang."]


def test_entries_persist_and_a_version_1_project_is_migrated(project: Project, tmp_path: Path) -> None:
    project.close()
    conn = sqlite3.connect(tmp_path / "p" / "project.sqlite")
    conn.execute("DROP TABLE lexicon_entries")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Project.open(tmp_path / "p") as proj:
        assert proj.db.read().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2
        proj.lexicon.add([LexiconEntry("Nguyen", "alias", "Win", language="en")], source="test")
    with Project.open(tmp_path / "p") as proj:
        (entry,) = proj.lexicon.entries().entries
        assert (entry.grapheme, entry.value, entry.language) == ("Nguyen", "Win", "en")
        assert list(proj.lexicon.sources().values()) == ["test"]


def test_cli_add_list_remove_export_import(project: Project, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = str(project.folder)
    project.close()
    assert main(["lexicon", "add", folder, "Nguyen", "--say", "Win"]) == 0
    assert "2 sentence(s) will render again" in capsys.readouterr().out
    assert main(["lexicon", "add", folder, "river", "--ipa", "ɹˈɪvɚ", "--exact-case"]) == 0
    assert main(["lexicon", "add", folder, "river", "--ipa", "rɪv§"]) == 2
    err = capsys.readouterr().err
    assert "'§'" in err and "no phoneme" in err
    assert main(["lexicon", "list", folder, "--suggest"]) == 0
    out = capsys.readouterr().out
    assert "Nguyen" in out and "respell" in out and "ɹˈɪvɚ" in out and "2 entries" in out

    pls = tmp_path / "out.pls"
    assert main(["lexicon", "export", folder, str(pls)]) == 0
    exported = read_pls_file(pls).entries
    assert {(e.grapheme, e.value, e.case_sensitive) for e in exported} == {("Nguyen", "Win", False), ("river", "ɹˈɪvɚ", True)}
    assert main(["lexicon", "remove", folder, "Nguyen"]) == 0
    assert "removed 1 entry" in capsys.readouterr().out
    assert main(["lexicon", "import", folder, str(pls)]) == 0
    assert "imported 2 entries" in capsys.readouterr().out
    with Project.open(folder) as proj:
        assert {e.grapheme for e in proj.lexicon.entries().entries} == {"Nguyen", "river"}
    assert main(["lexicon", "remove", folder, "nobody"]) == 2
    assert main(["lexicon", "list"]) == 2  # neither a project nor --user


def test_cli_user_lexicon(user_lexicon_file: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["lexicon", "add", "--user", "Nguyen", "--say", "Win", "--language", "en"]) == 0
    assert user_lexicon_file.is_file()
    assert main(["lexicon", "list", "--user"]) == 0
    assert "Nguyen" in capsys.readouterr().out
    assert main(["lexicon", "remove", "--user", "nguyen"]) == 0
    assert read_pls_file(user_lexicon_file).entries == []


def test_epub_manuscript_brings_its_pronunciations(shared_epubs: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    epub = shared_epubs / "georgia-pls-ssml.epub"
    opened = open_project(epub, folder=tmp_path / "g")
    with opened.project as proj:
        entries = {e.grapheme: e for e in proj.lexicon.entries().entries}
        assert entries["Altamaha"].value == "ˈɔltəməˌhɔ" and entries["N."].value == "nɔrθ"
        assert set(proj.lexicon.sources().values()) == {"epub"}
        rows = [r for r in proj.sentences() if "Savannah" in r.text]
        assert rows and all(any(e.grapheme == "Savannah" for e in r.lexicon.entries) for r in rows)
    assert main(["inspect", str(epub), "--words", "5"]) == 0
    out = capsys.readouterr().out
    assert "words with lexicon entries" in out and "Savannah" in out
    assert "words the voice will likely guess" in out
