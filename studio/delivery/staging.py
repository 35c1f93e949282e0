"""An export's files written in a hidden folder and moved into place only when all are done.

Why: a delivery is a set (chapter files, credits, sample, subtitles, manifest);
a half-written set on a full disk or a read-only folder -- subtitles without their
book, an empty folder after a refused export -- is worse than none, because the
producer may upload it. Every file goes into ``.studio-export-XXXX`` inside the
output folder (the same file system, so the final renames need no space), and
:meth:`Staging.commit` renames them into place, the manifest last; on any error
the staging folder goes, and the output folder too when this export made it and
left it empty. Errors become one line naming what and where (``DiskFull`` or a
``StudioError``), which the CLI prints with exit code 2.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from studio.audio.pcm import fsync_dir
from studio.core.errors import DiskFull, StudioError, is_disk_full

log = logging.getLogger(__name__)

_PREFIX = ".studio-export-"
_OWNER = ".owner"  # the exporting process's id: another export's staging folder is left alone


def _owner_alive(folder: Path) -> bool:
    """Whether the process that made a staging folder still runs (unknown: assume it does not)."""
    try:
        pid = int((folder / _OWNER).read_text(encoding="ascii"))
        os.kill(pid, 0)
    except PermissionError:  # someone else's process, running
        return True
    except (OSError, ValueError):
        return False
    return True


def _fail(err: OSError, where: Path) -> StudioError:
    if is_disk_full(err):
        return DiskFull(getattr(err, "filename", None) or where)
    what = err.strerror or str(err)
    return StudioError(f"cannot write the export in {where}: {what}"
                       + (f" ({err.filename})" if getattr(err, "filename", None) else ""))


class Staging:
    """``with Staging(out) as stage:`` write under ``stage.dir``, then ``stage.commit(names)``."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.dir = self.out
        self._made: list[Path] = []
        self._committed = False

    def __enter__(self) -> "Staging":
        missing = []
        p = self.out
        while not p.exists():
            missing.append(p)
            p = p.parent
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            self._made = missing  # deepest first: removed in this order when the export fails
            self.dir = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=self.out))
            (self.dir / _OWNER).write_text(str(os.getpid()), encoding="ascii")
        except OSError as err:
            if self.dir != self.out:
                shutil.rmtree(self.dir, ignore_errors=True)
            self._remove_made()
            raise _fail(err, self.out) from err
        for stale in self.out.glob(f"{_PREFIX}*"):
            if stale != self.dir and stale.is_dir() and not _owner_alive(stale):  # left by a killed export
                shutil.rmtree(stale, ignore_errors=True)
        return self

    def path(self, name: str) -> Path:
        """Where to write ``name`` now (inside the staging folder)."""
        return self.dir / name

    def final(self, name: str) -> Path:
        """Where ``name`` will be once committed."""
        return self.out / name

    def commit(self, names: list[str]) -> None:
        """Rename ``names`` into the output folder in this order (put the manifest last)."""
        try:
            for name in names:
                os.replace(self.dir / name, self.out / name)
            fsync_dir(self.out)
        except OSError as err:
            raise _fail(err, self.out) from err
        self._committed = True
        shutil.rmtree(self.dir, ignore_errors=True)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._committed:
            return
        shutil.rmtree(self.dir, ignore_errors=True)
        self._remove_made()
        if isinstance(exc, OSError) and not isinstance(exc, StudioError):
            raise _fail(exc, self.out) from exc

    def _remove_made(self) -> None:
        for folder in self._made:
            try:
                folder.rmdir()
            except OSError:
                break  # not empty (someone else's files) or gone: leave it


__all__ = ["Staging"]
