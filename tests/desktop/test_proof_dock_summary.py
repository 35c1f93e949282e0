"""The Proof dock's summary (issue 32, point 4): the book in one short line, the chapters as rows
of a list, and "100 % passed" only for a chapter whose every sentence has audio and was heard."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.window import make_window
from support.render import rendered_test_book

from studio.project.store import Project
from studio.project.proofs import FLAGGED, PASSED, ProofFlag, ProofRecord, ProofSummary, book_words, save_result

WAIT = 120_000  # ms


def test_words_for_a_chapter_and_the_book() -> None:
    assert ProofSummary(sentences=55, passed=55).words() == "100 % passed"
    half = ProofSummary(sentences=100, passed=45, no_audio=55)  # read as a clean chapter before
    assert half.words() == "45 of 100 heard and passed; 55 of 100 sentences have no audio yet"
    assert "100 %" not in half.words() and not half.all_passed
    assert ProofSummary(sentences=9, passed=5, to_review=4).words() == "4 to review; 5 of 9 heard and passed"
    assert ProofSummary(sentences=9, unchecked=9).words() == "not listened yet"
    assert ProofSummary(sentences=9, no_audio=9).words() == "no audio yet"
    book = {i: ProofSummary(sentences=50, passed=40, to_review=10) for i in range(6)}
    book.update({i: ProofSummary(sentences=50, unchecked=50) for i in range(6, 141)})
    # 60, not the 184: the same words, short, whatever the book's size
    assert book_words(book) == "60 to review in 6 chapters; 135 chapters not listened yet"
    assert book_words({0: ProofSummary(sentences=3, passed=3)}) == "All 3 sentences heard: 100 % passed"
    assert book_words({0: half}) == "nothing to review; 1 chapter partly heard; 55 sentences have no audio yet"
    assert book_words({0: ProofSummary(sentences=3, unchecked=3), 1: ProofSummary(sentences=2, no_audio=2)}) == \
        "2 chapters not listened yet; 2 sentences have no audio yet"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rendered_test_book(tmp_path_factory.mktemp("proof-dock") / "book.studio")


def test_dock_summary_is_short_and_chapters_are_rows(qtbot, tmp_path: Path, private_dirs: None,  # noqa: ANN001
                                                     rendered: Path) -> None:
    folder = tmp_path / "book.studio"
    shutil.copytree(rendered, folder)
    with Project.open(folder) as project:  # chapter 1 heard, one sentence flagged; chapter 2 not listened
        rows = project.sentences([0])
        for row in rows:
            flag = ProofFlag("substituted", 3, "substituted 'tea' with 'sea'", "tea", "sea")
            record = ProofRecord(FLAGGED, 3, 40.0, "sea was hot", (flag,)) if row.text.startswith("Tea") \
                else ProofRecord(PASSED, score=99.0, heard=row.text)
            save_result(project.db, row.id, row.cache_key, row.checksum, record)
    win = make_window(qtbot, tmp_path)
    try:
        win.open_path(folder)
        panel = win.proof
        qtbot.waitUntil(lambda: panel.chapters.rowCount() == 2, timeout=WAIT)
        assert panel.summary.full_text == "1 to review in 1 chapter; 1 chapter not listened yet"
        assert "\n" not in panel.summary.full_text and "ch. " not in panel.summary.full_text
        assert panel.chapter_rows() == [("1. Morning", f"1 to review; {len(rows) - 1} of {len(rows)} heard and passed"),
                                        ("2. Evening", "not listened yet")]
        assert panel.table.rowCount() == 1 and "tea" in panel.table.item(0, 2).text()
        panel.chapters.selectRow(1)  # a chapter row selects the chapter in the tree
        assert win.book.selected_chapters() == [1]
        win.docks["proof"].raise_()
        assert panel.summary.height() < 2.5 * panel.summary.fontMetrics().height()  # one line, not a wall
    finally:
        win.close()
