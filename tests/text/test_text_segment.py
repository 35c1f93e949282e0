"""Normalization and sentence segmentation: crafted cases and properties."""

from __future__ import annotations

import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studio.text.segment import (
    is_speakable,
    normalize_text,
    split_paragraphs,
    split_sentences,
    split_spans,
)


def sentences(text: str, cap: int = 500) -> list[str]:
    return [s.text for s in split_spans(normalize_text(text), max_chars=cap)]


def assert_lossless(text: str, cap: int) -> None:
    spans = split_spans(text, max_chars=cap)
    assert "".join(s.text + s.trailing for s in spans) == text
    for s in spans:
        assert s.text, "empty piece"
        assert len(s.text) <= cap
        assert s.text == s.text.strip(" ")
        assert s.trailing in ("", " ")


# --- normalization -------------------------------------------------------------


def test_normalize_whitespace_controls_and_nfc() -> None:
    assert normalize_text("  Hello,\t\n  world!  ") == "Hello, world!"
    assert normalize_text("a\u00a0\u202f\u2003b") == "a b"
    assert normalize_text("bell\x07 and\x00 nul") == "bell and nul"
    assert normalize_text("\ufeffsoft\u00adhyphen") == "softhyphen"
    # a control between a letter and its combining accent must not stop composition
    assert normalize_text("e\x00\u0301") == "\u00e9"
    assert normalize_text("\x01\x02") == ""


def test_split_paragraphs_on_blank_lines() -> None:
    text = "First line\nstill first.\n\n  \nSecond   one.\r\n\r\nThird\u2029Fourth"
    assert split_paragraphs(text) == ["First line still first.", "Second one.", "Third", "Fourth"]


def test_is_speakable() -> None:
    assert is_speakable("42")
    assert is_speakable("\u05e9\u05dc\u05d5\u05dd")
    assert not is_speakable("... !!! ?")
    assert not is_speakable("\U0001f600\U0001f44d")


