"""A sentence's number is its place in the chapter, not in its paragraph (issue 41, point 4):
the Proof dock listed two "Sentence 4" rows of one chapter."""

from __future__ import annotations

from pathlib import Path

from support.render import make_book

from studio.project.settings import ProjectSettings

from studio.project.store import Project
from studio.project.numbering import sentence_numbers


def test_numbers_count_the_chapter_not_the_paragraph(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", make_book(), ProjectSettings("en_US-joe-medium"))
    try:
        rows = project.sentences()
        numbers = sentence_numbers(rows)
    finally:
        project.close()
    by_text = {r.text: numbers[r.id] for r in rows}
    # Morning: title, then two paragraphs of two sentences each
    assert by_text["Morning"] == 0
    assert [by_text[t] for t in ("The sun came up.", "Birds sang.", "Tea was hot.", "We sat.")] == [1, 2, 3, 4]
    # Evening starts again at 1
    assert [by_text[t] for t in ("It got dark.", "Stars came out.", "We slept.")] == [1, 2, 3]
    body = [numbers[r.id] for r in rows if not r.is_title]
    per_chapter = {}
    for r in rows:
        if not r.is_title:
            per_chapter.setdefault(r.chapter, []).append(numbers[r.id])
    assert all(v == list(range(1, len(v) + 1)) for v in per_chapter.values()) and len(body) == 8
