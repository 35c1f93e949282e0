"""Round three of the cast: every line's evidence and whether it is sure, the review list and a
choice made from it (kept, undone), people not names -- on real text through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cast import cast_project

from studio.cli import main
from studio.project.store import Project
from studio.text.attribution import Line, attribute
from studio.text.people import find_people


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def book_lines(*chapters: list[str]) -> list:
    lines, paragraphs = [], []
    for chapter in chapters:
        lines += attribute(chapter)
        paragraphs += chapter
    return find_people(lines, paragraphs).apply(lines)


def test_a_thing_named_beside_a_quote_never_speaks() -> None:
    chapter = ["The old plane lay on the bench by the stove.",
               '"Wait a bit," said the landlord. "I\'ll make ye snug enough."',
               "The plane came bump against a knot in the board.",
               '"There, that will do."',
               'Then the lighted tomahawk began flourishing about me. "Who-e debel you?" growled the tomahawk.']
    said = [(line.text, line.speaker) for line in book_lines(chapter)]
    assert all(who not in ("the plane", "the bench", "the stove", "the tomahawk", "the lighted tomahawk")
               for _text, who in said)
    assert said[0] == ("Wait a bit,", "the landlord")


def test_the_gardener_capitalised_or_not_is_one_character_and_the_narrator_is_not_also_called_i() -> None:
    first = ['"The roses are out," said the Gardener.', '"So they are," said Anne.',
             '"And the lilies next week," said the gardener.']
    second = ['"Good morning, Gardener," said Anne.', '"Good morning, miss," said the gardener.',
              'I walked down to the harbour. "Who are you?" I asked.']
    lines = book_lines(first, second)
    assert {line.speaker for line in lines} == {"the Gardener", "Anne", "the narrator"}
    people = find_people([line for c in (first, second) for line in attribute(c)], first + second)
    narrator = people.person("the narrator")
    assert narrator is not None and "I" not in narrator.names
    assert people.person("the Gardener").descriptors == ()  # its lower-case form is no other name
    # a word addressed ("Landlord, ...") that the turns made a speaker is the landlord
    lines = [Line(0, 0, 9, "Landlord,", "Landlord", 0.6, "alternation"),
             Line(1, 0, 9, "Good night", "the landlord", 0.95, "verb+name")]
    assert {line.speaker for line in find_people(lines, ["", ""]).apply(lines)} == {"the landlord"}


def test_an_untagged_speech_in_a_two_person_exchange_goes_by_turns_and_is_not_sure() -> None:
    chapter = ['"Is it far to the lighthouse?" asked Mary.', '"An hour\'s walk," said Tom.',
               '"Then I will come with you."', '"Bring the lamp, then."']
    lines = book_lines(chapter)
    assert [(line.speaker, line.evidence, line.sure) for line in lines] == [
        ("Mary", "tag", True), ("Tom", "tag", True), ("Mary", "turn", False), ("Tom", "turn", False)]
    assert lines[2].alternatives[:1] == ("Tom",)  # the review list's second candidate


def test_review_choose_and_undo_from_the_command_line(tmp_path: Path, capsys) -> None:
    folder = cast_project(tmp_path).folder
    review = run(capsys, "cast", str(folder), "--review")
    assert review.startswith("2 line(s) to review")  # a turn and a pronoun: neither is sure
    assert review.index("Then take the lamp") < review.index("I have it here")  # in reading order
    data = json.loads(run(capsys, "cast", str(folder), "--json"))
    line = next(x for x in data["lines"] if "Then take the lamp" in x["text"])
    assert (line["speaker"], line["speaker_sure"], line["speaker_evidence"], line["candidates"]) == (
        "Mary", False, "turn", ["Mary", "Tom"])
    assert [x["speaker_evidence"] for x in data["lines"] if not x["speaker_sure"]] == ["turn", "tag"]
    ref = line["line"]

    data = json.loads(run(capsys, "cast", str(folder), "--choose", f"{ref}=2", "--json"))
    line = next(x for x in data["lines"] if x["line"] == ref)
    assert (line["speaker"], line["speaker_sure"], line["speaker_evidence"]) == ("Tom", True, "chosen")
    assert run(capsys, "cast", str(folder), "--review").startswith("1 line(s) to review")
    run(capsys, "cast", str(folder), "--on")
    rows = json.loads(run(capsys, "inspect", str(folder), "--spoken", "--json"))
    said = {r["text"]: (r["speaker"], r["speaker_sure"], r["speaker_evidence"]) for r in rows}
    assert said['"Then take the lamp with you, Tom."'] == ("Tom", True, "chosen")
    assert said['"Where are you going at this hour?" asked Mary.'] == ("Mary", True, "tag")
    assert said["He went out, and the door closed behind him."] == ("", None, "")

    main(["cast", str(folder), "--undo"])  # the choice (turning casting on is no step of the history)
    assert "undone: choose Tom for the line" in capsys.readouterr().err
    with Project.open(folder) as project:
        back = next(x for x in project.cast.lines() if "Then take the lamp" in x.text)
        assert (back.speaker, back.sure) == ("Mary", False)
