"""Closing credits from the book's own rights (issue 32, point 2): a public-domain EPUB says so,
a publisher's copyright is credited to the publisher, never the author; the text is shown and
editable in the export dialog and with ``studio export --credits-text``."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.epub import novel
from support.window import WAIT, open_and_wait

from studio.cli import main
from studio.engine.voice.catalog import get_voice
from studio.delivery.export_book import credits_as_text, credits_from_text, spoken_credits
from studio.delivery.publish import PublishOptions
from studio.delivery.rights import parse_rights
from studio.project.opening import new_project_settings
from studio.project.store import Project
from studio.text.importer import load_manuscript
from studio.ui.main_window import MainWindow

PUBLIC = ("This edition is released under a Creative Commons CC BY-SA 4.0 licence by Far Shore Editions. "
          "The text itself is in the public domain in the United States.")
PUBLISHER = "Copyright \u00a9 2019 by Acme Press. All rights reserved."


def project_of(path: Path) -> Project:
    return Project.create(path.with_suffix(".studio"), load_manuscript(path), new_project_settings(get_voice(None)))


def test_public_domain_epub_says_so_and_never_credits_the_author(tmp_path: Path) -> None:
    with project_of(novel(tmp_path / "whale.epub", PUBLIC)) as project:
        closing = spoken_credits(project, PublishOptions()).closing
        assert "The text of this book is in the public domain." in closing
        # the edition's licence credited as the edition's, with its name and link; ShareAlike: the recording too
        assert ("This edition is shared by Far Shore Editions under the Creative Commons licence CC BY-SA 4.0 "
                "(creativecommons.org/licenses/by-sa/4.0)." in closing)
        assert "This recording is shared under the same licence." in closing
        assert "Copyright" not in closing and "Melville." not in closing.replace("written by Herman Melville", "")
        mine = spoken_credits(project, PublishOptions(producer="Jo Producer")).closing
        assert "Recording copyright" in mine and "by Jo Producer, shared under the same licence." in mine
        assert "recording is in the public" not in mine


def test_publishers_copyright_is_credited_to_the_publisher(tmp_path: Path) -> None:
    with project_of(novel(tmp_path / "acme.epub", PUBLISHER, author="Ann Writer")) as project:
        closing = spoken_credits(project, PublishOptions()).closing
        assert "Copyright 2019 by Acme Press." in closing
        assert "by Ann Writer." not in closing and "public domain" not in closing
        # the producer's word in the project's settings comes first
        project.update_settings(project.settings().with_changes(rights="public domain"))
        assert "in the public domain" in spoken_credits(project, PublishOptions()).closing


def test_a_book_that_claims_nothing_gets_no_copyright_line(tmp_path: Path) -> None:
    md = tmp_path / "plain.md"
    md.write_text("---\ntitle: Quiet Book\nauthor: Ann Writer\n---\n\n# One\n\nThe sea was calm.\n", encoding="utf-8")
    with project_of(md) as project:
        closing = spoken_credits(project, PublishOptions()).closing
        assert "Copyright" not in closing and "public domain" not in closing and "Recording produced in" in closing
    md = tmp_path / "claimed.md"
    md.write_text("---\ntitle: Quiet Book\nauthor: Ann Writer\ncopyright: \u00a9 2021 Ann Writer\n---\n\n# One\n\n"
                  "The sea was calm.\n", encoding="utf-8")  # front matter that does claim it
    with project_of(md) as project:
        assert "Copyright 2021 by Ann Writer." in spoken_credits(project, PublishOptions()).closing


def test_a_docx_copyright_page_names_the_holder(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title, document.core_properties.author = "Harbour Lights", "Ann Writer"
    document.add_heading("Copyright", level=1)
    document.add_paragraph("Copyright \u00a9 2020 Blue Door Books Ltd. All rights reserved.")
    document.add_heading("One", level=1)
    document.add_paragraph("The boats rocked gently against the harbour wall all that long and quiet morning.")
    path = tmp_path / "harbour.docx"
    document.save(str(path))
    with project_of(path) as project:
        closing = spoken_credits(project, PublishOptions(producer="Jo Producer")).closing
        assert "Copyright 2020 by Blue Door Books Ltd." in closing and "by Ann Writer." not in closing
        assert "Recording copyright" in closing and "by Jo Producer." in closing


def test_real_epubs_rights(shared_epubs: Path, tmp_path: Path) -> None:
    """The shared W3C sample EPUBs: a CC BY-SA edition is credited with its licence, never "Copyright
    <this year> by" the licence's words or T.S. Eliot; "Public domain in the USA." says public domain."""
    for name, said in (("wasteland.epub", "This edition is shared under the Creative Commons licence CC BY-SA 3.0 "
                                          "(creativecommons.org/licenses/by-sa/3.0)."),
                       ("childrens-literature.epub", "The text of this book is in the public domain.")):
        copy = tmp_path / name
        copy.write_bytes((shared_epubs / name).read_bytes())
        with project_of(copy) as project:
            closing = spoken_credits(project, PublishOptions()).closing
            assert said in closing, closing
            assert "Copyright" not in closing and "This work is shared" not in closing, closing  # not the work's status


