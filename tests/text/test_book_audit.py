"""The book audit (``studio inspect BOOK --audit``) and the phonemes ``--spoken --json`` shows, for real:
the bundled voice's front end, a real book, real espeak-ng."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.cli import main
from studio.text.audit import audit_sentences, named_marks
from studio.text.spoken_report import SpokenSentence

BOOK = Path(__file__).resolve().parents[1] / "data" / "books" / "moby-dick-excerpt.md"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def _espeak_as_printed():
    """espeak-ng given the text as printed (what the studio did before marks were quieted)."""
    from piper.phonemize_espeak import EspeakPhonemizer

    espeak = EspeakPhonemizer()
    return lambda text, language: " ".join("".join(s) for s in espeak.phonemize("en-us", text))


def test_the_audit_finds_each_kind_in_its_sentence() -> None:
    rows = [
        SpokenSentence(1, 1, 1, "The horse ran!—the second horse.", "The horse ran!—the second horse.", "en"),
        SpokenSentence(1, 2, 1, "The FBI came for the PLUTARCH'S men.", "The F B I came for the plutarch's men.", "en"),
        SpokenSentence(1, 3, 2, "Das ist gut.", "Das ist gut.", "de"),
        SpokenSentence(1, 4, 3, "What use is it?", "What use is it?", "en"),
    ]
    audit = audit_sentences(rows, "en", phonemize=_espeak_as_printed(), guessed=[("Queequeg", 2, "Das ist gut.")],
                            heteronyms=lambda text: ["use"] if "use" in text else [])
    assert audit.counts() == {"silent": 0, "symbol": 1, "spelled": 1, "language": 1, "guessed": 1, "heteronym": 1}
    symbol, = audit.of_kind("symbol")
    assert (symbol.chapter, symbol.index) == (1, 1) and "ɛkskləm" in symbol.detail
    assert audit.of_kind("spelled")[0].detail == "FBI (1x)"  # the possessive name is read as a word
    assert audit.of_kind("language")[0].detail == "de" and audit.of_kind("guessed")[0].index == 3


def test_the_voice_names_no_mark_that_espeak_named_before() -> None:
    from studio.rendering.phonemes import voice_phonemes

    say = voice_phonemes(None)
    for text in ("The horse ran!—the second horse.", "see paragraph/run-in here", "x:-y", "Oh!!!—no?!—yes"):
        assert named_marks(text, "en", _espeak_as_printed()), text
        assert named_marks(text, "en", lambda t, lang: say(t, lang, None)) == "", text


def test_the_audit_of_a_real_book_holds_nothing_to_fix(capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(run(capsys, "inspect", str(BOOK), "--audit", "--json"))
    counts = report["counts"]
    assert counts["symbol"] == 0 and counts["spelled"] == 0, report["findings"][:5]
    assert [f["detail"] for f in report["findings"] if f["kind"] == "language"] == ["la"]  # the Latin quotation
    assert counts["guessed"] > 10 and report["words"] > 1000
    listing = run(capsys, "inspect", str(BOOK), "--audit")
    assert "symbol: 0" in listing and "language: 1" in listing and "Stubb" in listing


def test_spoken_json_rows_carry_the_phonemes_the_render_uses(capsys: pytest.CaptureFixture[str]) -> None:
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.config import VoiceConfig
    from studio.engine.voice.phonemize import PiperFrontEnd

    rows = json.loads(run(capsys, "inspect", str(BOOK), "--spoken", "--json"))
    front = PiperFrontEnd(VoiceConfig.from_file(get_voice(None).config_path))
    assert all(r["phonemes"] for r in rows)
    for r in rows[:60]:
        assert front.phonemes_to_ids(list(r["phonemes"])) == front.text_to_ids(r["spoken"], r["language"]), r["text"]


def test_the_audit_runs_on_every_shared_epub(capsys: pytest.CaptureFixture[str], shared_epubs: Path) -> None:
    for epub in sorted(shared_epubs.glob("*.epub")):
        report = json.loads(run(capsys, "inspect", str(epub), "--audit", "--json"))
        assert report["counts"]["symbol"] == 0, (epub.name, [f for f in report["findings"] if f["kind"] == "symbol"][:3])
