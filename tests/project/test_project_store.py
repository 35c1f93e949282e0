"""The project store on real SQLite files: round trip, WAL, schema guard, keys."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from studio.core.errors import ProjectError
from studio.engine.base import SynthesisSettings
from studio.project.settings import ProjectSettings
from studio.project.store import Project
from studio.project.schema import SCHEMA_VERSION
from support.render import make_book, para

VOICE = "en_US-joe-medium"


@pytest.fixture
def project(tmp_path: Path):
    proj = Project.create(tmp_path / "p", make_book(), ProjectSettings(VOICE), source_hash="abc")
    yield proj
    proj.close()


def test_round_trip_book_settings_and_source(tmp_path: Path) -> None:
    book = make_book()
    settings = ProjectSettings(
        VOICE, synthesis=SynthesisSettings(noise_scale=0.5, length_scale=1.1), output_sample_rate=44100,
        language_voices={"fr": "fr_FR-siwis-medium"},
    )
    Project.create(tmp_path / "p", book, settings, source_hash="abc").close()
    with Project.open(tmp_path / "p") as proj:
        again = proj.book()
        assert again == book
        assert again.metadata == {"k": "v"} and again.source == "memory"
        assert proj.settings() == settings
        assert proj.settings().language_voices == {"fr": "fr_FR-siwis-medium"}
        assert proj.source() == ("memory", "abc")
        assert proj.voice_for("fr") == "fr_FR-siwis-medium" and proj.voice_for("de") == VOICE


def test_titles_are_spoken_first_and_everything_starts_pending(project: Project) -> None:
    rows = project.pending()
    assert [r.text for r in rows[:3]] == ["Morning", "The sun came up.", "Birds sang."]
    assert rows[0].is_title and rows[0].chapter == 0 and rows[0].paragraph is None
    assert [r.order for r in rows] == sorted(r.order for r in rows)
    assert project.counts() == {"pending": 10, "rendering": 0, "done": 0, "failed": 0}
    assert len(project.pending([1])) == 5
    assert [c.sentences for c in project.chapters()] == [5, 5]


def test_wal_foreign_keys_and_user_version(project: Project) -> None:
    conn = sqlite3.connect(project.db_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()
    assert project.db.read().execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_newer_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    Project.create(tmp_path / "p", make_book(), ProjectSettings(VOICE)).close()
    conn = sqlite3.connect(tmp_path / "p" / "project.sqlite")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(ProjectError, match="newer version of studio"):
        Project.open(tmp_path / "p")


def test_not_a_project_and_damaged_files(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="not a studio project"):
        Project.open(tmp_path)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "project.sqlite").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(ProjectError):
        Project.open(tmp_path / "junk")
    other = tmp_path / "other"
    other.mkdir()
    conn = sqlite3.connect(other / "project.sqlite")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(ProjectError, match="not a studio project"):
        Project.open(other)


def test_create_refuses_existing_project(project: Project) -> None:
    with pytest.raises(ProjectError, match="already holds a project"):
        Project.create(project.folder, make_book(), ProjectSettings(VOICE))


def test_override_changes_only_that_paragraphs_keys(project: Project) -> None:
    before = {r.id: r.expected_key for r in project.sentences()}
    project.set_language_override(1, 1, "fr_FR")
    book = project.book()
    changed_para = book.chapters[1].paragraphs[1]
    assert changed_para.language_override == "fr" and {s.language for s in changed_para.sentences} == {"fr"}
    after = {r.id: r for r in project.sentences()}
    changed = {i for i in before if before[i] != after[i].expected_key}
    assert {after[i].text for i in changed} == {"Stars came out.", "We slept."}
    project.set_language_override(1, 1, None)
    assert {r.id: r.expected_key for r in project.sentences()} == before
    with pytest.raises(ProjectError):
        project.set_language_override(1, 9, "fr")
    with pytest.raises(ProjectError):
        project.set_language_override(0, 0, "???")


def test_edit_changes_only_that_sentences_key(project: Project) -> None:
    before = {r.id: r.expected_key for r in project.sentences()}
    target = next(r for r in project.sentences() if r.text == "Tea was hot.")
    project.edit_sentence(target.id, "  Tea was   very hot. ")
    after = {r.id: r.expected_key for r in project.sentences()}
    assert {i for i in before if before[i] != after[i]} == {target.id}
    paragraph = project.book().chapters[0].paragraphs[1]
    assert paragraph.text == "Tea was very hot. We sat."
    assert "".join(s.text + s.trailing for s in paragraph.sentences) == paragraph.text
    with pytest.raises(ProjectError):
        project.edit_sentence(target.id, "   ")
    with pytest.raises(ProjectError):
        project.edit_sentence(99999, "x")


def test_settings_change_changes_every_key(project: Project) -> None:
    before = {r.id: r.expected_key for r in project.sentences()}
    project.update_settings(project.settings().with_changes(synthesis=SynthesisSettings(length_scale=1.2)))
    after = {r.id: r.expected_key for r in project.sentences()}
    assert all(before[i] != after[i] for i in before)
    project.set_voice_fingerprint(VOICE, "f" * 64)
    assert all(after[r.id] != r.expected_key for r in project.sentences())


def test_replace_book_keeps_overrides_and_edits(project: Project) -> None:
    project.set_language_override(0, 0, "de")
    target = next(r for r in project.sentences() if r.text == "We sat.")
    project.edit_sentence(target.id, "We sat down.")
    book = make_book()
    new_chapters = (book.chapters[0], book.chapters[1].__class__("Night", (para("New text here."),)))
    project.replace_book(book.__class__(book.title, book.author, "en", new_chapters), source_hash="new")
    again = project.book()
    assert again.chapters[0].paragraphs[0].language_override == "de"
    assert again.chapters[0].paragraphs[1].text == "Tea was hot. We sat down."
    assert [c.title for c in again.chapters] == ["Morning", "Night"]
    assert project.source()[1] == "new"


def test_one_writer_thread_and_reader_threads(project: Project) -> None:
    rows = project.sentences()
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                counts = project.counts()
                assert sum(counts.values()) == len(rows)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def writer() -> None:
        try:
            for row in rows:
                project.mark_failed(row.id, "test")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in readers:
        t.start()
    w = threading.Thread(target=writer)
    w.start()
    w.join()
    stop.set()
    for t in readers:
        t.join()
    assert not errors
    assert project.counts()["failed"] == len(rows)


def test_older_schema_is_migrated_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The upgrade path: a project at the current version opened by code that knows
    one more version runs the step once, atomically, and records the new version."""
    from studio.project import schema

    Project.create(tmp_path / "p", make_book(), ProjectSettings(VOICE)).close()
    steps = []

    def add_column(conn: sqlite3.Connection) -> None:
        steps.append(1)
        conn.execute("ALTER TABLE sentences ADD COLUMN loudness REAL")

    monkeypatch.setattr(schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setitem(schema.MIGRATIONS, SCHEMA_VERSION, add_column)
    with Project.open(tmp_path / "p") as proj:
        assert proj.book() == make_book()
        cols = [r[1] for r in proj.db.read().execute("PRAGMA table_info(sentences)")]
        assert "loudness" in cols
        assert proj.db.read().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    with Project.open(tmp_path / "p"):
        pass
    assert steps == [1]


def test_interrupted_rows_go_back_to_pending(project: Project) -> None:
    ids = [r.id for r in project.sentences()[:2]]
    project.mark_rendering(ids)
    assert project.counts()["rendering"] == 2
    assert project.reset_interrupted() == 2
    assert project.counts()["pending"] == 10
