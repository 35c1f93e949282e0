"""The main window fits a 1280 x 720 laptop screen with every warning showing (issue 32, point 1)."""

from __future__ import annotations

from pathlib import Path

from support.gui import copy_sample
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar, QToolBar, QToolTip
from support.window import WAIT, open_and_wait

from studio.ui.main_window import MainWindow


def test_minimum_size_fits_1280x720_with_every_warning(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001, F811
    open_and_wait(qtbot, window, copy_sample(tmp_path / "books"))
    book, banner = window.book, window.book.summary
    book.long_minutes.setValue(1)  # every chapter of the sample runs over a minute: "3 long chapters"
    qtbot.waitUntil(lambda: "long chapters" in banner.full_text, timeout=WAIT)
    line = banner.full_text
    assert "no French voice" in line and "split" in line  # the no-voice and split warnings with it

    hint = window.minimumSizeHint().expandedTo(window.minimumSize())
    assert hint.width() <= 1280 and hint.height() <= 720, (hint.width(), hint.height())
    docks = window.docks  # and laid out as on a large screen's first start: Details above the readouts' tabs
    for name in ("readouts", "takes", "progress"):
        window.removeDockWidget(docks[name])
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, docks["readouts"])
    for name in ("readouts", "takes", "progress"):
        docks[name].show()
    window.tabifyDockWidget(docks["readouts"], docks["takes"])
    window.tabifyDockWidget(docks["readouts"], docks["progress"])
    assert docks["details"] not in window.tabifiedDockWidgets(docks["readouts"])
    hint = window.minimumSizeHint().expandedTo(window.minimumSize())
    assert hint.width() <= 1280 and hint.height() <= 720, (hint.width(), hint.height())
    toolbar = window.findChild(QToolBar, "toolbar-main")
    assert toolbar.minimumSizeHint().width() < 200  # its buttons fold into the toolbar's » menu
    # whatever the font: the banner asks for a dozen characters and its link, not its whole line
    fm = banner.fontMetrics()
    assert banner.minimumSizeHint().width() < fm.horizontalAdvance(line) / 2
    for dock in window.docks.values():  # a panel scrolls in its dock instead of setting the window's size
        assert dock.minimumSizeHint().width() <= 200 and dock.minimumSizeHint().height() <= 200, dock.windowTitle()

    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.width() <= 1280 and window.height() <= 720, timeout=5000)
    window.resize(900, 600)  # narrower still: the banner gives way, says so, and keeps its "Show"
    qtbot.waitUntil(lambda: banner.elided(), timeout=5000)
    assert window.width() <= 900
    assert line in banner.toolTip() and "Show</a>" in banner.text() and "\u2026" in banner.text()
    assert banner.height() < 2.2 * fm.height()  # still one line
    banner.linkActivated.emit("show")
    assert book.filter_combo.currentText() == "No voice"
    assert QToolTip.isVisible() and line in QToolTip.text()  # the whole warning, behind Show


def test_docks_can_be_tabbed_from_the_view_menu(qtbot, window: MainWindow) -> None:  # noqa: ANN001, F811
    docks = window.docks
    window.actions_.named["tab_docks"].trigger()
    right = {d.windowTitle() for d in window.tabifiedDockWidgets(docks["details"])}
    assert right == {"Live readouts", "Takes", "Book progress", "Cast"}
    bottom = {d.windowTitle() for d in window.tabifiedDockWidgets(docks["queue"])}
    assert bottom == {"Log", "Proof", "Waveform"}
    titles = {bar.tabText(i) for bar in window.findChildren(QTabBar) for i in range(bar.count())}
    assert {"Details", "Takes", "Render queue", "Proof"} <= titles  # tabs a producer can click
