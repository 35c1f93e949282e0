"""Lexicon suggestions: contractions with either apostrophe are words, not names to check
(issue 31, items 7 and 8: a 19th-century novel's "I’ve", "I’m" were listed as proper nouns)."""

from __future__ import annotations

from studio.core.lexicon import Lexicon
from studio.text.lexicon_report import report_for_sentences


def _suggested(sentences: list[str]) -> set[str]:
    report = report_for_sentences([(s, "en") for s in sentences], Lexicon())
    return {u.word for u in report.suggestions}


def test_contractions_with_either_apostrophe_are_not_suggested() -> None:
    sentences = [
        "“I’ve seen him,” said Queequeg, “and I’m sure.”",
        "Then Starbuck said, “Don’t lower, we’ll wait, they’re near, you’d see, I'll go, I'd stay.”",
        "And Ahab’s leg was ivory.",
    ]
    suggested = _suggested(sentences)
    assert {"Queequeg", "Starbuck", "Ahab"} <= suggested
    assert not {w for w in suggested if "'" in w or "’" in w}, suggested


def test_a_word_in_capitals_that_is_a_word_is_still_listed_only_once_as_itself() -> None:
    assert "Nantucket" in _suggested(["He sailed from Nantucket.", "Then he wrote: I’d rather not."])


def test_words_in_capitals_are_suggested_only_when_spelled_or_unknown() -> None:
    suggested = _suggested(['"BLOODY BATTLE IN AFFGHANISTAN."', "The FBI came."])
    assert {"AFFGHANISTAN", "FBI"} <= suggested
    assert not {"BLOODY", "BATTLE"} & suggested
