"""No rendition is computed on the GUI thread: the window open on a project, a producer at work."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.window import WAIT, open_and_wait, sentences, wait_jobs_done

from studio.project.lexicon import USER_LEXICON_ENV
from studio.project.rendition import watch
from studio.ui.main_window import MainWindow

BOOK = """# Names

## One

Yesterday Nguyen rowed 3 miles down the river. The water was cold. Later Nguyen slept.

## Two

Dr. Lee came at 5 p.m. on 3 May 1851.
"""


@pytest.fixture(autouse=True)
def private_lexicon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER_LEXICON_ENV, str(tmp_path / "user-lexicon.pls"))


def test_no_rendition_is_computed_on_the_gui_thread(qtbot, window: MainWindow, tmp_path: Path) -> None:
    gui = threading.current_thread()
    threads: list[threading.Thread] = []
    stop = watch(lambda n: threads.append(threading.current_thread()))
    try:
        open_and_wait(qtbot, window, write_manuscript(tmp_path / "m", BOOK, "names.md"))
        session = window.session
        session.render_chapters([0])
        wait_jobs_done(qtbot, window)
        lee = next(n for n in sentences(window, 1) if n.text.startswith("Dr. Lee"))
        session.set_spoken(lee.id, "Doctor Lee came at five in the afternoon.")
        qtbot.waitUntil(lambda: any(n.spoken.startswith("Doctor Lee came at five") for n in sentences(window, 1)),
                        timeout=WAIT)

        window.actions_.named["lexicon"].trigger()
        dlg = window.lexicon_dialog
        qtbot.waitUntil(lambda: dlg.suggestions.rowCount() > 0, timeout=WAIT)
        dlg.word.setText("Nguyen")
        dlg.value.setText("Win")
        with qtbot.waitSignal(dlg.changed, timeout=WAIT):
            assert dlg.save_entry()
        assert "2 sentences queued to render again" in dlg.message.text()
        qtbot.waitUntil(lambda: session.tasks.pending == 0, timeout=WAIT)
        dlg.close()
    finally:
        stop()
    assert len(threads) >= 3  # the open, the override, the entry: each computed some, elsewhere
    assert gui not in threads, f"{threads.count(gui)} of {len(threads)} computations ran on the GUI thread"
