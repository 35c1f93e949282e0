"""A short Proof dock keeps its buttons in sight: the lists and the details shrink first, the dock
does not scroll its buttons away (they sat below the fold at a laptop's docked height)."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication, QScrollArea, QWidget
from support.render import rendered_test_book
from support.window import WAIT

from studio.ui.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("private_dirs")


def shown_in(widget: QWidget, dock: QWidget) -> QRect:
    """The part of ``widget`` that can be seen inside ``dock`` (empty when scrolled or cut away)."""
    seen = widget.visibleRegion().boundingRect()
    if seen.isEmpty():
        return QRect()
    top_left = widget.mapTo(dock, seen.topLeft())
    return QRect(top_left, seen.size()).intersected(dock.rect())


@pytest.mark.parametrize("height", [170, 120])
def test_a_short_proof_dock_shows_its_buttons(qtbot, window: MainWindow, tmp_path_factory, height: int) -> None:
    folder = tmp_path_factory.mktemp("small-dock") / "book.studio"
    shutil.copytree(rendered_test_book(tmp_path_factory.mktemp("rendered") / "book.studio"), folder)
    window.open_path(folder)
    panel = window.proof
    qtbot.waitUntil(lambda: panel.chapters.rowCount() == 2, timeout=WAIT)
    dock = window.docks["proof"]
    dock.raise_()
    window.resizeDocks([dock], [height], Qt.Orientation.Vertical)
    QApplication.processEvents()
    qtbot.waitUntil(lambda: dock.height() <= height + 40, timeout=WAIT)
    assert dock.height() < height  # short indeed: the dock's title and tab bar count too
    room = dock.findChild(QScrollArea)
    assert room.verticalScrollBar().maximum() == 0  # nothing scrolled out of the dock
    for button in (panel.fine_btn, panel.rerender_btn, panel.edit_btn, panel.lexicon_btn, panel.listen_btn):
        seen = shown_in(button, dock)
        assert seen.height() == button.height() and seen.width() == button.width(), (button.text(), seen)
    assert panel.table.height() < 100 and panel.table.height() >= panel.details.height()  # they gave up their room
    assert shown_in(panel.summary, dock).height() == panel.summary.height()
    assert panel.fine_btn.mapTo(dock, QPoint(0, panel.fine_btn.height())).y() <= dock.height()
