"""``studio proof --audio --text --subtitles``: a studio render is cut at its subtitles' times.

The render, its mastering and its subtitles are the studio's own (a three-paragraph
chapter rendered with the bundled voice and published as WAV with SRT); the chapter
heading has a cue the text lacks, and stays out of the sentences around it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.render import para, real_engine

from studio.audio.subtitles import parse_cues
from studio.cli import main
from studio.core.types import Book, Chapter
from studio.delivery.publish import PublishOptions, publish
from studio.engine.voice.catalog import get_voice
from studio.project.store import Project
from studio.project.opening import new_project_settings
from studio.rendering.render import render_project

PARAGRAPHS = (
    ("The lighthouse stood on a rock at the end of the bay.", "Its keeper climbed the stairs each evening.",
     "From the top he could see the fishing boats come home."),
    ("One night a storm blew in from the west.", "The waves broke over the rock and the lamp flickered."),
    ("By morning the sea was calm again.", "The keeper slept until noon, and nobody blamed him."),
)


@pytest.fixture(scope="module")
def render(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The chapter published as WAV with its SRT: (audio, subtitles)."""
    root = tmp_path_factory.mktemp("subs")
    book = Book(title="Keeper", author="Ann Author", language="en",
                chapters=(Chapter("The Lighthouse", tuple(para(*p) for p in PARAGRAPHS)),), source="memory")
    project = Project.create(root / "p", book, new_project_settings(get_voice(None)))
    try:
        render_project(project, real_engine())
        result = publish(project, root / "out", PublishOptions(fmt="wav", credits=False, sample=False, year="2025"),
                         engine=real_engine())
    finally:
        project.close()
    (f,) = result.files
    return f.path, f.path.with_suffix(".srt")


def test_a_render_checked_with_its_subtitles_is_cut_at_their_times(render: tuple[Path, Path], tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    audio, srt = render
    cues = parse_cues(srt.read_text(encoding="utf-8"))
    sentences = [s for p in PARAGRAPHS for s in p]
    assert len(cues) == len(sentences) + 1  # the heading is spoken and has a cue of its own
    text = tmp_path / "chapter.txt"
    text.write_text("\n\n".join(" ".join(p) for p in PARAGRAPHS), encoding="utf-8")
    code = main(["proof", "--audio", str(audio), "--text", str(text), "--subtitles", str(srt), "--json"])
    verdicts = json.loads(capsys.readouterr().out)
    assert [v["text"] for v in verdicts] == sentences
    assert [(v["status"], v["reasons"]) for v in verdicts] == [("passed", [])] * len(sentences)
    assert code == 0
    by_text = {c[2]: c for c in cues}
    for v in verdicts:  # the sentence is where its cue is, to the millisecond the SRT writes
        start, end, _ = by_text[v["text"]]
        assert abs(v["start"] - start) <= 0.01 and abs(v["end"] - end) <= 0.01, (v, by_text[v["text"]])


def test_with_subtitles_the_recording_is_not_searched_by_listening(render: tuple[Path, Path]) -> None:
    from studio.proof.check import Checker
    from studio.proof.recording import proof_recording

    audio, srt = render
    checker = Checker.open()
    searched = []
    transcribe = checker.listener.model.transcribe
    checker.listener.model.transcribe = lambda *a, **k: (searched.append(1), transcribe(*a, **k))[1]
    sentences = [s for p in PARAGRAPHS for s in p]
    cues = parse_cues(srt.read_text(encoding="utf-8"))
    verdicts = proof_recording(checker, audio, sentences, "en", cues)
    assert searched == [] and [v.record.status for v in verdicts] == ["passed"] * len(sentences)
    without = proof_recording(checker, audio, sentences, "en")  # the same recording found by listening
    assert searched, "without subtitles the recording is searched"
    print("without subtitles:", [(v.record.status, v.record.reasons) for v in without])


def test_subtitles_of_another_text_are_refused(render: tuple[Path, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    audio, srt = render
    text = tmp_path / "other.txt"
    text.write_text("A different story begins here. It has nothing in common with the lighthouse keeper's night. "
                    "Nor does this sentence.", encoding="utf-8")
    assert main(["proof", "--audio", str(audio), "--text", str(text), "--subtitles", str(srt)]) == 2
    assert "subtitles do not belong to this text" in capsys.readouterr().err
