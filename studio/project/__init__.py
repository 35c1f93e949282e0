"""Projects: a folder with ``project.sqlite`` (book, settings, render state) and an
audio cache of every rendered sentence, so renders resume and re-renders reuse.

The names below are loaded when first asked for (PEP 562): importing one light module of
the package (``studio.project.settings``) must not import the store, the cast and the
audio cache, which a render's first second needs the CPU for (its model process starts).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from studio.project.cache import CACHE_FORMAT_VERSION, AudioCache, CacheEntry, VoiceIdentity, cache_key
    from studio.project.records import ChapterInfo, SentenceRow
    from studio.project.settings import ProjectSettings
    from studio.project.store import Project

_WHERE = {
    "CACHE_FORMAT_VERSION": "cache", "AudioCache": "cache", "CacheEntry": "cache", "VoiceIdentity": "cache",
    "cache_key": "cache", "ProjectSettings": "settings", "Project": "store", "ChapterInfo": "records",
    "SentenceRow": "records",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'studio.project' has no attribute {name!r}")
    return getattr(importlib.import_module(f"studio.project.{module}"), name)
