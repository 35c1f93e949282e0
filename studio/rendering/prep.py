"""Before a render touches a sentence: one renderer per project, the leftovers of a
killed render removed, the voices' fingerprints current, vanished audio sent back.

Why apart from the render loop (:func:`studio.rendering.render.render_project`, which
calls these first): each guards the project's state rather than speaking a
sentence -- the lock and the temp-file sweep make a crashed or doubled render
harmless, the fingerprints and the presence check make every cache key and every
``done`` row true before the loop trusts them -- and they are what a test of crash
recovery drives on its own.
"""

from __future__ import annotations

import logging
import os
from contextlib import ExitStack, contextmanager
from typing import Any, Callable, Iterable, Iterator

from studio.core.errors import ProjectError
from studio.core.system import locked_file
from studio.project.cache import file_fingerprint
from studio.project.store import Project
from studio.project.records import SentenceRow

log = logging.getLogger(__name__)


@contextmanager
def render_lock(project: Project) -> Iterator[None]:
    """Refuse a second simultaneous render of the same project (advisory file lock).

    The OS drops the lock when the holder dies, so a killed render never blocks the
    next one.
    """
    with ExitStack() as stack:
        try:
            fh = stack.enter_context(locked_file(project.folder / "render.lock", wait=False))
        except OSError as err:
            raise ProjectError(f"{project.folder} is already being rendered (by another window or process)") from err
        fh.truncate(0)
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        yield


def clean_stale_temp_files(project: Project) -> int:
    """Remove temp files a killed render left in ``cache/`` (safe under the render lock:
    no other writer can be mid-write). Returns how many were removed."""
    removed = 0
    for tmp in project.cache.root.glob("*/.*.tmp"):
        try:
            tmp.unlink()
            removed += 1
        except OSError as err:
            log.warning("cannot remove stale temp file %s: %s", tmp, err)
    return removed


def prepare_voices(project: Project, voice_ids: Iterable[str], lookup: Callable[[str], Any] | None = None) -> None:
    """Record each voice's model-file fingerprint (it is part of every cache key).

    ``lookup`` maps a voice id to something with ``model_path`` (a VoiceInfo);
    default :func:`studio.engine.voice.catalog.get_voice`. A missing voice raises VoiceError.
    """
    if lookup is None:
        from studio.engine.voice.catalog import get_voice as lookup
    known = project.voice_fingerprints()
    for vid in sorted(set(voice_ids)):
        fingerprint = file_fingerprint(lookup(vid).model_path)
        if known.get(vid) != fingerprint:
            if vid in known:
                log.info("voice %s changed on disk; its sentences will render again", vid)
            project.set_voice_fingerprint(vid, fingerprint)


def verify_present(project: Project, rows: Iterable[SentenceRow]) -> int:
    """Send ``done`` rows whose cache file vanished or changed size back to pending.

    A cheap stat per sentence; the full checksum is verified when audio is read
    for export. Returns how many were invalidated.
    """
    bad = 0
    for row in rows:
        if row.state != "done" or not row.cache_key:
            continue
        entry = project.cache_entry(row.cache_key)
        if entry is not None and not project.cache.looks_present(entry):
            log.warning("cached audio for sentence %d is missing; it will be rendered again", row.id)
            bad += project.invalidate_key(row.cache_key)
    return bad
