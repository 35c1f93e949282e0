"""The review bench in the main window: state shown after a new threshold, queue priority,
the Render Book confirmation.

Real widgets, real project files and SQLite, the real bundled voice through the
real model worker (shared between tests only to save its load time).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_gui_support import TINY, write_manuscript
from test_gui_window import WAIT, make_window, open_and_wait, sentences, wait_jobs_done
from studio.project.store import Project
from studio.ui.main_window import MainWindow

pytestmark = pytest.mark.slow

#: chapter one long enough (about 2 spoken minutes) to be flagged at a 1-minute threshold
LONG_ONE = TINY.replace("Then it was night.", "Then it was night. " + " ".join(
    f"The keeper counted the boats in the harbour again, number {n}." for n in range(1, 30)))


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.delenv("STUDIO_CACHE_DIR", raising=False)


@pytest.fixture
def window(qtbot, tmp_path: Path):  # noqa: ANN001, ANN201
    engines: list = []
    win = make_window(qtbot, tmp_path, engines)
    win.engines = engines
    yield win
    win.close()


def state_cell(win: MainWindow, sentence_id: int) -> str:
    return str(win.book.model.sentence_index(sentence_id).siblingAtColumn(2).data())


def test_new_long_chapter_threshold_keeps_rendered_states_and_updates_the_banner(
        qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", LONG_ONE))
    book, model, session = window.book, window.book.model, window.session
    book.long_minutes.setValue(1)
    qtbot.waitUntil(lambda: "Chapter 1 " in book.summary.text(), timeout=5000)
    assert "long" in str(model.index(0, 3).data())

    two = sentences(window, 1)
    session.render_chapters([1])
    wait_jobs_done(qtbot, window)
    edited = two[-1]
    assert model.setData(model.sentence_index(edited.id), "We stayed in all day.")
    qtbot.waitUntil(lambda: len(session.queue.snapshot().jobs) == 2 and not session.queue.snapshot().active,
                    timeout=WAIT)
    qtbot.waitUntil(lambda: state_cell(window, edited.id) == "done", timeout=WAIT)
    book.tree.expand(book.proxy.mapFromSource(model.index(1, 0)))
    book.select_sentence(two[0].id)

    book.long_minutes.setValue(5)  # what the producer did: the threshold changed after a render
    qtbot.waitUntil(lambda: model.snapshot.long_chapter_minutes == 5, timeout=5000)
    total = len(two)
    assert str(model.index(1, 2).data()) == f"{total}/{total} rendered"
    assert all(state_cell(window, s.id) == "done" for s in two)
    assert model.sentence(edited.id).text == "We stayed in all day."
    assert "long" not in str(model.index(0, 3).data())
    assert "Chapter 1 " not in book.summary.text()  # the banner follows the threshold
    assert book.tree.isExpanded(book.proxy.mapFromSource(model.index(1, 0)))  # the tree is not rebuilt
    assert getattr(book.node_at(book.tree.currentIndex()), "id", None) == two[0].id

    book.long_minutes.setValue(1)
    qtbot.waitUntil(lambda: "Chapter 1 " in book.summary.text(), timeout=5000)
    assert str(model.index(1, 2).data()) == f"{total}/{total} rendered"
    with Project.open(session.snapshot.folder) as project:  # what is shown is what is stored
        assert all(r.state == "done" for r in project.sentences([1]))
