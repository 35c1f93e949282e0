"""Dialogue found and speakers attributed (studio.text.dialogue, studio.text.attribution)."""

from __future__ import annotations

from studio.text.attribution import Aliases, attribute, nearest_name
from studio.text.people import cast_list
from studio.text.dialogue import split_dialogue


def pieces(paragraphs: list[str]) -> list[list[str]]:
    return [[("Q:" if s.quoted else "N:") + p[s.start:s.end] for s in spans]
            for p, spans in zip(paragraphs, split_dialogue(paragraphs))]


def test_quote_narration_quote_inside_one_sentence() -> None:
    assert pieces(["‘Halloa,’ says I, ‘what’s the matter now?’"]) == [
        ["Q:‘Halloa,’", "N: says I, ", "Q:‘what’s the matter now?’"]]


def test_apostrophes_are_not_quotes() -> None:
    assert pieces(["He went 'round the corner, the sailors' boots wet, the dogs' tails wagging."]) == [
        ["N:He went 'round the corner, the sailors' boots wet, the dogs' tails wagging."]]
    assert pieces(["The sailors’ boots were wet. ‘’Bout time,’ he said."])[0] == [
        "N:The sailors’ boots were wet. ", "Q:‘’Bout time,’", "N: he said."]


def test_nested_quote_stays_in_the_outer_line() -> None:
    assert pieces(["“I told you, ‘no’,” she cried, “and there’s an end.”"])[0] == [
        "Q:“I told you, ‘no’,”", "N: she cried, ", "Q:“and there’s an end.”"]


def test_straight_quotes_and_a_speech_over_two_paragraphs() -> None:
    paras = ['"Well," said Holmes, "it is a case of some interest.', '"Go on," he added.', "Then he left."]
    spans = split_dialogue(paras)
    assert [s.continued for s in spans[1] if s.quoted] == [True]
    assert not any(s.quoted for s in spans[2])


def test_dash_dialogue_and_guillemets() -> None:
    out = pieces(["— Vous retardez, dit Mr. Fogg.", "—Hola —dijo él—. ¿Cómo estás?",
                  "« Bonjour, » dit-elle."])
    assert out[0] == ["Q:— Vous retardez,", "N: dit Mr. Fogg."]
    assert out[1] == ["Q:—Hola ", "N:—dijo él", "Q:—. ¿Cómo estás?"]
    assert out[2] == ["Q:« Bonjour, »", "N: dit-elle."]


def test_every_character_is_in_exactly_one_span() -> None:
    paras = ["‘A,’ b ‘c’ d “e ‘f’ g” h", "— i, dit-il, j", "'k"]
    for text, spans in zip(paras, split_dialogue(paras)):
        assert "".join(text[s.start:s.end] for s in spans) == text
        assert all(a.end == b.start for a, b in zip(spans, spans[1:]))


BENNETS = [
    "“My dear Mr. Bennet,” said his lady to him one day, “have you heard that Netherfield Park is let?”",
    "Mr. Bennet replied that he had not.",
    "“But it is,” returned she; “for Mrs. Long has just been here.”",
    "“What is his name?”",
    "“Bingley.”",
    "“Is he married or single?”",
    "“They have none of them much to recommend them,” replied he.",
]


def test_verbs_pronouns_and_turns() -> None:
    lines = attribute(BENNETS)
    who = [(ln.paragraph, ln.speaker, ln.how) for ln in lines]
    assert who[0] == (0, "his lady", "verb+name")
    assert who[2] == (2, "his lady", "verb+pronoun")  # "she": the last woman who spoke
    assert [w[1] for w in who[4:7]] == ["Mr. Bennet", "his lady", "Mr. Bennet"]  # turns, from the name addressed
    assert who[-1][1:] == ("Mr. Bennet", "verb+pronoun")
    assert all(0 < ln.confidence <= 1 for ln in lines)


def test_unknown_speaker_stays_unattributed_and_cast_merges_aliases() -> None:
    lines = attribute(["It was late.", "“Who is there?”", "The wind rose again over the moor and the house."])
    assert [(ln.speaker, ln.how, ln.confidence) for ln in lines] == [("", "unattributed", 0.0)]
    lines = attribute(BENNETS, Aliases([["Mrs. Bennet", "his lady"]]))
    cast = cast_list(lines)
    assert cast[0].name == "Mrs. Bennet" and cast[0].lines == 5  # two lines in each of two paragraphs, and "Bingley."
    assert cast[0].first_line.startswith("My dear Mr. Bennet")
    assert nearest_name(BENNETS)[2] == "Mr. Bennet"  # the baseline: the name nearest in the narration
