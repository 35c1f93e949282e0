"""Where the studio keeps its files on this machine: cache, settings, data, logs.

Why one module: the INT8 model, TensorRT plans and the benchmark file the desktop
app reads must land in the same place, or a build done by ``studio bench`` is not
found by ``studio render``. The folders follow each system's conventions through
platformdirs: on Linux the XDG ones (``~/.cache/studio``, ``~/.config/studio``,
``~/.local/share/studio``, ``~/.local/state/studio``, each moved by its
``$XDG_*_HOME``); on macOS ``~/Library/Caches/studio`` and ``~/Library/Application
Support/studio``; on Windows ``%LOCALAPPDATA%\\studio`` (settings roam in
``%APPDATA%\\studio``). ``$STUDIO_CACHE_DIR`` moves the cache on every system.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from platformdirs import PlatformDirs

CACHE_ENV = "STUDIO_CACHE_DIR"
APP = "studio"


def _dirs(*, roaming: bool = False) -> PlatformDirs:
    """The system's folders for the studio (imported on use: a run with ``$STUDIO_CACHE_DIR``,
    such as the GPU check on a machine with only the packages it ships, never needs it)."""
    from platformdirs import PlatformDirs

    return PlatformDirs(APP, appauthor=False, roaming=roaming)


def cache_dir() -> Path:
    """The studio's cache folder: what it can rebuild (not created here; writers create what they need)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return _dirs().user_cache_path.expanduser()


def config_dir() -> Path:
    """The user's own settings (their lexicon): roams with a Windows profile."""
    return _dirs(roaming=True).user_config_path.expanduser()


def data_dir() -> Path:
    """What the user downloaded or made (voices): kept, never rebuilt."""
    return _dirs().user_data_path.expanduser()


def state_dir() -> Path:
    """Logs and what a session leaves for the next."""
    return _dirs().user_state_path.expanduser()


__all__ = ["CACHE_ENV", "cache_dir", "config_dir", "data_dir", "state_dir"]
