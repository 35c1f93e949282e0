"""Issue 41's wording and counts (point 5): the export report in the dialog's words, and a
chapter job that says how many sentences came from the cache."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from support.audio import META, speechlike
from support.render import make_book, real_engine
from studio.audio.acx import check_file
from studio.audio.containers import write_delivery
from studio.audio.cover import fit_cover
from studio.audio.tags import Cover, Track
from studio.delivery.manifest import PublishedFile
from studio.delivery.publish import PublishResult
from studio.desktop.snapshot import build_snapshot
from studio.engine.voice.catalog import get_voice
from studio.project.opening import new_project_settings
from studio.rendering.render import render_project
from studio.project.settings import ProjectSettings
from studio.project.store import Project
from studio.ui.book_model import BookModel
from studio.ui.export_dialog import ExportDialog


def test_the_export_report_names_the_dialogs_control_not_the_flag(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    buf = io.BytesIO()
    Image.new("RGB", (600, 400), (90, 30, 30)).save(buf, format="PNG")
    _cover, report = fit_cover(Cover(buf.getvalue(), "image/png"))
    assert "--cover-fit" in report.line()  # the command line's report keeps its flag
    audio = write_delivery(tmp_path / "a.mp3", speechlike(), 44100, "mp3", META, Track("a"))
    result = PublishResult((PublishedFile(audio, "a", (), check_file(audio).levels, check_file(audio), "0" * 64),),
                           tmp_path / "manifest.json", warnings=report.warnings, cover=report)
    dlg = export_dialog(qtbot, tmp_path)
    dlg.on_published(result)
    text = dlg.status.text()
    assert "--" not in text and "set Cover shape to pad or crop" in text
    assert text.count("not square") == 1  # the cover's warning once, in its line
    assert dlg.progress.text() == "1/1 files"


def test_a_chapter_job_says_how_many_came_from_the_cache(tmp_path: Path) -> None:
    """A job over a chapter half rendered before: "done - 1 synthesized" for 5 sentences read as if
    4 were missing; the job's words count every sentence (the queue shows this line)."""
    engine = real_engine()
    with Project.create(tmp_path / "p", make_book(), new_project_settings(get_voice(None))) as project:
        first = [r.id for r in project.sentences([0])][:3]
        render_project(project, engine, sentence_ids=first)  # a preview or an earlier, paused run
        result = render_project(project, engine, chapters={0})
    assert result.total == 5 and result.synthesized == 2
    assert result.summary() == "5 sentences: 2 synthesized, 3 from the cache, 0 failed"


def test_the_finished_export_dialog_fits_a_laptop_screen(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """It was 721 px tall after an export on a 768-pixel screen (issue 41, point 1)."""
    audio = write_delivery(tmp_path / "a.mp3", speechlike(), 44100, "mp3", META, Track("a"))
    files = tuple(PublishedFile(audio, f"part {i}", (), check_file(audio).levels, check_file(audio), "0" * 64)
                  for i in range(12))
    warnings = tuple(f"warning number {i}: a long line of the export's report about something to check" for i in range(8))
    dlg = export_dialog(qtbot, tmp_path)
    dlg.show()
    dlg.on_published(PublishResult(files, tmp_path / "manifest.json", warnings=warnings))
    room = dlg.screen().availableGeometry().height()
    # the report scrolls in its box, the lists keep a few lines: it fits a maximized laptop window's height
    assert dlg.minimumSizeHint().height() <= 700 and dlg.height() <= min(room, 710)


def export_dialog(qtbot, tmp_path: Path) -> ExportDialog:  # noqa: ANN001
    """The export dialog over a fresh project's book."""
    project = Project.create(tmp_path / "p", make_book(), ProjectSettings("en_US-joe-medium"))
    try:
        snap = build_snapshot(project)
    finally:
        project.close()
    dlg = ExportDialog(snap, BookModel(), str(tmp_path))
    qtbot.addWidget(dlg)
    return dlg
