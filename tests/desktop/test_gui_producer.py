"""Small things a producer tripped over: docks that kept the previous book's sentence.

Real widgets, real project files and SQLite, the real bundled voice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import TINY, write_manuscript
from support.window import WAIT, make_window, open_and_wait, sentences, wait_jobs_done

pytestmark = pytest.mark.slow


def test_opening_another_book_clears_the_waveform_and_takes_docks(qtbot, tmp_path: Path, private_dirs: None) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    try:
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "a", TINY, "first.md"))
        one = sentences(win, 0)
        win.session.render_chapters([0])
        wait_jobs_done(qtbot, win)
        win.book.select_sentence(one[1].id)
        qtbot.waitUntil(lambda: win.wave.data is not None and win.takes.sentence_id == one[1].id, timeout=WAIT)
        qtbot.waitUntil(lambda: win.takes.table.rowCount() > 0, timeout=WAIT)
        first = win.session.snapshot.folder

        open_and_wait_other = write_manuscript(tmp_path / "b", TINY.replace("Tiny Book", "Other Book"), "second.md")
        win.open_path(open_and_wait_other)
        qtbot.waitUntil(lambda: win.session.snapshot is not None and win.session.snapshot.folder != first,
                        timeout=WAIT)
        assert win.wave.data is None and win.takes.sentence_id is None and win.takes.table.rowCount() == 0
        assert "Select" in win.takes.title.text()
    finally:
        win.close()
