"""Screenshots of the producer's tools: waveform editing, the Voices window's library, book progress.

Run under a display (``xvfb-run -a python scripts/screenshots_producer.py``). Like
``scripts/screenshots_review.py`` it works in a temporary folder with the real
bundled voice: the sample manuscript is imported and chapter 1 rendered; the
chapter's waveform is zoomed, a range selected and the pause after one sentence
set; a small piper-voices-like catalogue (the bundled voice under other names) is
served on 127.0.0.1 for the Voices window, and one voice downloaded from it.

Shots: ``waveform-edit.png``, ``voices-library.png``, ``book-progress.png``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.server
import json
import logging
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import screenshots  # noqa: E402 - the same options, folders and event-loop helpers
from screenshots import settle, wait_until  # noqa: E402

log = logging.getLogger("screenshots")
#: catalogue entries served (all the bundled voice's files under another name)
SERVED = ("en_GB-harbour-medium", "en_US-keeper-low", "fr_FR-phare-medium", "de_DE-leuchte-medium")


def main(argv: list[str] | None = None) -> int:
    return screenshots.main(argv, shoot)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def serve_catalogue(root: Path) -> http.server.ThreadingHTTPServer:
    """A piper-voices-like tree with a voices.json, served on 127.0.0.1."""
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.download import piper_voice_files

    bundled = get_voice(None)
    model_bytes, config_bytes = bundled.model_path.read_bytes(), bundled.config_path.read_bytes()
    index = {}
    for name in SERVED:
        model_rel, config_rel = piper_voice_files(name)
        (root / model_rel).parent.mkdir(parents=True, exist_ok=True)
        (root / model_rel).symlink_to(bundled.model_path)
        (root / config_rel).write_bytes(config_bytes)
        code = name.split("-")[0]
        index[name] = {
            "name": name.split("-")[1], "quality": name.split("-")[2],
            "language": {"code": code, "name_english": {"en": "English", "fr": "French", "de": "German"}[code[:2]]},
            "files": {model_rel: {"size_bytes": len(model_bytes), "md5_digest": hashlib.md5(model_bytes).hexdigest()},
                      config_rel: {"size_bytes": len(config_bytes)}},
        }
    (root / "voices.json").write_text(json.dumps(index), encoding="utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def shoot(args: argparse.Namespace, tmp: Path) -> int:
    import os

    os.environ["STUDIO_VOICES_DIR"] = str(tmp / "voices")
    server = serve_catalogue(tmp / "served")
    os.environ["STUDIO_VOICES_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}"
    app, session, win, grab = screenshots.open_book(args, tmp)
    model, tree = win.book.model, win.book.tree
    session.render_chapters([0])
    session.render_chapters([1])
    wait_until(app, lambda: model.counts(0).get("done", 0) == sum(model.counts(0).values()), 900,
               "chapter 1 to render")

    win.docks["progress"].raise_()
    settle(app, 1.0)
    win.progress.refresh()
    grab(win, "book-progress.png")
    session.pause()

    tree.setCurrentIndex(win.book.proxy.mapFromSource(model.index(0, 0)))
    title = session.snapshot.chapters[0].title
    wait_until(app, lambda: win.wave.data is not None and win.wave.data.label == title, 60, "the waveform")
    view = win.wave
    spans = view.data.spans
    target = spans[min(3, len(spans) - 2)]
    session.set_pause_after(target.sentence_id, 1.6)
    wait_until(app, lambda: view.data.span_of(target.sentence_id).gap == 1.6, 60, "the new pause")
    view.zoom_by(2.0, view.x_of(target.end))
    view.scroll_to(spans[1].start)
    view.selection = (spans[1].start + 0.5, spans[2].end)
    view.set_highlight(None)
    view._set_focus(view.data.span_of(target.sentence_id))
    view.setFocus()
    grab(win, "waveform-edit.png")

    win.open_voices()
    dlg = win.voices_dialog
    panel = dlg.library
    dlg.tabs.setCurrentWidget(panel)
    wait_until(app, lambda: panel.table.rowCount() >= len(SERVED), 60, "the catalogue")
    panel.select(SERVED[2])
    panel.download_btn.click()
    wait_until(app, lambda: any(v.id == SERVED[2] and v.installed for v in panel.rows), 300, "the download")
    panel.select(SERVED[0])
    grab(dlg, "voices-library.png")
    dlg.reject()
    server.shutdown()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
