"""Direction from an EPUB 3's CSS Speech: a small book built here, imported into a real
project (real SQLite), gets its rates, pauses and stressed words on the right sentences;
a book without them gets none; italics are not stress.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.epub import XHTML, make_epub, opf, xhtml

from studio.engine.voice.catalog import get_voice
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.direction import directions
from studio.project.pauses import pauses_after
from studio.text.formats.epub_speech import StyleSheet, declarations, rate, seconds, speech_of_document
from studio.text.safety import parse_markup

CSS = """
/* the publisher's speech styles */
p.slow { -epub-voice-rate: slow; }
.stress { voice-stress: strong }
h2 { pause-after: 800ms }
div p.deep { voice-rate: fast }   /* not a simple selector: ignored */
@media speech { p.scene { pause: 1s 2s } }
"""

CHAPTER = (
    '<h2>One</h2>'
    '<p class="slow">The night was long. Nobody slept at all.</p>'
    '<p style="pause-before: 500ms; -epub-pause-after: strong">I never <span class="stress">said</span> '
    'she stole my <em>money</em>.</p>'
    '<p>He <i>Pequod</i> sailed on <span style="voice-stress: moderate">that very</span> day.</p>'
    '<p class="scene">The scene changed.</p>'
    '<p style="voice-rate: 80%">Slowly now.</p>'
    '<p>Nothing special here.</p>'
)


def _book(path: Path, body: str, css: str | None) -> Path:
    items = [("c1", "c1.xhtml", XHTML)] + ([("css", "style.css", "text/css")] if css is not None else [])
    files: dict[str, str | bytes] = {
        "OEBPS/content.opf": opf(items, ["c1"], meta="<dc:title>Speech</dc:title><dc:language>en</dc:language>"),
        "OEBPS/c1.xhtml": xhtml(body),
    }
    if css is not None:
        files["OEBPS/style.css"] = css
    return make_epub(path, files)


def test_values_and_selectors() -> None:
    assert seconds("300ms") == pytest.approx(0.3) and seconds("1.5s") == 1.5 and seconds("strong") == 1.0
    assert seconds("none") == 0.0 and seconds("loud") is None
    assert rate("slow") == 0.85 and rate("x-slow") == 0.7 and rate("80%") == 0.8 and rate("fast 110%") == 1.265
    assert rate("medium") == 1.0 and rate("warp") is None
    assert declarations("-epub-voice-rate: slow; color: red; PAUSE-AFTER: 1s !important") == {
        "voice-rate": "slow", "pause-after": "1s"}
    sheet = StyleSheet()
    sheet.add_css(CSS)
    assert sheet.ignored == 1 and ("p", "slow") in sheet.rules and ("", "stress") in sheet.rules
    marks = speech_of_document(parse_markup(xhtml(CHAPTER).encode()), sheet)
    by_text = {m.text: m for m in marks}
    assert by_text["One"].pause_after == 0.8
    assert by_text["The night was long. Nobody slept at all."].rate == 0.85
    said = by_text["I never said she stole my money."]
    assert (said.stressed, said.pause_before, said.pause_after) == ((2,), 0.5, 1.0)  # "money" in <em>: not stress
    assert by_text["He Pequod sailed on that very day."].stressed == (4, 5)
    assert (by_text["The scene changed."].pause_before, by_text["The scene changed."].pause_after) == (1.0, 2.0)
    assert by_text["Slowly now."].rate == 0.8
    assert "Nothing special here." not in by_text


@pytest.mark.usefixtures("private_dirs")
def test_an_epub_with_css_speech_imports_its_direction(tmp_path: Path) -> None:
    epub = _book(tmp_path / "speech.epub", CHAPTER, CSS)
    opened = open_for_manuscript(epub, tmp_path / "speech.studio", new_project_settings(get_voice(None)))
    with opened.project as project:
        rows = {r.text: r for r in project.sentences()}
        directed, after = directions(project.db), pauses_after(project.db)
        slow = [rows["The night was long."].id, rows["Nobody slept at all."].id]
        assert all(directed[i].rate == 0.85 for i in slow)
        said = rows["I never said she stole my money."].id
        assert directed[said].emphasis == (2,) and directed[said].pause_before == 0.5 and after[said] == 1.0
        assert directed[rows["He Pequod sailed on that very day."].id].emphasis == (4, 5)
        scene = rows["The scene changed."].id
        assert directed[scene].pause_before == 1.0 and after[scene] == 2.0
        assert directed[rows["Slowly now."].id].rate == 0.8
        title = next(r for r in project.sentences() if r.text == "One")
        assert after[title.id] == 0.8
        assert rows["Nothing special here."].id not in directed
        # the stressed and slowed sentences carry it in their keys; the rest keep the project's settings
        assert rows["I never said she stole my money."].synthesis.emphasis == (2,)
        assert rows["Nothing special here."].synthesis is None
        assert set(directed) == set(slow) | {said, rows["He Pequod sailed on that very day."].id, scene,
                                             rows["Slowly now."].id}


@pytest.mark.usefixtures("private_dirs")
def test_an_epub_without_css_speech_gets_no_direction(tmp_path: Path) -> None:
    # the same chapter, its classes and italics kept, no speech property anywhere
    body = (CHAPTER.replace(' style="pause-before: 500ms; -epub-pause-after: strong"', "")
            .replace(' style="voice-stress: moderate"', "").replace(' style="voice-rate: 80%"', ""))
    for name, css in (("styled", "p.slow { font-style: italic } .stress { font-weight: bold }"), ("bare", None)):
        epub = _book(tmp_path / f"{name}.epub", body, css)
        opened = open_for_manuscript(epub, tmp_path / f"{name}.studio", new_project_settings(get_voice(None)))
        with opened.project as project:
            assert directions(project.db) == {} and pauses_after(project.db) == {}
            assert all(r.synthesis is None for r in project.sentences())


def test_real_books_without_css_speech_give_none(shared_epubs: Path) -> None:
    from studio.text.formats.epub import read_epub

    books = sorted(shared_epubs.glob("*.epub"))
    assert books
    assert all(read_epub(book, 64 << 20).speech == [] for book in books)  # their italics and classes are not direction
