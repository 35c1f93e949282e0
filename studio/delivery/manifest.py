"""``manifest.json``: what a delivery holds, for the producer and for the store's questions.

Why a file of its own beside the audio: a store asks what the narration is, what the
cover was, which chapter a file holds and whether each file met the levels; the
manifest answers from the export itself (checksums, measurements, the disclosure),
so nobody has to measure the files again.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from studio import __version__
from studio.audio.acx import AcxReport
from studio.audio.cover import CoverReport
from studio.audio.mastering import MasteringConfig
from studio.audio.measure import Levels
from studio.audio.pcm import atomic_write_bytes
from studio.audio.tags import BookMeta, ChapterMark


@dataclass(frozen=True)
class PublishedFile:
    """One delivered file. ``kind``: "chapter", "credits", "sample" or "book";
    ``book_chapters`` the book's chapter numbers it holds and ``number`` the file's own
    number (its name's and track tag's): both the one chapter number the tree,
    ``--chapters`` and ``studio inspect`` use (:mod:`studio.project.numbering`); the
    opening credits are 0, the closing credits one past the book's last chapter, the
    retail sample has none."""

    path: Path
    title: str
    chapters: tuple[ChapterMark, ...]
    levels: Levels
    acx: AcxReport
    sha256: str
    subtitles: tuple[Path, ...] = ()
    kind: str = "chapter"
    book_chapters: tuple[int, ...] = ()
    number: int | None = None

    @property
    def duration(self) -> float:
        return self.levels.duration

    @property
    def holds(self) -> str:
        """What the file holds, for a listing: "book chapter 4", "credits", "sample from book chapter 4"."""
        if not self.book_chapters:
            return "" if self.kind == "chapter" else self.kind
        nums = ", ".join(str(n) for n in self.book_chapters)
        what = "chapter" if len(self.book_chapters) == 1 else "chapters"
        return f"{'sample from ' if self.kind == 'sample' else ''}book {what} {nums}"


MANIFEST_NAME = "manifest.json"

#: How the files are numbered, said in the manifest for whoever receives the files.
NUMBERING = ("a file's number (its name's and its track tag's, 'number') is the book's chapter number, as the "
             "studio's chapter list, studio inspect and --chapters count them (front matter included, so a "
             "chapter left out leaves a gap); the track total is the book's chapter count, one more when closing "
             "credits are delivered; opening credits are 0, closing credits one past the book's last chapter; the "
             "retail sample is unnumbered; a chapter split for length keeps its number in every part, the name "
             "saying '(part n)'; 'book_chapters' lists the book chapters a file holds")


def write_manifest(path: Path, *, fmt: str, mastering: MasteringConfig, meta: BookMeta,
                   files: Sequence[PublishedFile], warnings: Sequence[str], cover: CoverReport | None = None,
                   acx_format: bool = False) -> Path:
    """``manifest.json``: the book (narrator, disclosure, cover), the mastering targets,
    and per file its number and what it holds (kind, the book's chapter numbers), its duration,
    chapters (title, start), checksum, loudness figures and check verdict."""
    doc = {
        "generator": f"studio {__version__}",
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "book": {"title": meta.title, "author": meta.author, "narrator": meta.narrator, "year": meta.year,
                 "genre": meta.genre, "disclosure": meta.disclosure, "copyright": meta.copyright,
                 "cast": [{"character": name, "voice": voice} for name, voice in meta.cast],
                 "cover": ({"mime": meta.cover.mime, **cover.to_dict()} if cover else {"mime": meta.cover.mime})
                 if meta.cover else None},
        "format": fmt,
        "check": "ACX check" if acx_format else "levels checked",
        "numbering": NUMBERING,
        "mastering": {k: getattr(mastering, k) for k in (
            "target_rms_db", "peak_ceiling_db", "head_s", "tail_s", "room_tone_db", "sample_rate")},
        "passed": all(f.acx.passed for f in files),
        "warnings": list(warnings),
        "files": [{
            "file": f.path.name,
            "kind": f.kind,
            "number": f.number,
            "book_chapters": list(f.book_chapters),
            "duration": round(f.duration, 3),
            "sha256": f.sha256,
            "chapters": [{"title": m.title, "start": round(m.start, 3), "end": round(m.end, 3)} for m in f.chapters],
            "subtitles": [p.name for p in f.subtitles],
            "levels": f.levels.to_dict(),
            "acx": f.acx.to_dict(),
        } for f in files],
    }
    atomic_write_bytes(path, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return path


__all__ = ["MANIFEST_NAME", "NUMBERING", "PublishedFile", "write_manifest"]
