"""Projects: a folder with ``project.sqlite`` (book, settings, render state) and an
audio cache of every rendered sentence, so renders resume and re-renders reuse.
"""

from studio.project.cache import CACHE_FORMAT_VERSION, AudioCache, CacheEntry, VoiceIdentity, cache_key
from studio.project.settings import ProjectSettings
from studio.project.store import Project
from studio.project.records import ChapterInfo, SentenceRow

__all__ = [
    "CACHE_FORMAT_VERSION",
    "AudioCache",
    "CacheEntry",
    "ChapterInfo",
    "Project",
    "ProjectSettings",
    "SentenceRow",
    "VoiceIdentity",
    "cache_key",
]
