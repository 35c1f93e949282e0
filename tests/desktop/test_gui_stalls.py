"""The window keeps answering on a Moby-Dick-sized book: an undo's work is off the GUI thread or
grows with what it changed.

The bound is the GUI thread's own work while the event loop could not answer: a ping is posted
from another thread every 100 ms (:class:`studio.desktop.monitor.AnswerProbe`) and the GUI thread's
CPU time until it answers is what the window itself spent (the wall time beside it also holds the
load of a shared test machine, which bench/gui_stalls.py reports with the machine's load).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.window import WAIT, big_book, make_window, open_and_wait, sentences

from studio.desktop.monitor import AnswerProbe

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]

BOUND_S = 0.25


def _blocked(answers) -> float:  # noqa: ANN001 - list[Answer]
    """The longest the GUI thread worked while a ping waited (its wait where the OS gives no CPU time)."""
    return max((a.gui_cpu_s if a.gui_cpu_s is not None else a.wait_s) for a in answers)


def test_an_undo_and_a_redo_on_a_200000_word_book_never_block_the_window_for_250_ms(qtbot, tmp_path: Path) -> None:
    win = make_window(qtbot, tmp_path, [])
    open_and_wait(qtbot, win, write_manuscript(tmp_path / "books", big_book(), "big.md"))
    s = win.session
    qtbot.waitUntil(lambda: not s.tasks.pending, timeout=WAIT)
    assert sum(c.words for c in s.snapshot.chapters) >= 190_000
    target = sentences(win, 70)[3]
    labels: list = []
    s.historyChanged.connect(labels.append)
    s.edit_sentence(target.id, target.text + " Indeed.", rerender=False)
    qtbot.waitUntil(lambda: win.book.model.sentence(target.id).text.endswith("Indeed.") and not s.tasks.pending,
                    timeout=WAIT)

    probe = AnswerProbe(win)
    probe.start()
    try:
        for action, text in (("undo", target.text), ("redo", target.text + " Indeed.")):
            probe.label = action
            count = len(labels)
            win.actions_.named[action].trigger()
            qtbot.waitUntil(lambda: len(labels) > count and not s.tasks.pending, timeout=WAIT)
            assert win.book.model.sentence(target.id).text == text
            qtbot.wait(600)  # whatever the window does after the answer arrived (progress, banner) too
    finally:
        probe.stop()
    for action in ("undo", "redo"):
        answers = probe.take(action)
        assert len(answers) >= 3
        worst = max(answers, key=lambda a: a.wait_s)
        assert _blocked(answers) < BOUND_S, (
            f"{action}: the GUI thread worked {_blocked(answers) * 1000:.0f} ms while the window could not answer "
            f"(the longest answer took {worst.wait_s * 1000:.0f} ms)")
