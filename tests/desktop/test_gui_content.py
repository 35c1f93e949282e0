"""Notes, images, tables & code in the main window: a choice saved is one undoable step, and the
passages it leaves out read as silent. Real widgets, real project files and SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox
from support.gui import write_manuscript
from support.window import WAIT, open_and_wait

from studio.ui.main_window import MainWindow

pytestmark = [pytest.mark.usefixtures("private_dirs")]

BOOK = """# Listings

## One

The program below prints a greeting, and then the chapter goes on with its story.

```
print("hello")
```

The end of the chapter comes after the listing, as it always does.
"""


def test_the_code_choice_is_saved_undone_and_read_as_silent(qtbot, window: MainWindow, tmp_path: Path) -> None:
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "m", BOOK, "listings.md"))
    session = window.session
    assert session.settings.code == "skip"
    window.actions_.named["content"].trigger()
    dlg = window.content_dialog
    assert dlg.isVisible()
    dlg.boxes["code"].setCurrentIndex(dlg.boxes["code"].findData("read"))
    with qtbot.waitSignal(session.settingsChanged, timeout=WAIT):
        dlg.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()
    assert session.settings.code == "read" and session.project.settings().code == "read"
    assert not [r for r in session.project.sentences() if r.kind == "code" and r.skipped]
    window.actions_.named["undo"].trigger()  # Edit > Undo
    qtbot.waitUntil(lambda: session.settings.code == "skip", timeout=WAIT)
    assert [r.text for r in session.project.sentences() if r.skipped] == ['print("hello")']
