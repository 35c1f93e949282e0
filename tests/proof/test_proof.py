"""Proof-listening with the real embedded Whisper base and the real bundled voice.

A short real render gets four planted errors (a word changed and a word dropped
in the text the voice was given, an ending cut off, a sentence read through
German rules); the checker must flag each with the right reason and let a clean
sentence with a proper noun pass. The recogniser is loaded once per session
(seconds on two loaded cores); the audio is kept short.
"""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import pytest
from support.gui import write_manuscript
from support.takes import Lent as _Lent
from support.voice import bundled_engine

from studio.audio.pcm import to_int16
from studio.cli import main
from studio.engine.base import SynthesisSettings
from studio.engine.voice.catalog import get_voice
from studio.rendering.proofing import flagged_rows, proof_project
from studio.rendering.render import render_project
from studio.rendering.synthesizer import SynthRequest, each_synthesizer
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.proofs import FLAGGED, NO_AUDIO, NOT_CHECKED, PASSED, UNCHECKED, mark_fine, results
from studio.project.store import Project
from studio.proof.check import Checker, ProofItem
from studio.proof.model import ProofModelError, choose_device
from support.proof import CHANGED, DROPPED, plant, speak
from support.voice import DETERMINISTIC

CLEAN = "Captain Ahab walked slowly along the deck of the Pequod."
CUT = "They travelled north for seven days through snow and bitter wind."
GERMAN = "The children were singing happily in the morning sunshine."
TEXT = f"# The Voyage\n\n{CLEAN} {CHANGED[0]}\n\n{DROPPED[0]} {CUT}\n\n{GERMAN}\n"


@pytest.fixture(scope="session")
def checker() -> Checker:
    return Checker.open()


def steady_settings():  # -> ProjectSettings
    return new_project_settings(get_voice(None)).with_changes(synthesis=DETERMINISTIC)


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    book = write_manuscript(tmp_path / "books", TEXT, "voyage.md")
    project = open_for_manuscript(book, tmp_path / "voyage.studio", steady_settings()).project
    render_project(project, _Lent(bundled_engine()))
    plant(project, CHANGED[0], speak(CHANGED[1]))
    plant(project, DROPPED[0], speak(DROPPED[1]))
    whole = speak(CUT)
    plant(project, CUT, whole[: int(len(whole) * 0.6)])
    plant(project, GERMAN, speak(GERMAN, "de"))
    yield project
    project.close()


def by_text(project: Project) -> dict[str, object]:
    rows = project.sentences()
    current = results(project.db, rows)
    return {r.text: current[r.id] for r in rows}


def test_planted_errors_are_flagged_with_their_reason_and_a_clean_name_passes(planted: Project, checker) -> None:
    run = proof_project(planted, checker, retry=0)
    assert run.checked == len(planted.sentences())
    got = by_text(planted)
    assert got[CLEAN].status == PASSED, got[CLEAN]
    changed = got[CHANGED[0]]
    assert changed.status == FLAGGED, changed
    assert any(f.kind == "substituted" and "pipe" in f.expected for f in changed.flags), changed
    dropped = got[DROPPED[0]]
    assert dropped.status == FLAGGED, dropped
    assert any(f.kind == "missing" and "wooden" in f.expected for f in dropped.flags), dropped
    assert got[CUT].status == FLAGGED and any(f.kind == "cut" for f in got[CUT].flags), got[CUT]
    assert got[GERMAN].status == FLAGGED and got[GERMAN].flags[0].kind == "garbled", got[GERMAN]
    worst = flagged_rows(planted)
    assert {r.text for r, _ in worst} == {CHANGED[0], DROPPED[0], CUT, GERMAN}
    assert [rec.severity for _, rec in worst] == sorted((rec.severity for _, rec in worst), reverse=True)
    summary = run.summaries[max(run.summaries)]
    assert summary.to_review == 4 and summary.passed >= 1 and "to review" in summary.words()


def test_mark_fine_survives_reopening_and_a_new_take_is_checked_again(planted: Project, checker, tmp_path) -> None:
    proof_project(planted, checker, retry=0, chapters={max(r.chapter for r in planted.sentences())})
    changed = next(r for r in planted.sentences() if r.text == CHANGED[0])
    mark_fine(planted.db, changed.id)
    folder = planted.folder
    planted.close()
    with Project.open(folder) as again:
        rec = by_text(again)[CHANGED[0]]
        assert rec.fine and not rec.needs_listening
        assert CHANGED[0] not in {r.text for r, _ in flagged_rows(again)}
        plant(again, CHANGED[0], speak(CHANGED[0]))  # a new take of the same words
        assert by_text(again)[CHANGED[0]].status == UNCHECKED
        proof_project(again, checker, retry=0)
        assert by_text(again)[CHANGED[0]].status == PASSED


def test_a_cut_ending_gets_a_new_take_that_is_kept(planted: Project, checker) -> None:
    """Auto-retry: the glitch is synthesized again; the better take stays chosen, both are kept."""
    row = next(r for r in planted.sentences() if r.text == CUT)
    run = proof_project(planted, checker, retry=1, engine=_Lent(bundled_engine()))
    assert run.retried >= 2 and run.improved >= 1  # the cut sentence and the German one (garbled) were retried
    rec = by_text(planted)[CUT]
    assert rec.status == PASSED, rec
    takes = planted.takes.for_sentence(row.id)  # the cut take stays listed; the whole one is chosen
    chosen = [t for t in takes if t.chosen]
    assert len(takes) >= 2 and len(chosen) == 1 and chosen[0].duration > max(t.duration for t in takes if not t.chosen)


