"""The Proof dock on real widgets: listening after a render, a planted error listed with its
reason and highlighted words, a click selecting the sentence, the pronunciation dialog
pre-filled, "Mark as fine" kept across reopening.

Real project, real bundled voice through the real model worker, the real embedded
Whisper base (loaded once by the dock's listener).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.window import WAIT, make_window, open_and_wait, wait_jobs_done
from support.proof import CHANGED, DROPPED, plant, speak
from support.voice import DETERMINISTIC

pytestmark = pytest.mark.slow

LISTEN_WAIT = max(WAIT, 240_000)  # the recogniser's first load and a chapter's listening on two loaded cores


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.delenv("STUDIO_CACHE_DIR", raising=False)


def test_proof_dock_lists_a_planted_error_and_mark_as_fine_is_kept(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    panel, session = win.proof, win.session
    panel.auto.setChecked(True)
    book = write_manuscript(tmp_path / "books", f"# Garden\n\n{DROPPED[0]} {CHANGED[0]}\n", "harbour.md")
    open_and_wait(qtbot, win, book)
    project = session.project
    project.update_settings(project.settings().with_changes(synthesis=DETERMINISTIC))  # the same audio on every run
    session.render_chapters([0])
    wait_jobs_done(qtbot, win)
    # listening starts by itself after the render and finds nothing wrong
    qtbot.waitUntil(lambda: bool(panel.view.chapters) and not win.proof_ctl._running, timeout=LISTEN_WAIT)
    assert panel.table.rowCount() == 0, [e.reason for e in panel.view.entries]
    assert "100 % passed" in panel.summary.full_text and panel.chapter_rows()[0][1] == "100 % passed"

    target = plant(session.project, CHANGED[0], speak(CHANGED[1]))  # the voice said "horse"
    panel.listen_btn.click()
    qtbot.waitUntil(lambda: panel.table.rowCount() == 1 and not win.proof_ctl._running, timeout=LISTEN_WAIT)
    reason = panel.table.item(0, 2).text()  # Whisper's word, or the two listeners agreeing on the voice's
    assert "pipe" in reason and ("substituted" in reason or "both listeners hear" in reason), reason
    panel.table.selectRow(0)
    html = panel.details.toHtml()
    assert "pipe" in html and "horse" in html and "background" in html
    assert [s.id for s in win.book.selected_sentences()] == [target]
    assert panel.fine_btn.isEnabled() and panel.rerender_btn.isEnabled()
    # the tree: the sentence's flags say so, the chapter its share passed, the filter shows just it
    model = win.book.model
    assert "needs listening" in str(model.sentence_index(target).siblingAtColumn(3).data())
    chapter = model.sentence(target).chapter
    assert "to review" in str(model.index(chapter, 2).data())
    clean = next(s.id for s in win.book.sentences_of_chapters([chapter]) if s.text == DROPPED[0])
    win.book.filter_combo.setCurrentText("Needs listening")
    assert win.book.proxy.mapFromSource(model.sentence_index(target)).isValid()
    assert not win.book.proxy.mapFromSource(model.sentence_index(clean)).isValid()
    win.book.filter_combo.setCurrentText("All")

    panel.lexicon_btn.click()
    qtbot.waitUntil(lambda: getattr(win, "lexicon_dialog", None) is not None, timeout=WAIT)
    assert win.lexicon_dialog.word.text() == "pipe"
    win.lexicon_dialog.close()

    panel.fine_btn.click()
    qtbot.waitUntil(lambda: panel.table.rowCount() == 0, timeout=WAIT)
    folder = Path(session.snapshot.folder)
    win.close()

    again = make_window(qtbot, tmp_path)
    try:
        open_and_wait(qtbot, again, folder)
        qtbot.waitUntil(lambda: bool(again.proof.view.chapters), timeout=WAIT)
        assert again.proof.table.rowCount() == 0
        assert "100 % passed" in again.proof.summary.full_text
    finally:
        again.close()
