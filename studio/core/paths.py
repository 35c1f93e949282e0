"""Where the studio keeps what it can rebuild: one cache folder for every part.

Why one function: the INT8 model, TensorRT plans and the benchmark file the desktop
app reads must land in the same place, or a build done by ``studio bench`` is not
found by ``studio render``. ``$STUDIO_CACHE_DIR`` wins, then
``$XDG_CACHE_HOME/studio``, then ``~/.cache/studio``.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "STUDIO_CACHE_DIR"


def cache_dir() -> Path:
    """The studio's cache folder (not created here; writers create what they need)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "studio"


def user_data_dir(honor_xdg_everywhere: bool = False) -> Path:
    """The platform's per-user data folder (voices live under it; coqui-tts's downloads too,
    where ``$XDG_DATA_HOME`` counts on every platform, as coqui-tts has it)."""
    import sys

    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg and (honor_xdg_everywhere or sys.platform.startswith("linux")):
        return Path(xdg).expanduser()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    return Path.home() / ".local" / "share"
