"""The Book Audit panel: a real project, real SQLite, the bundled voice's own front end."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import write_manuscript

from studio.desktop.tasks import TaskRunner
from studio.ui.audit_panel import AuditDialog

WAIT = 120_000
BOOK = """# Audit

## One

The horse ran!—the second horse followed. The FBI came to see Queequeg. Yesterday Queequeg rowed home.

Et tu, Brute? Veni, vidi, vici, dixit Caesar ad senatum populumque Romanum in foro.
"""


@pytest.fixture
def project(private_dirs: None, tmp_path: Path):
    from studio.project.opening import open_project

    opened = open_project(write_manuscript(tmp_path / "m", BOOK, "audit.md"), folder=tmp_path / "p")
    yield opened.project
    opened.project.close()


def test_the_panel_lists_the_findings_by_kind_with_their_sentences(qtbot, project) -> None:
    dlg = AuditDialog(project, TaskRunner(threads=1))
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.audit is not None, timeout=WAIT)  # read in the background
    rows = [[dlg.table.item(r, c).text() for c in range(5)] for r in range(dlg.table.rowCount())]
    kinds = {r[0] for r in rows}
    assert "symbol" not in kinds  # the voice names no mark: "!—" is the exclamation's pause
    spelled = next(r for r in rows if r[0] == "spelled")
    assert spelled[1] == "1" and spelled[3] == "FBI (1x)" and "FBI came" in spelled[4]
    assert any(r[0] == "guessed" and r[3].startswith("Queequeg") for r in rows)
    assert "spelled: 1" in dlg.summary.text() and "symbol: 0" in dlg.summary.text()


def test_language_names_come_from_the_detector_when_the_menus_lack_them() -> None:
    from studio.ui.common import language_label, language_name

    assert language_name("sk") == "Slovak" and language_name("sw") == "Swahili" and language_name("en_US") == "English"
    assert language_label("sk") == "Slovak (sk)" and language_name("zz") == "zz"


MIXED = """# Two quotations

## One

The old man read aloud from the book every evening, and the children listened by the fire.

Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae, aliam Aquitani, tertiam qui ipsorum lingua Celtae.

Then he closed the book and told them a story of his own about the sea and the ships.

Es war einmal ein König, der hatte drei Töchter, und die jüngste war so schön, dass die Sonne sich wunderte.

And so the evening ended, as every evening did, with the fire low and the house quiet.
"""


def test_the_banner_names_each_language_and_keeps_one_at_a_time(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    from support.window import open_and_wait

    open_and_wait(qtbot, window, write_manuscript(tmp_path / "m", MIXED, "mixed.md"))
    banner = window.book.summary
    assert "look" in banner.full_text and "Latin" in banner.full_text and "German" in banner.full_text
    assert "Read the Latin in English" in banner.text() and "Read the German in English" in banner.text()
    banner.linkActivated.emit("keep:de")  # the German passage only
    qtbot.waitUntil(lambda: "German" not in banner.text(), timeout=WAIT)
    assert "Latin" in banner.full_text  # the genuine Latin quotation is left alone


def test_a_row_opens_its_sentence_the_audit_stops_and_spelled_words_are_accepted(qtbot, project) -> None:
    opened: list[tuple[int, int]] = []
    dlg = AuditDialog(project, TaskRunner(threads=1), open_sentence=lambda c, i: opened.append((c, i)))
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.audit is not None, timeout=WAIT)
    assert dlg.progress.isHidden() and "Double-click" in dlg.summary.text()
    row = next(r for r in range(dlg.table.rowCount()) if dlg.table.item(r, 0).text() == "spelled")
    dlg.table.cellDoubleClicked.emit(row, 4)
    finding = dlg.audit.findings[row]
    assert opened == [(finding.chapter, finding.index)] and finding.chapter > 0
    assert dlg.accept_btn.isEnabled()
    dlg.accept_spelled()  # FBI is accepted as spelled, and the audit runs again without it
    qtbot.waitUntil(lambda: dlg.audit is not None and not dlg.audit.of_kind("spelled"), timeout=WAIT)
    dlg.start()
    dlg.stop()  # read by the task at its next step
    qtbot.waitUntil(lambda: "stopped" in dlg.summary.text(), timeout=WAIT)


def test_the_content_choices_are_saved_as_project_settings(qtbot) -> None:
    from studio.project.settings import ProjectSettings
    from studio.ui.content_dialog import ContentDialog

    dlg = ContentDialog(ProjectSettings(voice_id="en_US-joe-medium"))
    qtbot.addWidget(dlg)
    saved: list[ProjectSettings] = []
    dlg.applied.connect(saved.append)
    assert {name: box.currentData() for name, box in dlg.boxes.items()} == {
        "notes": "end", "images": "captions", "tables": "rows", "code": "skip"}
    dlg.boxes["notes"].setCurrentIndex(dlg.boxes["notes"].findData("skip"))
    dlg.boxes["code"].setCurrentIndex(dlg.boxes["code"].findData("read"))
    dlg._save()
    assert [(s.notes, s.code, s.tables) for s in saved] == [("skip", "read", "rows")]
