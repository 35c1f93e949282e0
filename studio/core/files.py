"""Writing and fingerprinting files the way every cache of the studio needs.

Why one place: the INT8 model, the TensorRT plan, the cut ONNX graphs, a Triton
repository and a published book are all reused later on the strength of their file
on disk; a half-written file taken for a whole one costs a broken render hours in.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

from studio.core.system import locked_file


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes, read in chunks (models are tens of MB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


#: digests already computed in this process: (path, size, mtime) -> sha256
_DIGESTS: dict[tuple[str, int, int], str] = {}


def sha256_file_cached(path: str | Path) -> str:
    """:func:`sha256_file`, remembered per process while the file's size and time stay.

    Why: cache keys of builds made from a voice (its 4-D layout, its scripted
    decoder) hash the 60 MB voice, and every stream of a render asks for the key.
    """
    path = Path(path)
    stat = path.stat()
    ident = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    digest = _DIGESTS.get(ident)
    if digest is None:
        digest = _DIGESTS[ident] = sha256_file(path)
    return digest


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename,
    so a reader (or a crash) never sees half a file. ``str`` is written as UTF-8."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_file(path: Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary path beside ``path`` for a library that saves to a path (``onnx.save``,
    ``torch.jit.save``); renamed onto ``path`` when the block ends, removed if it raises,
    so a killed build never leaves half a model under the cache's name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.stem + ".", suffix=suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


@contextlib.contextmanager
def build_lock(path: Path) -> Iterator[None]:
    """Serialise builders of the same key across processes."""
    with locked_file(path):
        yield
