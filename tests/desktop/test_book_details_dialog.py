"""Book Details (issue 32, point 2's sources given a screen): the title, author, narrator, the book's
rights and the recording's copyright, each with where it came from; an edit is saved in the project's
settings and the exported credits and the M4B/MP3 tags follow; ``studio details`` is the same."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from mutagen.id3 import ID3
from mutagen.mp4 import MP4
from support.epub import novel
from support.render import real_engine
from support.window import WAIT, open_and_wait

from studio.cli import main
from studio.delivery.export_book import spoken_credits
from studio.delivery.publish import PublishOptions, publish
from studio.engine.voice.catalog import get_voice
from studio.project.store import Project
from studio.project.opening import new_project_settings
from studio.rendering.render import render_project
from studio.text.importer import load_manuscript
from studio.ui.main_window import MainWindow

PUBLISHER = "Copyright \u00a9 2019 by Acme Press. All rights reserved."
THIS_YEAR = str(_dt.date.today().year)


def rendered_novel(tmp_path: Path) -> Path:
    (tmp_path / "books").mkdir()
    path = novel(tmp_path / "books" / "whale.epub", PUBLISHER, author="Ann Writer")
    with Project.create(path.with_suffix(".studio"), load_manuscript(path),
                        new_project_settings(get_voice(None))) as project:
        render_project(project, real_engine())
    return path.with_suffix(".studio")


def test_details_dialog_edits_the_producer_and_the_credits_and_tags_follow(
        qtbot, window: MainWindow, tmp_path: Path) -> None:
    folder = rendered_novel(tmp_path)
    open_and_wait(qtbot, window, folder)
    window.actions_.named["book_details"].trigger()  # Project > Book Details...
    dlg = window.book_details_dialog
    qtbot.waitUntil(lambda: dlg.details is not None, timeout=WAIT)
    assert dlg.boxes["title"].text() == "The Whale" and dlg.source_of("title") == "from the EPUB"
    assert dlg.boxes["author"].text() == "Ann Writer" and dlg.source_of("author") == "from the EPUB"
    assert "Acme Press" in dlg.boxes["rights"].text() and dlg.source_of("rights") == "from the EPUB (dc:rights)"
    assert dlg.boxes["producer"].text() == "" and dlg.source_of("producer") == "not given"
    assert dlg.boxes["narrator"].text() == "Synthetic voice (Joe)" and dlg.source_of("narrator") == "default (the voice)"
    assert dlg.boxes["recording_year"].text() == THIS_YEAR and dlg.source_of("recording_year") == "default (this year)"

    dlg.boxes["producer"].setText("Jo Producer")
    dlg.boxes["narrator"].setText("Jo Reader")
    assert dlg.source_of("producer") == "set by you" and dlg.source_of("narrator") == "set by you"
    dlg.boxes["title"].setText("The Whale")  # the book's own value: stays the book's
    assert dlg.source_of("title") == "from the EPUB"
    assert dlg.changes() == {"producer": "Jo Producer", "narrator": "Jo Reader"}
    dlg.save_btn.click()
    qtbot.waitUntil(lambda: window.session.settings.producer == "Jo Producer", timeout=WAIT)
    assert window.session.settings.narrator == "Jo Reader" and window.session.settings.title == ""

    window.actions_.named["book_details"].trigger()  # shown again: the producer's entries, said as such
    again = window.book_details_dialog
    qtbot.waitUntil(lambda: again.details is not None, timeout=WAIT)
    assert again.boxes["producer"].text() == "Jo Producer" and again.source_of("producer") == "set by you"
    again.reject()
    window.open_export()  # the export dialog offers the project's own holder
    assert window.export_dialog.producer.text() == "Jo Producer"
    window.export_dialog.close()
    window.session.close_project()
    qtbot.waitUntil(lambda: window.session.project is None, timeout=WAIT)

    with Project.open(folder) as project:
        closing = spoken_credits(project, PublishOptions()).closing
        assert f"Recording copyright {THIS_YEAR} by Jo Producer." in closing
        assert "Copyright 2019 by Acme Press." in closing and "Narrated by Jo Reader." in \
            spoken_credits(project, PublishOptions()).opening
        options = {"sample": False, "subtitles": False, "year": "1851"}
        m4b = publish(project, tmp_path / "m4b", PublishOptions(fmt="m4b", **options), engine=real_engine())
        mp3 = publish(project, tmp_path / "mp3", PublishOptions(fmt="mp3", single_file=True, **options),
                      engine=real_engine())
    notice = f"Copyright 2019 by Acme Press. Recording copyright {THIS_YEAR} by Jo Producer."
    tags = MP4(str(m4b.files[0].path)).tags
    assert tags["cprt"] == [notice] and tags["\xa9wrt"] == ["Jo Reader"] and tags["\xa9alb"] == ["The Whale"]
    id3 = ID3(str(mp3.files[0].path))
    assert id3["TCOP"].text == [notice] and id3["TCOM"].text == ["Jo Reader"]
    assert json.loads(m4b.manifest.read_text(encoding="utf-8"))["book"]["copyright"] == notice


def test_cli_details_shows_sources_and_sets_them(tmp_path: Path, capsys) -> None:
    path = novel(tmp_path / "whale.epub", "The text is in the public domain.")
    Project.create(path.with_suffix(".studio"), load_manuscript(path), new_project_settings(get_voice(None))).close()
    folder = str(path.with_suffix(".studio"))
    assert main(["details", folder]) == 0
    shown = capsys.readouterr().out
    assert "Title: The Whale  [from the EPUB]" in shown
    assert "Rights (the book's): The text is in the public domain.  [from the EPUB (dc:rights)]" in shown
    assert main(["details", folder, "--producer", "Jo Producer", "--recording-year", "2025",
                 "--title", "The Whale, Abridged"]) == 0
    shown = capsys.readouterr().out
    assert "Recording copyright holder: Jo Producer  [set by you]" in shown
    assert "Title: The Whale, Abridged  [set by you]" in shown
    assert main(["export", folder, "--credits-text"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("The Whale, Abridged.") and "Recording copyright 2025 by Jo Producer." in printed
    assert main(["details", folder, "--title", "", "--recording-year", "twenty"]) == 2  # a year, or nothing saved
    assert "not a year" in capsys.readouterr().err
    assert main(["details", folder, "--title", ""]) == 0  # '' goes back to the book's own
    assert "Title: The Whale  [from the EPUB]" in capsys.readouterr().out
