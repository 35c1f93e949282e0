"""A Kokoro voice takes the studio's phonemes: ``studio inspect --spoken --json`` shows what it is
given, and an IPA entry is checked against its own symbols (not read as a Piper config), saved
and rendered. Run in-process through the command line, for real."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import pytest

from studio.cli import main
from studio.engine.kokoro.packs import offline_packs_file
from studio.project.lexicon import USER_LEXICON_ENV

pytestmark = [pytest.mark.slow, pytest.mark.skipif(offline_packs_file() is None, reason="the offline Kokoro "
                                                   "voices are not installed (installer/install.sh)")]

VOICE = "kokoro:jm_kumo"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def phonemes(capsys: pytest.CaptureFixture[str], folder: Path) -> dict[str, str]:
    return {r["text"]: r["phonemes"] for r in json.loads(run(capsys, "inspect", str(folder), "--spoken", "--json"))}


def seconds(folder: Path) -> float:
    (path,) = sorted(folder.glob("*.wav"))
    with wave.open(str(path)) as w:
        return w.getnframes() / w.getframerate()


def test_a_kokoro_voice_shows_its_phonemes_and_speaks_an_ipa_entry(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("STUDIO_VOICES_DIR", str(tmp_path / "voices"))
    monkeypatch.setenv(USER_LEXICON_ENV, str(tmp_path / "no-user-lexicon.pls"))
    book = tmp_path / "whale.md"
    book.write_text("# The Whale\n\nThe Pequod sailed at dawn. Birds sang.\n", encoding="utf-8")
    project, out = tmp_path / "whale.studio", tmp_path / "out"
    render = ("render", str(book), "-o", str(out), "--project", str(project), "--voice", VOICE, "--preset",
              "int8-cpu", "--format", "wav", "--in-process")
    assert "3 synthesized" in run(capsys, *render)  # the title and two sentences
    before = seconds(out)
    said = phonemes(capsys, project)
    assert said["Birds sang."].strip() and "pˈɛkwɑːd" in said["The Pequod sailed at dawn."]  # not empty

    run(capsys, "lexicon", "add", str(project), "Pequod", "--ipa", "ˈpiːkwɒd")  # was: cannot read voice config
    assert "ˈpiːkwɒd" in phonemes(capsys, project)["The Pequod sailed at dawn."]
    assert main(["lexicon", "add", str(project), "Ahab", "--ipa", "ˈeɪ§æb"]) == 2  # its own symbols are checked
    assert "'§'" in capsys.readouterr().err

    assert "1 synthesized" in run(capsys, *render)  # only the sentence with the word renders again
    assert seconds(out) != pytest.approx(before, abs=1e-3)
