"""Where a manuscript's project folder is: named here, apart from the store, so a render can
decide before importing the store whether its project is new (and start its model early)."""

from __future__ import annotations

from pathlib import Path

PROJECT_SUFFIX = ".studio"


def default_project_dir(manuscript: str | Path, out_dir: str | Path) -> Path:
    """``<out>/<manuscript stem>.studio``: next to the exported chapters."""
    return Path(out_dir) / f"{Path(manuscript).stem}{PROJECT_SUFFIX}"
