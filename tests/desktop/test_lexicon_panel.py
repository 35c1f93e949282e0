"""The Pronunciations dialog: real project, real SQLite; in the window, the real voice speaks."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import shared_factory, write_manuscript

from studio.project.lexicon import USER_LEXICON_ENV
from studio.desktop.session import ProjectSession
from studio.desktop.sinks import NullSink
from studio.desktop.tasks import TaskRunner
from studio.ui.lexicon_panel import LexiconDialog, play_text_for
from support.window import window_settings
from studio.ui.main_window import MainWindow

WAIT = 120_000
BOOK = """# Names

## One

Yesterday Nguyen rowed down the river. The water was cold. Later Nguyen slept.
"""


@pytest.fixture(autouse=True)
def private_lexicon(private_dirs: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Private folders (conftest) and a user lexicon of this test's own."""
    monkeypatch.setenv(USER_LEXICON_ENV, str(tmp_path / "user-lexicon.pls"))


@pytest.fixture
def project(tmp_path: Path):
    from studio.project.opening import open_project

    opened = open_project(write_manuscript(tmp_path / "m", BOOK, "names.md"), folder=tmp_path / "p")
    yield opened.project
    opened.project.close()


def test_add_edit_remove_and_play_requests(qtbot, project) -> None:
    dlg = LexiconDialog(project, TaskRunner(threads=1))
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.suggestions.rowCount() > 0, timeout=WAIT)  # read in the background
    words = [dlg.suggestions.item(r, 0).text() for r in range(dlg.suggestions.rowCount())]
    assert words == ["Nguyen"]  # capitalised mid-sentence, never in lower case
    dlg.suggestions.selectRow(0)
    assert dlg.word.text() == "Nguyen"

    changed: list[int] = []
    dlg.changed.connect(lambda: changed.append(1))
    dlg.value.setText("Win")
    with qtbot.waitSignal(dlg.changed, timeout=WAIT):
        assert dlg.save_entry()
    assert "2 not rendered yet will use it" in dlg.message.text()  # nothing rendered: nothing queued
    assert [(e.grapheme, e.value) for e in project.lexicon.entries().entries] == [("Nguyen", "Win")]
    assert dlg.entries.rowCount() == 1 and dlg.entries.item(0, 4).text() == "2"
    assert dlg.suggestions.rowCount() == 0 and changed == [1]

    requests: list[tuple[str, str]] = []
    dlg.playRequested.connect(lambda text, lang: requests.append((text, lang)))
    assert dlg.play() == "Nguyen. Yesterday Nguyen rowed down the river."
    assert requests == [("Nguyen. Yesterday Nguyen rowed down the river.", "en")]

    # IPA the voice cannot say is refused, and nothing is stored
    dlg.word.setText("river")
    dlg.kind.setCurrentIndex(dlg.kind.findData("phoneme"))
    dlg.value.setText("ɹˈɪv§")
    with qtbot.waitSignal(dlg.shown, timeout=WAIT):
        dlg.save_entry()
    assert "§" in dlg.message.text() and changed == [1]
    assert len(project.lexicon.entries()) == 1

    dlg.entries.selectRow(0)
    assert (dlg.word.text(), dlg.value.text(), dlg.kind.currentData()) == ("Nguyen", "Win", "alias")
    with qtbot.waitSignal(dlg.changed, timeout=WAIT):
        assert dlg.remove_entry()
    assert len(project.lexicon.entries()) == 0 and changed == [1, 1] and dlg.entries.rowCount() == 0


def test_play_text_for() -> None:
    assert play_text_for("N.", "It lies N. of here.") == "N. It lies N. of here."
    assert play_text_for("Win", "") == "Win."


def test_window_menu_opens_the_dialog_and_the_preview_speaks_with_the_entry(qtbot, tmp_path: Path) -> None:
    engines: list = []
    session = ProjectSession(readout_interval=0.25, build=shared_factory(engines),
                             sink_factory=lambda: NullSink(speed=8.0))
    win = MainWindow(session, window_settings(tmp_path))
    win.proof.auto.setChecked(False)  # proof-listening after renders: tests/desktop/test_proof_gui.py
    qtbot.addWidget(win)
    win.show()
    win.open_path(write_manuscript(tmp_path / "m", BOOK, "names.md"))
    qtbot.waitUntil(lambda: win.session.snapshot is not None and win.book.model.rowCount() > 0, timeout=WAIT)
    action = win.actions_.named["lexicon"]
    assert action.isEnabled()
    action.trigger()
    dlg = win.lexicon_dialog
    dlg.word.setText("Nguyen")
    dlg.value.setText("Win")
    with qtbot.waitSignal(dlg.changed, timeout=WAIT):
        assert dlg.save_entry()
    dlg.play()
    qtbot.waitUntil(lambda: any(e.spoken for e in engines), timeout=WAIT)
    engine = engines[0]
    qtbot.waitUntil(lambda: len(engine.spoken) >= 2, timeout=WAIT)
    spoken = dict(zip(engine.spoken, engine.lexicons))
    assert [e.value for e in spoken["Nguyen."].entries] == ["Win"]
    assert [e.value for e in spoken["Yesterday Nguyen rowed down the river."].entries] == ["Win"]
    win.close()
