"""Export follows merged and split chapters: file numbers, names and the audio in each file.

Real project, real bundled voice, a tiny book; the audio is rendered once and a
merge or split must not need any of it again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.takes import FRONT, pcm, render, sha

from studio.engine.voice.catalog import get_voice
from studio.delivery.export import export_chapter_files
from studio.project.opening import new_project_settings, open_for_manuscript

pytestmark = pytest.mark.usefixtures("private_dirs")


def test_export_numbers_names_and_audio_follow_merge_and_split(tmp_path: Path) -> None:
    book = write_manuscript(tmp_path / "books", FRONT, "front.md")  # Dedication (front matter), One, Two, Three
    project = open_for_manuscript(book, tmp_path / "books" / "front.studio",
                                  new_project_settings(get_voice(None))).project
    with project:
        render(project, None, {1, 2, 3})
        synthesized = sum(r.synth_count for r in project.sentences())
        first = export_chapter_files(project, tmp_path / "a", "wav")
        assert [f.path.name for f in first] == ["02 - One.wav", "03 - Two.wav", "04 - Three.wav"]  # the tree's numbers
        one, two, three = (pcm(f.path) for f in first)

        control = project.chapter_control
        control.merge_with_next(1)  # One + Two
        merged = export_chapter_files(project, tmp_path / "b", "wav")
        assert [f.path.name for f in merged] == ["02 - One.wav", "03 - Three.wav"]
        both, pauses = pcm(merged[0].path), project.settings().pauses
        assert both.startswith(one[: len(one) // 2])  # One's audio first, as it was
        assert both.endswith(two[len(two) // 2:])  # and Two's last
        # then Two's: its heading is a paragraph now, followed by a paragraph pause, not a title pause
        assert merged[0].duration == pytest.approx(first[0].duration + first[1].duration - pauses.title
                                                   + pauses.paragraph, abs=0.002)
        assert pcm(merged[1].path) == three

        control.split(1, 2)  # before Two's heading paragraph: where the merge joined them
        again = export_chapter_files(project, tmp_path / "c", "wav")
        assert [sha(f.path) for f in again] == [sha(f.path) for f in first]  # the same files as before the merge

        control.split(1, 1)  # One's heading stays, its prose becomes "One (part 2)"
        parts = export_chapter_files(project, tmp_path / "d", "wav")
        assert [f.path.name for f in parts] == ["02 - One.wav", "03 - One (part 2).wav", "04 - Two.wav",
                                                "05 - Three.wav"]
        assert sum(r.synth_count for r in project.sentences()) == synthesized  # nothing was rendered again
