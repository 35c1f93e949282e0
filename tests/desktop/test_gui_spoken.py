"""The sentence inspector shows the spoken form with the changes highlighted, and an
override typed there is stored in the project (it alone gets a new key) and survives
reopening; "Automatic" drops it. Real window, real session, real project (pytest-qt)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from support.gui import shared_factory, write_manuscript
from studio.project.store import Project
from studio.desktop.session import ProjectSession
from studio.desktop.sinks import NullSink
from support.window import window_settings
from studio.ui.main_window import MainWindow
from studio.ui.spoken_view import highlighted

WAIT = 120_000
BOOK = "# Prices\n\n## One\n\nIt cost $5 in 1907. The cat sat down.\n"


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.delenv("STUDIO_CACHE_DIR", raising=False)


def test_highlight_marks_only_the_changed_words() -> None:
    html = highlighted("It cost $5 in 1907.", "It cost five dollars in nineteen oh seven.")
    assert html.startswith("It cost <span") and "five dollars</span> in <span" in html
    assert "nineteen oh seven.</span>" in html


def test_inspector_shows_and_overrides_the_spoken_form(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    session = ProjectSession(readout_interval=0.25, build=shared_factory([]), sink_factory=lambda: NullSink(speed=8.0))
    win = MainWindow(session, window_settings(tmp_path))
    qtbot.addWidget(win)
    win.show()
    win.open_path(write_manuscript(tmp_path / "books", BOOK, "prices.md"))
    qtbot.waitUntil(lambda: session.snapshot is not None and win.book.model.rowCount() > 0, timeout=WAIT)
    money = next(s for s in win.book.sentences_of_chapters([0]) if s.text.startswith("It cost"))
    plain = next(s for s in win.book.sentences_of_chapters([0]) if s.text.startswith("The cat"))

    win.book.select_sentence(plain.id)
    qtbot.waitUntil(lambda: getattr(win.inspector._node, "id", None) == plain.id, timeout=5000)
    panel = win.inspector.spoken
    assert panel.isVisible() and "as printed" in panel.label.text()

    win.book.select_sentence(money.id)
    qtbot.waitUntil(lambda: getattr(win.inspector._node, "id", None) == money.id, timeout=5000)
    assert "five dollars" in panel.label.text() and "<span" in panel.label.text()
    assert panel.edit.text() == "It cost five dollars in nineteen oh seven."
    assert not panel.apply_btn.isEnabled()

    panel.edit.clear()
    qtbot.keyClicks(panel.edit, "It cost five bucks in nineteen hundred and seven.")
    assert panel.apply_btn.isEnabled()
    qtbot.mouseClick(panel.apply_btn, Qt.MouseButton.LeftButton)
    said = "It cost five bucks in nineteen hundred and seven."
    qtbot.waitUntil(lambda: next(s for s in win.book.sentences_of_chapters([0]) if s.id == money.id).spoken == said,
                    timeout=WAIT)
    folder = session.snapshot.folder
    with Project.open(folder) as project:  # stored: another process opening the project sees it
        rows = {r.id: r for r in project.sentences()}
        assert rows[money.id].spoken == said and rows[plain.id].spoken == plain.text

    qtbot.mouseClick(panel.reset_btn, Qt.MouseButton.LeftButton)  # "Automatic": the normaliser's form again
    qtbot.waitUntil(lambda: next(s for s in win.book.sentences_of_chapters([0]) if s.id == money.id).spoken
                    == money.spoken, timeout=WAIT)
    win.close()
