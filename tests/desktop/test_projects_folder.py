"""Where a book's project goes (issue 41, point 7): opening a book asks once for a folder of
projects, remembers it and says where each project goes; a project made beside the book before
is reopened, not made again."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from support.gui import TINY, write_manuscript
from support.window import WAIT, make_window

from studio.project.folder import default_project_dir
from studio.ui.import_flow import DEFAULT_PROJECTS, PROJECTS_DIR_KEY

pytestmark = pytest.mark.usefixtures("private_dirs")


def test_a_book_opens_into_the_folder_of_projects_asked_once(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    ini = tmp_path / "ui"
    ini.mkdir()
    QSettings(str(ini / "studio.ini"), QSettings.Format.IniFormat).setValue(PROJECTS_DIR_KEY, "")  # a first start
    window = make_window(qtbot, ini)
    asked: list[str] = []
    projects = tmp_path / "My Projects"
    window.importer.choose_folder = lambda start: (asked.append(start), str(projects))[1]  # type: ignore[method-assign]
    said: list[tuple[str, list[str]]] = []

    def answer() -> None:  # the question first says what a project folder is; the default is one click
        box = window.importer.question
        buttons = {b.text(): b for b in box.buttons()}
        said.append((box.text(), list(buttons)))
        buttons["Choose another folder\u2026"].click()

    QTimer.singleShot(0, answer)
    book = write_manuscript(tmp_path / "books", TINY)
    window.open_path(book)
    qtbot.waitUntil(lambda: window.session.snapshot is not None, timeout=WAIT)
    assert said[0][0].startswith("Each book you open gets a project folder")
    assert f"Use {DEFAULT_PROJECTS.name}" in said[0][1] and "Beside each book" in said[0][1]
    assert asked == [str(DEFAULT_PROJECTS)]  # the default offered
    assert window.session.snapshot.folder == str(default_project_dir(book, projects))
    assert not default_project_dir(book, book.parent).exists()  # nothing made beside the book
    assert window.qsettings.value(PROJECTS_DIR_KEY) == str(projects)

    other = write_manuscript(tmp_path / "books", TINY.replace("Tiny Book", "Other Book"), "other.md")
    window.open_path(other)  # asked once: the second book goes to the same folder without a question
    qtbot.waitUntil(lambda: window.session.snapshot is not None
                    and window.session.snapshot.folder.endswith("other.studio"), timeout=WAIT)
    assert len(asked) == 1 and Path(window.session.snapshot.folder).parent == projects
    window.close()


def test_a_project_beside_the_book_is_reopened(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    window = make_window(qtbot, tmp_path)  # projects beside their books (the tests' setting): made there
    book = write_manuscript(tmp_path / "books", TINY)
    window.open_path(book)
    qtbot.waitUntil(lambda: window.session.snapshot is not None, timeout=WAIT)
    beside = window.session.snapshot.folder
    window.session.close_project()
    qtbot.waitUntil(lambda: window.session.snapshot is None, timeout=WAIT)
    window.qsettings.setValue(PROJECTS_DIR_KEY, str(tmp_path / "elsewhere"))
    window.open_path(book)  # an earlier project of this book: reopened where it is
    qtbot.waitUntil(lambda: window.session.snapshot is not None, timeout=WAIT)
    assert window.session.snapshot.folder == beside and not (tmp_path / "elsewhere").exists()
    window.close()