def test_without_audio_unsupported_language_and_nothing_to_say(tmp_path: Path, checker, monkeypatch) -> None:
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    book = write_manuscript(tmp_path / "books", f"# One\n\n{CLEAN}\n\n{CUT}\n", "one.md")
    with open_for_manuscript(book, tmp_path / "one.studio", steady_settings()).project as project:
        first = next(r for r in project.sentences() if r.text == CLEAN)
        render_project(project, _Lent(bundled_engine()), sentence_ids={first.id})
        run = proof_project(project, checker, retry=0)
        got = by_text(project)
        assert got[CLEAN].status == PASSED
        assert got[CUT].status == NO_AUDIO  # listed as such, never as passed
        summary = next(iter(run.summaries.values())) if len(run.summaries) == 1 else run.summaries[first.chapter]
        assert summary.no_audio >= 1 and "no audio yet" in summary.words()
    audio = speak(CLEAN)
    irish, silent = checker.check([ProofItem(audio, 22050, "Dia duit, a chara.", "ga"),
                                   ProofItem(np.zeros(0, np.float32), 22050, "* * *", "en")])
    assert irish.status == NOT_CHECKED and "language" in irish.note
    assert silent.status == PASSED and silent.note == "nothing to say"


def test_cli_json_exit_status_and_one_line_errors(planted: Project, tmp_path: Path, capsys) -> None:
    folder = str(planted.folder)
    planted.close()
    assert main(["proof", folder, "--json", "--retry", "0", "--device", "cpu"]) == 3
    rows = json.loads(capsys.readouterr().out)
    assert {r["text"] for r in rows} == {CHANGED[0], DROPPED[0], CUT, GERMAN}
    assert all({"chapter", "index", "text", "heard", "reasons", "severity"} <= set(r) for r in rows)
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "model.bin").write_bytes(b"not a model")
    (broken / "config.json").write_text("{}")
    assert main(["proof", folder, "--asr-model", str(broken), "--retry", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("studio: error: speech model") and "install" in err[0]
    assert main(["proof", folder, "--asr-model", str(tmp_path / "nowhere" / "model")]) == 2
    assert "not a faster-whisper model folder" in capsys.readouterr().err


def test_a_recording_is_aligned_to_its_text(tmp_path: Path, capsys) -> None:
    rate = bundled_engine().sample_rate
    pause = np.zeros(int(rate * 0.5), np.float32)
    audio = np.concatenate([speak(CUT), pause, speak(CHANGED[1]), pause, speak(DROPPED[0])])
    wav = tmp_path / "take.wav"
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(to_int16(audio).tobytes())
    text = tmp_path / "take.txt"
    text.write_text(f"{CUT} {CHANGED[0]}\n\n{DROPPED[0]}\n", encoding="utf-8")
    assert main(["proof", "--audio", str(wav), "--text", str(text), "--json"]) == 3
    rows = json.loads(capsys.readouterr().out)
    assert [r["text"] for r in rows] == [CUT, CHANGED[0], DROPPED[0]]
    assert [r["status"] for r in rows] == [PASSED, FLAGGED, PASSED]
    assert rows[0]["start"] < rows[0]["end"] < rows[1]["start"] < rows[1]["end"] < rows[2]["start"]
    assert rows[2]["end"] == pytest.approx(len(audio) / rate, abs=0.8)


def test_device_choice() -> None:
    assert choose_device("auto", 0) == ("cpu", "int8")
    assert choose_device("auto", 1) == ("cuda", "float16")
    assert choose_device("cpu", 1) == ("cpu", "int8")
    with pytest.raises(ProofModelError, match="no CUDA device"):
        choose_device("cuda", 0)


def test_export_refuses_unresolved_flags_and_writes_the_proof_summary(planted: Project, checker, tmp_path: Path,
                                                                       capsys) -> None:
    proof_project(planted, checker, retry=0)
    folder = str(planted.folder)
    flagged = [row.id for row, _ in flagged_rows(planted)]
    assert main(["export", folder, "-o", str(tmp_path / "out"), "--format", "wav", "--require-proof"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--require-proof" in err[0] and "4 to review" in err[0]
    for sid in flagged:  # the producer listened to each and vouches for it
        mark_fine(planted.db, sid)
    planted.close()
    export = ["export", folder, "-o", str(tmp_path / "out"), "--format", "wav", "--require-proof", "--acx"]
    assert main(export) in (0, 3)  # 3: a WAV is not what ACX takes; the proof section is printed either way
    printed = capsys.readouterr().out
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert f"Proof-listening: {manifest['proof']['summary']}" in printed  # the Proof dock's words, in both
    assert manifest["proof"]["to_review"] == 0 and manifest["proof"]["fine"] == 4
    assert "to review in" not in manifest["proof"]["summary"]
    assert all("to review" not in ch["summary"] for ch in manifest["proof"]["chapters"])
