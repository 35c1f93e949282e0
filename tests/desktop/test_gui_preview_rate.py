"""Previewing a sentence that is not rendered yet speaks it as the render will: at its own
direction's rate (not the project's), and renders nothing.

Real widgets (the tree's selection, the Play action), the real session, preview player
and model worker, the real bundled voice; the sink is a device-less consumer.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import BOOK, write_manuscript
from support.window import WAIT, open_and_wait, sentences

from studio.project.store import Project
from studio.desktop.messages import PlaybackPosition
from studio.ui.main_window import MainWindow

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]


def preview_seconds(qtbot, win: MainWindow, sentence_id: int, heard: list[PlaybackPosition]) -> float:  # noqa: ANN001
    """Select the sentence in the tree, press Play, and return how long that preview played
    (``heard``: every position the preview reported, in order)."""
    before = max((p.request_id for p in heard), default=0)
    win.book.select_sentence(sentence_id)
    win.actions_.named["play"].trigger()
    qtbot.waitUntil(lambda: any(p.request_id > before and p.state == "finished" for p in heard), timeout=WAIT)
    pos = next(p for p in heard if p.request_id > before and p.state == "finished")
    assert pos.sentence_id == sentence_id and not pos.message
    return pos.played_s


def test_preview_of_an_unrendered_sentence_uses_its_own_rate(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", BOOK))
    session, model = window.session, window.book.model
    target = next(s for s in sentences(window, 0) if s.paragraph is not None and len(s.text) > 15)
    assert not model.sentence(target.id).cached

    heard: list[PlaybackPosition] = []
    session.preview.positionChanged.connect(heard.append)
    plain = preview_seconds(qtbot, window, target.id, heard)
    session.set_direction([target.id], 0.8, 0.0, None, render=False)  # direction only: nothing renders
    qtbot.waitUntil(lambda: model.sentence(target.id).direction.rate == 0.8, timeout=WAIT)
    slow = preview_seconds(qtbot, window, target.id, heard)
    session.set_direction([target.id], 1.0, 0.0, None, render=False)
    qtbot.waitUntil(lambda: model.sentence(target.id).direction.rate is None, timeout=WAIT)
    again = preview_seconds(qtbot, window, target.id, heard)

    assert plain > 0.5
    # 0.8x stretches the speech by 1/0.8 = 1.25; the voice's short lead-in and tail do not stretch
    # (measured: 1.27 s -> 1.52 s, x1.20, for "The cat sat down.")
    assert slow / plain == pytest.approx(1.25, rel=0.12), (plain, slow)
    assert again == pytest.approx(plain, rel=0.08)  # back at the project's rate
    with Project.open(session.snapshot.folder) as project:
        assert project.counts()["done"] == 0  # a preview renders nothing, for this sentence or any other