@pytest.mark.parametrize("statement, public, holder", [
    ("Public Domain", True, ""),
    ("This work is not in the public domain. Copyright 2001 Estate of A. Poet", False, "Estate of A. Poet"),
    ("(c) 1999-2004 Some House, Ltd", False, "Some House"),
    ("All rights reserved", False, ""),
])
def test_rights_statements(statement: str, public: bool, holder: str) -> None:
    found = parse_rights(statement)
    assert found.public_domain is public and found.holder.startswith(holder)


def test_cli_credits_text_prints_and_reads_the_edited_text(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    path = novel(tmp_path / "whale.epub", PUBLIC)
    project_of(path).close()
    folder = str(path.with_suffix(".studio"))
    assert main(["export", folder, "--credits-text", "--producer", "Jo Producer"]) == 0
    printed = capsys.readouterr().out
    credits = credits_from_text(printed)
    assert credits.opening.startswith("The Whale.") and "Recording copyright" in credits.closing
    assert "public domain" in credits.closing and "Copyright" not in credits.closing.replace("Recording copyright", "")
    assert credits_as_text(credits) == printed  # what is printed reads back as it was
    edited = tmp_path / "credits.txt"
    edited.write_text(printed.replace("The end.", "The end of the whale."), encoding="utf-8")
    assert main(["export", folder, "--credits-text", "--credits-file", str(edited)]) == 0  # the edited text is used
    assert "The end of the whale." in credits_from_text(capsys.readouterr().out).closing


def test_export_dialog_shows_the_credits_from_the_books_rights(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001, F811
    (tmp_path / "books").mkdir()
    open_and_wait(qtbot, window, novel(tmp_path / "books" / "whale.epub", PUBLIC))
    window.open_export()
    dlg = window.export_dialog
    qtbot.waitUntil(lambda: "public domain" in dlg.closing.toPlainText(), timeout=WAIT)
    assert dlg.opening.toPlainText().startswith("The Whale.") and "Copyright" not in dlg.closing.toPlainText()
    assert dlg.closing.isEnabled() and not dlg.closing.isReadOnly()  # editable before export
    dlg.producer.setText("Jo Producer")  # the recording's holder: the closing credits follow while untouched
    qtbot.waitUntil(lambda: "Recording copyright" in dlg.closing.toPlainText(), timeout=WAIT)
    dlg.closing.setPlainText("The end. My own words.")
    dlg.producer.setText("Someone Else")
    qtbot.wait(300)
    assert dlg.closing.toPlainText() == "The end. My own words."  # the producer's own words are kept
    assert dlg.choices().closing == "The end. My own words." and dlg.choices().producer == "Someone Else"


def test_a_public_domain_text_in_a_licensed_edition(tmp_path: Path) -> None:
    """The edition's Creative Commons licence is not the work's status (issue 41, point 6): the
    producer says the text is public domain (Book Details), the edition keeps its attribution."""
    licence = "This work is shared with the public using the Attribution-ShareAlike 3.0 Unported (CC BY-SA 3.0) license."
    with project_of(novel(tmp_path / "whale.epub", licence)) as project:
        alone = spoken_credits(project, PublishOptions(producer="Jo Producer")).closing
        assert "public domain" not in alone and licence not in alone  # the status is not guessed from a licence
        assert "This edition is shared under the Creative Commons licence CC BY-SA 3.0" in alone
        project.update_settings(project.settings().with_changes(rights="Public domain"))
        closing = spoken_credits(project, PublishOptions(producer="Jo Producer")).closing
    lines = [line for line in closing.split("\n") if line]
    text, edition, recording = (next(line for line in lines if key in line) for key in
                                ("The text of this book", "This edition", "Recording copyright"))
    assert text == "The text of this book is in the public domain."
    assert edition.endswith("(creativecommons.org/licenses/by-sa/3.0).")
    assert recording.startswith("Recording copyright 20") and recording.endswith(" by Jo Producer, shared under the "
                                                                                "same licence.")
