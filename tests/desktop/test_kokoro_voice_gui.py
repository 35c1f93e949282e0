"""A Kokoro voice chosen in the desktop renders the book with its own presets: the offline
pack (a Japanese voice that speaks English) is no "no English voice" in the banner."""

from __future__ import annotations

from dataclasses import replace

import pytest

from studio.engine.kokoro.packs import offline_packs_file

pytestmark = pytest.mark.skipif(offline_packs_file() is None,
                                reason="the offline Kokoro voices are not installed (installer/install.sh)")


def test_the_desktop_renders_a_book_with_a_kokoro_voice(qtbot, tmp_path, monkeypatch):
    from studio.stack.build import build_engine
    from studio.ui.book_view import banner_line
    from support.gui import write_manuscript
    from support.window import WAIT, make_window, open_and_wait, sentences, wait_jobs_done

    monkeypatch.setenv("STUDIO_VOICES_DIR", str(tmp_path / "voices"))
    win = make_window(qtbot, tmp_path, build=build_engine)
    try:
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "books"))
        with qtbot.waitSignal(win.session.settingsChanged, timeout=WAIT):
            win.session.update_settings(replace(win.session.settings, voice_id="kokoro:jm_kumo", preset=""))
        assert "no English voice" not in banner_line(win.session.snapshot)[0]
        win.session.render_chapters([1])
        wait_jobs_done(qtbot, win)
        assert win.queue.snapshot.jobs[0].status == "done", win.log_pane.toPlainText()
        assert win.book.model.counts(1)["done"] == len(sentences(win, 1))
        assert "loaded voice kokoro:jm_kumo" in win.log_pane.toPlainText()
    finally:
        win.close()