# --- crafted sentence cases ------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ('"Stop!" he said. Then he ran.', ['"Stop!" he said.', "Then he ran."]),
        ('"Stop!" He ran.', ['"Stop!"', "He ran."]),
        ('She whispered, "Go." Then silence.', ['She whispered, "Go."', "Then silence."]),
        ("Mr. Smith met Dr. Jones and Mrs. Lee on St. Mark's day.", ["Mr. Smith met Dr. Jones and Mrs. Lee on St. Mark's day."]),
        ("Fruit, e.g. apples, i.e. red ones, vs. pears.", ["Fruit, e.g. apples, i.e. red ones, vs. pears."]),
        ("We met at 5 p.m. Then we left.", ["We met at 5 p.m.", "Then we left."]),
        ("We met at 5 p.m. and left.", ["We met at 5 p.m. and left."]),
        ("Apples, pears, etc. Then more.", ["Apples, pears, etc.", "Then more."]),
        ("J. R. R. Tolkien wrote it. It is long.", ["J. R. R. Tolkien wrote it.", "It is long."]),
        ("Pi is 3.14 today. It cost $2.50. That is 1,000 times.", ["Pi is 3.14 today.", "It cost $2.50.", "That is 1,000 times."]),
        ("He waited\u2026 Then nothing.", ["He waited\u2026", "Then nothing."]),
        ("I thought... maybe not. Wait... What?", ["I thought... maybe not.", "Wait...", "What?"]),
        ("Is it? Yes! No?! Sure.", ["Is it?", "Yes!", "No?!", "Sure."]),
        ("(He left.) She stayed.", ["(He left.)", "She stayed."]),
        ("See Vol. 3 and No. 5 first.", ["See Vol. 3 and No. 5 first."]),
        ("I said no. Then I left.", ["I said no.", "Then I left."]),
        ("Quoi ? Non ! Vraiment ; bon.", ["Quoi ?", "Non !", "Vraiment ; bon."]),
        ("\u00ab Viens ! \u00bb dit-elle. Puis elle partit.", ["\u00ab Viens ! \u00bb dit-elle.", "Puis elle partit."]),
        ("\u00ab Viens ! \u00bb Puis elle partit.", ["\u00ab Viens ! \u00bb", "Puis elle partit."]),
        ("\u4f60\u597d\u3002\u6211\u5f88\u597d\uff01", ["\u4f60\u597d\u3002", "\u6211\u5f88\u597d\uff01"]),
        ("\u0645\u0631\u062d\u0628\u0627 \u0628\u0643\u0645. \u0643\u064a\u0641 \u062d\u0627\u0644\u0643\u0645\u061f \u0623\u0646\u0627 \u0628\u062e\u064a\u0631.", ["\u0645\u0631\u062d\u0628\u0627 \u0628\u0643\u0645.", "\u0643\u064a\u0641 \u062d\u0627\u0644\u0643\u0645\u061f", "\u0623\u0646\u0627 \u0628\u062e\u064a\u0631."]),
        ("\u05e9\u05dc\u05d5\u05dd. \u05de\u05d4 \u05e9\u05dc\u05d5\u05de\u05da?", ["\u05e9\u05dc\u05d5\u05dd.", "\u05de\u05d4 \u05e9\u05dc\u05d5\u05de\u05da?"]),
        ("Wow \U0001f600. Great \U0001f44d\U0001f3fd! End.", ["Wow \U0001f600.", "Great \U0001f44d\U0001f3fd!", "End."]),
        ("No punctuation at all", ["No punctuation at all"]),
        ("...", ["..."]),
    ],
)
def test_sentence_cases(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected
    assert_lossless(normalize_text(text), 500)


def test_closing_quote_never_starts_a_sentence() -> None:
    text = normalize_text('"Stop!" he said. "Go!" She went. \u201cWhy?\u201d asked Tom. \u00ab Non ! \u00bb')
    for s in split_spans(text):
        assert not s.text.startswith(("\u201d", "\u00bb")), s.text


def test_sentence_language_is_copied() -> None:
    result = split_sentences("Un. Deux.", language="fr")
    assert [s.language for s in result] == ["fr", "fr"]


# --- the length cap ---------------------------------------------------------------


def test_long_sentence_split_at_clause_punctuation() -> None:
    clause = "the wind rose over the grey water and the gulls went quiet"
    text = "; ".join([clause] * 12) + "."
    spans = split_spans(text, max_chars=200)
    assert len(spans) > 1
    assert all(s.was_split for s in spans)
    assert all(s.text.endswith(";") for s in spans[:-1])
    assert_lossless(text, 200)


def test_long_sentence_without_clauses_split_at_spaces() -> None:
    text = " ".join(["word"] * 300) + "."
    spans = split_spans(text, max_chars=100)
    assert all(len(s.text) <= 100 and s.trailing == " " for s in spans[:-1])
    assert_lossless(text, 100)


def test_unbroken_text_hard_cut_without_splitting_accents() -> None:
    text = "x" * 99 + "a\u0301" + "y" * 150  # the cap falls right on the accent
    spans = split_spans(text, max_chars=100)
    assert_lossless(text, 100)
    assert not any(unicodedata.combining(s.text[0]) for s in spans)


def test_dash_is_a_clause_boundary() -> None:
    text = "a" * 60 + "\u2014" + "b" * 60
    spans = split_spans(text, max_chars=80)
    assert spans[0].text.endswith("\u2014") and spans[0].trailing == ""
    assert_lossless(text, 80)


def test_short_sentences_are_not_marked_split() -> None:
    assert not any(s.was_split for s in split_spans("One. Two. Three."))


def test_bad_input_is_rejected() -> None:
    with pytest.raises(ValueError):
        split_spans(" leading space")
    with pytest.raises(ValueError):
        split_spans("x", max_chars=0)
    assert split_spans("") == []


# --- speed: linear time, no catastrophic backtracking ---------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "word " * 40_000,  # 200 KB, no punctuation
        "a" * 200_000,  # no spaces either
        ". " * 100_000,  # nothing but candidates
        "a." * 100_000,  # periods with no spaces
        "Mr. " * 50_000,  # abbreviation storm
        "\u00ab ! \u00bb " * 30_000,
        ", " * 100_000,
    ],
)
def test_pathological_paragraphs_are_fast(text: str) -> None:
    text = normalize_text(text)
    started = time.perf_counter()
    spans = split_spans(text, max_chars=500)
    assert time.perf_counter() - started < 2.0
    assert "".join(s.text + s.trailing for s in spans) == text


# --- properties -----------------------------------------------------------------------

PUNCTUATED = st.lists(
    st.sampled_from(
        list("abcXYZ    ..!!??,,;:\u2014\u2013\"'\u201c\u201d\u00ab\u00bb()\u2026$3\n\t\u00a0\u202f")
        + ["Mr.", "e.g.", "3.14", "\u00e9", "e\u0301", "\U0001f600", "\u0627", "\u05e9", "\u4f60\u3002", "\x00", "\x07", "\u200d"]
    ),
    max_size=200,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=300), PUNCTUATED), cap=st.integers(min_value=1, max_value=120))
def test_segmentation_is_lossless_and_capped(text: str, cap: int) -> None:
    assert_lossless(normalize_text(text), cap)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=300), PUNCTUATED))
def test_normalization_keeps_every_visible_character(text: str) -> None:
    normalized = normalize_text(text)
    assert normalize_text(normalized) == normalized
    assert "  " not in normalized and normalized == normalized.strip()
    removed = {c for c in text if c.isspace() or unicodedata.category(c) in ("Cc", "Cs")}
    removed |= set("\u00ad\ufeff\u200e\u200f\u061c") | {chr(c) for c in range(0x202A, 0x202F)} | {chr(c) for c in range(0x2066, 0x206A)}
    visible = "".join(c for c in text if c not in removed)
    nfd = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731 - compare up to canonical equivalence
    assert nfd(normalized.replace(" ", "")) == nfd(visible)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["Hello there.", "Mr. Brown left!", '"Wait," she said.', "Numbers: 3.14 and 1,000.", "Why?", "\u00ab Oui ! \u00bb dit-il."]), min_size=1, max_size=20))
def test_well_formed_sentences_round_trip(parts: list[str]) -> None:
    text = " ".join(parts)
    spans = split_spans(text)
    assert "".join(s.text + s.trailing for s in spans) == text
    assert not any(s.was_split for s in spans)
