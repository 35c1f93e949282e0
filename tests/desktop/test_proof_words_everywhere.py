"""One proof summary, every face: ``studio proof``, the export's report and ``manifest.json`` say the
Proof dock's words, computed by one function (issue 32, point 4); none says "100 %" while a sentence
has no audio or is still to review."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.render import make_book, real_engine
from support.window import WAIT, make_window

from studio.cli import main
from studio.delivery.export import default_chapters
from studio.delivery.proof_state import proof_report
from studio.engine.voice.catalog import get_voice
from studio.project.store import Project
from studio.project.opening import new_project_settings
from studio.project.proofs import FLAGGED, PASSED, ProofFlag, ProofRecord, save_result
from studio.rendering.render import render_project

pytestmark = pytest.mark.usefixtures("private_dirs")

UNRENDERED = ("Birds sang.", "We sat.")  # two of chapter 1's sentences: no audio yet
FLAGGED_TEXT = "Stars came out."  # chapter 2: the recogniser heard something else


def heard_as_rendered(project: Project) -> None:
    """A verdict for every rendered sentence's current audio: one flagged, the rest passed."""
    for row in project.sentences():
        if row.state != "done":
            continue
        flag = ProofFlag("substituted", 3, "substituted 'stars' with 'cars'", "stars", "cars")
        record = (ProofRecord(FLAGGED, 3, 40.0, "Cars came out.", (flag,)) if row.text == FLAGGED_TEXT
                  else ProofRecord(PASSED, score=99.0, heard=row.text))
        save_result(project.db, row.id, row.cache_key, row.checksum, record)


def cli_lines(capsys, *argv: str) -> tuple[str, dict[str, str]]:
    """``studio proof``'s book line and its chapter lines (chapter title -> words)."""
    assert main(["proof", *argv, "--retry", "0"]) == 3  # a sentence needs listening
    out = capsys.readouterr().out
    chapters = dict(re.findall(r'^chapter \d+ "([^"]*)": (.*)$', out, re.MULTILINE))
    book = re.search(r"^Proof-listening: (.*)$", out, re.MULTILINE)
    assert book is not None, out
    return book.group(1), chapters


def dock_lines(qtbot, tmp_path: Path, folder: Path) -> tuple[str, dict[str, str]]:
    win = make_window(qtbot, tmp_path)
    try:
        win.open_path(folder)
        panel = win.proof
        qtbot.waitUntil(lambda: panel.chapters.rowCount() == 2 and "Not proof-listened" not in panel.summary.full_text,
                        timeout=WAIT)
        return panel.summary.full_text, {name.split(". ", 1)[1]: words for name, words in panel.chapter_rows()}
    finally:
        win.close()


def test_cli_manifest_and_dock_say_the_same_and_never_100_percent_with_audio_missing(
        qtbot, tmp_path: Path, capsys) -> None:
    folder = tmp_path / "book.studio"
    with Project.create(folder, make_book(), new_project_settings(get_voice(None))) as project:
        keep = [r.id for r in project.sentences() if r.text not in UNRENDERED]
        render_project(project, real_engine(), sentence_ids=keep)
        heard_as_rendered(project)
        manifest_words = proof_report(project, default_chapters(project))  # what an export writes under "proof"
    book, chapters = cli_lines(capsys, str(folder))
    assert book == "1 to review in 1 chapter; 1 chapter partly heard; 2 sentences have no audio yet"
    assert chapters == {"Morning": "3 of 5 heard and passed; 2 of 5 sentences have no audio yet",
                        "Evening": "1 to review; 4 of 5 heard and passed"}
    assert manifest_words["summary"] == book and manifest_words["no_audio"] == 2 and manifest_words["to_review"] == 1
    assert {c["title"]: c["summary"] for c in manifest_words["chapters"]} == chapters
    assert manifest_words["chapters"][0]["all_passed"] is False and manifest_words["chapters"][0]["heard"] == 3
    assert (book, chapters) == dock_lines(qtbot, tmp_path / "first", folder)
    assert "100" not in book and not any("100" in words for words in chapters.values())

    # the rest rendered, not heard yet, then exported: the printed report and the manifest say it too
    with Project.open(folder) as project:
        render_project(project, real_engine())
    assert main(["export", str(folder), "-o", str(tmp_path / "out"), "--format", "wav", "--no-credits",
                 "--no-sample", "--no-subtitles"]) == 0
    printed = capsys.readouterr().out
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))["proof"]
    docked, dock_chapters = dock_lines(qtbot, tmp_path / "second", folder)
    assert docked == "1 to review in 1 chapter; 1 chapter partly heard"
    assert dock_chapters["Morning"] == "3 of 5 heard and passed; 2 not listened yet"
    assert f"Proof-listening: {docked}\n" in printed and manifest["summary"] == docked
    assert {c["title"]: c["summary"] for c in manifest["chapters"]} == dock_chapters
    assert manifest["to_review"] == 1 and manifest["unchecked"] == 2 and manifest["all_passed"] is False
    assert "100 %" not in printed
