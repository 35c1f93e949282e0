"""One person, one character: titles and descriptors tied to a name, the first-person narrator
named, things never speakers, speeches in turn and a quote left open, on short real-world-like texts."""

from __future__ import annotations

import json
from pathlib import Path

from studio.cli import main
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.engine.voice.catalog import get_voice
from studio.text.attribution import STRANGER, attribute
from studio.text.dialogue import split_dialogue
from studio.text.people import THE_NARRATOR, find_people, is_thing


def speakers(paragraphs: list[str]) -> list[str]:
    lines = attribute(paragraphs)
    return [line.speaker for line in find_people(lines, paragraphs).apply(lines)]


def test_a_descriptor_set_beside_a_name_is_that_person() -> None:
    book = [
        "Ahab hailed the stranger ship, and her captain came to the rail: Boomer, the one-armed captain, "
        "a burly man with a whalebone arm.",
        '"Hast seen the White Whale?" cried Captain Ahab.',
        '"See you this?" said the one-armed captain, holding up his arm.',
        '"Where was it?" asked Ahab.',
        '"On the Line, last season," replied the one-armed commander.',
        '"Mr. Stubb, lower away," said Ahab. "Aye, sir," said Mr. Stubb.',
        '"I go," Stubb said.',
    ]
    said = speakers(book)
    assert said == ["Ahab", "Boomer", "Ahab", "Boomer", "Ahab", "Mr. Stubb", "Mr. Stubb"]
    people = find_people(attribute(book), book)
    boomer = people.person("Boomer")
    assert boomer is not None and set(boomer.descriptors) == {"the one-armed captain", "the one-armed commander"}
    assert people.person("Ahab").names == ("Captain Ahab",)


def test_mr_and_mrs_of_one_name_stay_two_people() -> None:
    book = ['"My dear," said Mrs. Bennet, "have you heard?"', '"I have not," said Mr. Bennet.',
            '"Then listen," said Mrs. Bennet.']
    assert speakers(book) == ["Mrs. Bennet", "Mrs. Bennet", "Mr. Bennet", "Mrs. Bennet"]


def test_the_first_person_narrator_is_named_as_the_book_names_them() -> None:
    named = ["My father's name being Pirrip, I called myself Pip, and came to be called Pip.",
             '"Tell us your name!" said the man.', '"Pip, sir," said I.', '"Once more," said the man.',
             '"Pip. Pip, sir."']
    assert speakers(named) == ["the man", "Pip", "the man", "Pip"]
    unnamed = ['"Is this the ship?" said I.', '"It is," said the mate.', '"Then I will go aboard."']
    assert speakers(unnamed) == [THE_NARRATOR, "the mate", THE_NARRATOR]


def test_a_scene_of_speeches_in_turn_is_never_all_left_to_the_narrator() -> None:
    scene = [
        "I came upon a strange sort of a tent, pitched behind the main-mast.",
        '"Is this the Captain of the Pequod?" said I.',
        '"Supposing it be, what dost thou want of him?" he demanded.',
        '"I was thinking of shipping."',
        '"Thou wast, wast thou? Ever been in a stove boat?"',
        '"No, Sir, I never have."',
        "I protested my innocence of these things.",
        '"But what takes thee a-whaling?"',
        '"I want to see the world."',
        '"Thou art speaking to Captain Peleg, that\'s who ye are speaking to, young man."',
        "Stubb came up the side, grinning.",
        '"A fine day for it."',
    ]
    said = speakers(scene)
    assert said == ["the narrator", "Captain Peleg", "the narrator", "Captain Peleg", "the narrator",
                    "Captain Peleg", "the narrator", "Captain Peleg", "Stubb"]
    assert STRANGER not in said


def test_a_quote_left_open_at_a_paragraphs_end_is_told_apart_by_what_follows() -> None:
    runs_on = ['"It was a long voyage," said Stubb. "We sailed round the Horn, and the gales',
               '"were the worst I ever saw."']
    assert speakers(runs_on) == ["Stubb", "Stubb", "Stubb"]
    slip = ['"Come here," said Stubb. "I have something to tell you', '"What is it?" asked Flask.']
    assert speakers(slip) == ["Stubb", "Stubb", "Flask"]
    answered = ['"Come here," said Stubb to Flask.', '"Why?" asked Flask. "Who is on deck?',
                '"Nobody at all."']
    assert speakers(answered)[-1] == "Stubb"


def test_a_straight_quote_after_a_dash_closes_the_quote() -> None:
    text = '"I was going to say\u2014"\u2014but Stubb cut him short. "Enough!"'
    spans = split_dialogue([text])[0]
    assert [text[s.start:s.end] for s in spans if s.quoted] == ['"I was going to say\u2014"', '"Enough!"']


def test_things_are_never_speakers() -> None:
    assert is_thing("the lighted tomahawk") and is_thing("his tone") and is_thing("CROW'S-NESTS")
    assert not is_thing("the old man") and not is_thing("Stubb")
    book = ['"Whizz!" said the wheels inside the box.', '"Hark!" said the old man.',
            '"Dam-me!" the lighted tomahawk growled in the dark.',
            'Stubb stood by the mast.', '"Halloa!" and then in a lower tone he said, "what now?"']
    assert speakers(book) == ["", "the old man", "", "Stubb", "Stubb"]  # not "his tone he"


def test_studio_cast_json_shows_each_characters_names_and_descriptors(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    ms = tmp_path / "pequod.md"
    ms.write_text("# Leg and Arm\n\nAhab hailed the ship. Boomer, the one-armed captain, came to the rail.\n\n"
                  '"Hast seen the White Whale?" cried Captain Ahab.\n\n"Speak!" said Ahab.\n\n'
                  '"See you this?" said the one-armed captain.\n\n"Where?" asked Ahab.\n\n'
                  '"On the Line," replied Boomer.\n', encoding="utf-8")
    folder = open_for_manuscript(ms, tmp_path / "pequod.studio", new_project_settings(get_voice(None))).project.folder
    assert main(["cast", str(folder), "--json"]) == 0
    data = {c["name"]: c for c in json.loads(capsys.readouterr().out)["characters"]}
    assert data["Ahab"]["names"] == ["Captain Ahab"] and data["Ahab"]["lines"] == 3
    assert data["Boomer"]["descriptors"] == ["the one-armed captain"] and data["Boomer"]["lines"] == 2
    assert main(["cast", str(folder), "--split", "the one-armed captain", "--json"]) == 0  # a wrong tie parted
    data = {c["name"]: c for c in json.loads(capsys.readouterr().out)["characters"]}
    assert data["Boomer"]["lines"] == 1 and data["the one-armed captain"]["lines"] == 1


def test_speeches_printed_as_a_play_go_to_the_named_speakers() -> None:
    scene = ["Midnight, the forecastle.", "FRENCH SAILOR.",
             "Hist, boys! let's have a jig or two before we ride to anchor in Blanket Bay.",
             "SICILIAN SAILOR. Ay, ay, and the lads shall dance!", "(They dance.)", "STUBB.",
             "Aye, aye, a jolly time!", '"Who goes there?" said Stubb.',
             "CHAPTER II.", "It was a dark night.", "II. The Rabbi.", "OK. Then it rained."]
    lines = attribute(scene)
    assert [(line.paragraph, line.speaker) for line in lines] == [
        (2, "French Sailor"), (3, "Sicilian Sailor"), (6, "Stubb"), (7, "Stubb")]
    assert lines[1].text == "Ay, ay, and the lads shall dance!"  # the name is the narrator's to read
