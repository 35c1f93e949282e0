"""Voices and models fetched by name: ``studio voices add NAME`` and the desktop's library,
each routed to the family that downloads it (:func:`studio.engine.families.fetcher`).

Why here: which downloader a name goes to, and where its files land, is a family's
business; the command line and the desktop ask this layer (which may import the engine)
for what can be fetched, the licence to show first, and the fetch itself, and never ask
a family by name. The downloads are resumable and checked, the same files either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from studio.engine.families import families, fetcher
from studio.engine.family import FetchRequest, Fetched, LicenceNote, Offer, Progress
from studio.engine.voice.catalog import default_voices_dir


def offers(voices_dir: Path | None = None) -> tuple[Offer, ...]:
    """What every family offers beyond the Piper catalogue, each marked installed when it is here."""
    folder = voices_dir if voices_dir is not None else default_voices_dir()
    return tuple(o for family in families() for o in family.offers(folder))


def licence(name: str, catalogue: Mapping[str, Any] | None = None) -> LicenceNote:
    """The licence of ``name`` as a producer must read it before fetching (a model card's; the
    others' licences are said on their pages: an empty line). VoiceError: no such model."""
    return fetcher(name).licence(name, catalogue)


def fetch(name: str, *, agree: bool = False, force: bool = False, timeout: float = 30.0,
          progress: Progress | None = None, catalogue: Mapping[str, Any] | None = None,
          base_url: str | None = None, voices_dir: Path | None = None) -> Fetched:
    """Download ``name`` (resumable where its family can: a second call continues a cut one).
    ``catalogue`` and ``base_url`` replace the family's model list and repository (mirrors, tests).
    VoiceError says why not."""
    request = FetchRequest(voices_dir if voices_dir is not None else default_voices_dir(), base_url=base_url,
                           timeout=timeout, force=force, agree=agree, progress=progress, catalogue=catalogue)
    return fetcher(name).fetch(name, request)
