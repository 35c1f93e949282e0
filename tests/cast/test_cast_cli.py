"""``studio cast``, ``studio inspect --spoken --json`` and ``studio render --cast``, run in-process for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cast import cast_project

from studio.cli import main
from studio.cli.cast import parse_set
from studio.core.errors import StudioError
from studio.project.cast import Casting, Performance
from studio.project.store import Project


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_set_specs_are_read_and_refused() -> None:
    assert parse_set("Tom=narrator,pitch=+2,pace=0.95") == ("Tom", Casting("", None, Performance(2.0, 0.95, 1.0)))
    assert parse_set("Captain Ahab=en_US-duo-medium:1") == ("Captain Ahab", Casting("en_US-duo-medium", 1))
    assert parse_set("Mary=pitch=3") == ("Mary", Casting(performance=Performance(pitch=3.0)))
    # voice ids hold colons (kokoro:jf_alpha): a speaker is the number after the last one
    assert parse_set("Anna=kokoro:jf_alpha") == ("Anna", Casting("kokoro:jf_alpha", None))
    assert parse_set("Anna=kokoro:jf_alpha:0,pace=0.9") == ("Anna", Casting("kokoro:jf_alpha", 0, Performance(pace=0.9)))
    for bad in ("Tom", "Tom=narrator,loudness=2", "Tom=,pitch=high"):
        with pytest.raises(StudioError):
            parse_set(bad)


def test_cast_lists_sets_merges_corrects_and_render_cast_speaks_it(tmp_path: Path, capsys) -> None:
    folder = cast_project(tmp_path).folder
    listing = run(capsys, "cast", str(folder))
    assert listing.startswith("casting is off; 2 character(s), 0 unattributed line(s)")
    data = json.loads(run(capsys, "cast", str(folder), "--set", "Mary=narrator,pitch=+3", "--merge", "Tom,Thomas",
                          "--line", "1:5:1=Mary", "--json"))
    assert data["casting"] is False
    assert {c["name"]: (c["lines"], c["pitch"]) for c in data["characters"]} == {"Mary": (3, 3.0), "Tom": (2, 0.0)}
    assert main(["cast", str(folder), "--line", "9:9:9=Tom"]) == 2
    assert "there is no sentence 9 in paragraph 9 of chapter 9" in capsys.readouterr().err
    assert main(["cast", str(folder), "--set", "Tom=en_US-nobody-medium"]) == 2
    assert "unknown voice 'en_US-nobody-medium'" in capsys.readouterr().err
    assert main(["cast", str(folder), "--set", "Tom=en_US-joe-medium:3"]) == 2
    assert "has 1 speaker(s)" in capsys.readouterr().err
    rows = json.loads(run(capsys, "inspect", str(folder), "--spoken", "--json"))
    assert all("speaker" in r and "voice" in r for r in rows)
    assert {r["speaker"] for r in rows} == {""}  # casting still off: the narrator reads everything

    run(capsys, "render", str(folder), "-o", str(tmp_path / "out"), "--format", "wav", "--cast")
    with Project.open(folder) as project:
        assert project.cast.enabled()
        assert all(r.state == "done" for r in project.sentences())
    rows = json.loads(run(capsys, "inspect", str(folder), "--spoken", "--json"))
    said = {r["text"]: (r["speaker"], r["voice"]) for r in rows}
    assert said['"I have it here," he said.'] == ("Mary", "en_US-joe-medium, pitch +3 + en_US-joe-medium")
    assert said['"I will be back before the morning comes."'] == ("Tom", "en_US-joe-medium")
    assert said["He went out, and the door closed behind him."] == ("", "en_US-joe-medium")
    assert list((tmp_path / "out").glob("*.wav"))

    # a whole paragraph in a character's voice (a letter read by its writer), then back to the narrator
    run(capsys, "cast", str(folder), "--paragraph", "1:6=Tom")
    said = {r["text"]: r["speaker"] for r in json.loads(run(capsys, "inspect", str(folder), "--spoken", "--json"))}
    assert said["He went out, and the door closed behind him."] == "Tom"
    run(capsys, "cast", str(folder), "--chapter", "1=narrator")
    said = {r["text"]: r["speaker"] for r in json.loads(run(capsys, "inspect", str(folder), "--spoken", "--json"))}
    assert set(said.values()) == {""}


def test_rename_keeps_the_voice_and_survives_a_reimport(tmp_path: Path, capsys) -> None:
    from studio.text.importer import load_manuscript

    folder = cast_project(tmp_path).folder
    before = {c["name"]: c["lines"] for c in json.loads(run(capsys, "cast", str(folder), "--json"))["characters"]}
    data = json.loads(run(capsys, "cast", str(folder), "--set", "Tom=narrator,pitch=-2", "--rename", "Tom=Thomas Hale",
                          "--json"))
    got = {c["name"]: (c["lines"], c["pitch"]) for c in data["characters"]}
    assert got == {"Thomas Hale": (before["Tom"], -2.0), "Mary": (before["Mary"], 0.0)}
    assert main(["cast", str(folder), "--rename", "Thomas Hale=Mary"]) == 2  # a name another character has
    assert "'Mary' is already a character" in capsys.readouterr().err

    manuscript = tmp_path / "harbour.md"  # the book imported again, one narration line changed
    manuscript.write_text(manuscript.read_text(encoding="utf-8").replace("the door closed", "the door shut"),
                          encoding="utf-8")
    with Project.open(folder) as project:
        project.replace_book(load_manuscript(manuscript))
        project.cast.analyse()
    data = json.loads(run(capsys, "cast", str(folder), "--json"))
    got = {c["name"]: (c["lines"], c["pitch"]) for c in data["characters"]}
    assert got == {"Thomas Hale": (before["Tom"], -2.0), "Mary": (before["Mary"], 0.0)}

    data = json.loads(run(capsys, "cast", str(folder), "--rename", "Thomas Hale=Tom", "--json"))  # and back
    assert {c["name"]: (c["lines"], c["pitch"]) for c in data["characters"]} == {"Tom": (before["Tom"], -2.0),
                                                                                 "Mary": (before["Mary"], 0.0)}
