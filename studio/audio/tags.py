"""Metadata inside delivered files, written with ``mutagen``.

Why mutagen and not ffmpeg's ``-metadata``: stores and players read specific
frames (ID3 ``TRCK`` as n/N, ``APIC`` front cover, ``CHAP``/``CTOC`` chapter
frames; MP4 ``covr`` and the audiobook media kind; Vorbis
``METADATA_BLOCK_PICTURE``) that ffmpeg writes only partly or not at all. Tags
are written to the finished temp file before it is renamed into place, so a file
under its final name is always complete and tagged.
"""

from __future__ import annotations

import base64
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from studio.core.errors import DiskFull, StudioError, is_disk_full


@dataclass(frozen=True)
class Cover:
    """Cover art: the image bytes and their MIME type (JPEG or PNG)."""

    data: bytes
    mime: str

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "cover") -> "Cover":
        if data.startswith(b"\xff\xd8\xff"):
            return cls(data, "image/jpeg")
        if data.startswith(b"\x89PNG\r\n\x1a\n"):
            return cls(data, "image/png")
        raise StudioError(f"{source}: cover art must be a JPEG or PNG image")

    @classmethod
    def from_file(cls, path: str | Path) -> "Cover":
        try:
            data = Path(path).read_bytes()
        except OSError as err:
            raise StudioError(f"cannot read the cover image {path}: {err.strerror or err}") from err
        return cls.from_bytes(data, str(path))


@dataclass(frozen=True)
class BookMeta:
    """What every file of a book carries; ``narrator`` is the voice (or the producer's
    entry), ``disclosure`` the line saying the narration is synthetic (stores require it)."""

    title: str
    author: str = ""
    narrator: str = ""
    year: str = ""
    genre: str = "Audiobook"
    cover: Cover | None = None
    disclosure: str = ""
    #: the cast when the book is cast: (character, who voices it) pairs, for the manifest
    cast: tuple[tuple[str, str], ...] = ()
    #: the copyright notice (the book's rights and the recording's holder), as the closing credits say it
    copyright: str = ""

    @property
    def comment(self) -> str:
        """The comment/description every file carries: narrator and disclosure."""
        parts = [f"Narrated by {self.narrator}." if self.narrator else "", self.disclosure]
        return " ".join(p for p in parts if p)


@contextmanager
def tag_errors(path: str | Path) -> Iterator[None]:
    """mutagen's errors as the studio's: a full disk is :class:`DiskFull`, anything
    else one line naming the file (mutagen wraps the OSError in its own exception)."""
    from mutagen import MutagenError

    try:
        yield
    except (MutagenError, OSError) as err:
        cause = err if isinstance(err, OSError) else (err.__cause__ or err.__context__)
        if cause is not None and is_disk_full(cause):
            raise DiskFull(path) from err
        detail = getattr(cause, "strerror", None) or str(cause or err)
        raise StudioError(f"cannot write the tags of {Path(path).name}: {detail}") from err


@dataclass(frozen=True)
class Track:
    """One file's place in the book: its title and number ``n`` of ``total``."""

    title: str
    n: int = 1
    total: int = 1


@dataclass(frozen=True)
class ChapterMark:
    """A chapter inside a single file; times in seconds from the file's start."""

    title: str
    start: float
    end: float


def tag_mp3(path: str | Path, meta: BookMeta, track: Track, chapters: Sequence[ChapterMark] = ()) -> None:
    """ID3v2.3: title, track n/N, album, artist and album artist, narrator, comment
    with the disclosure, year (TYER: v2.3 has no TDRC), copyright (TCOP), genre, cover, chapters in time order."""
    with tag_errors(path):
        _tag_mp3(path, meta, track, chapters)


def _tag_mp3(path: str | Path, meta: BookMeta, track: Track, chapters: Sequence[ChapterMark]) -> None:
    from mutagen.id3 import APIC, CHAP, COMM, CTOC, TALB, TCOM, TCON, TCOP, TDRC, TIT2, TPE1, TPE2, TRCK, CTOCFlags
    from mutagen.id3 import delete as delete_id3

    delete_id3(str(path))  # ffmpeg's own frames (encoder name) are replaced by ours
    tags = _ordered_id3()
    tags.add(TIT2(encoding=3, text=track.title))
    tags.add(TRCK(encoding=3, text=f"{track.n}/{track.total}"))
    tags.add(TALB(encoding=3, text=meta.title))
    if meta.author:
        tags.add(TPE1(encoding=3, text=meta.author))
        tags.add(TPE2(encoding=3, text=meta.author))
    if meta.narrator:
        tags.add(TCOM(encoding=3, text=meta.narrator))
    if meta.comment:
        tags.add(COMM(encoding=3, lang="eng", desc="", text=meta.comment))
    if meta.year:
        tags.add(TDRC(encoding=3, text=meta.year))  # becomes TYER below
    if meta.copyright:
        tags.add(TCOP(encoding=3, text=meta.copyright))
    tags.add(TCON(encoding=3, text=meta.genre))
    if meta.cover is not None:
        tags.add(APIC(encoding=3, mime=meta.cover.mime, type=3, desc="Cover", data=meta.cover.data))
    if chapters:
        ids = [f"chp{i:04d}" for i in range(len(chapters))]
        tags.add(CTOC(element_id="toc", flags=CTOCFlags.TOP_LEVEL | CTOCFlags.ORDERED, child_element_ids=ids,
                      sub_frames=[TIT2(encoding=3, text=meta.title)]))
        for cid, mark in zip(ids, chapters):
            tags.add(CHAP(element_id=cid, start_time=int(round(mark.start * 1000)),
                          end_time=int(round(mark.end * 1000)), sub_frames=[TIT2(encoding=3, text=mark.title)]))
    tags.update_to_v23()  # TDRC -> TYER, which is what v2.3 readers look for
    tags.save(str(path), v2_version=3)


def _ordered_id3() -> "object":
    """An empty ID3 tag that writes its CHAP frames in time order (mutagen imported lazily)."""
    from mutagen.id3 import ID3, ID3Tags

    class ChaptersInOrder(ID3):
        """An ID3 tag that writes its CHAP frames in time order, after the others.

        mutagen sorts frames by size when it saves, so a single-file MP3's chapters
        came out in the order of their titles' lengths (ffprobe lists chapters in
        frame order, whatever the table of contents says)."""

        def _write(self, config):  # type: ignore[no-untyped-def]
            chaps = sorted(self.getall("CHAP"), key=lambda c: (c.start_time, c.element_id))
            self.delall("CHAP")
            try:
                data = super()._write(config)
                for chap in chaps:
                    one = ID3Tags()
                    one.add(chap)
                    data += one._write(config)
            finally:
                for chap in chaps:
                    self.add(chap)
            return data

    return ChaptersInOrder()


def _picture_block(cover: Cover) -> "object":
    from mutagen.flac import Picture

    pic = Picture()
    pic.type = 3  # front cover
    pic.mime = cover.mime
    pic.desc = "Cover"
    pic.data = cover.data
    return pic


def _vorbis_fields(meta: BookMeta, track: Track) -> dict[str, str]:
    fields = {"TITLE": track.title, "ALBUM": meta.title, "TRACKNUMBER": str(track.n),
              "TRACKTOTAL": str(track.total), "GENRE": meta.genre}
    if meta.author:
        fields["ARTIST"] = meta.author
        fields["ALBUMARTIST"] = meta.author
    if meta.narrator:
        fields["PERFORMER"] = meta.narrator
        fields["COMPOSER"] = meta.narrator
    if meta.comment:
        fields["COMMENT"] = meta.comment
        fields["DESCRIPTION"] = meta.comment
    if meta.year:
        fields["DATE"] = meta.year
    if meta.copyright:
        fields["COPYRIGHT"] = meta.copyright
    return fields


def tag_vorbis(path: str | Path, meta: BookMeta, track: Track) -> None:
    """Vorbis comments (FLAC or Ogg Opus, by the file's contents) with the cover picture."""
    with tag_errors(path):
        _tag_vorbis(path, meta, track)


def _tag_vorbis(path: str | Path, meta: BookMeta, track: Track) -> None:
    from mutagen import File

    audio = File(str(path))
    if audio is None:
        raise StudioError(f"{Path(path).name}: not a FLAC or Opus file mutagen can tag")
    if audio.tags is None:
        audio.add_tags()
    for key, value in _vorbis_fields(meta, track).items():
        audio[key] = [value]
    if meta.cover is not None:
        pic = _picture_block(meta.cover)
        if hasattr(audio, "add_picture"):  # FLAC: a PICTURE metadata block
            audio.clear_pictures()
            audio.add_picture(pic)
        else:  # Ogg: the same block, base64, in a comment
            audio["METADATA_BLOCK_PICTURE"] = [base64.b64encode(pic.write()).decode("ascii")]
    audio.save()


def tag_mp4(path: str | Path, meta: BookMeta, track: Track | None = None) -> None:
    """MP4/M4B atoms: title, album, author (artist, album artist), narrator (composer),
    comment and description with the disclosure, year, copyright (cprt), genre, cover, kind audiobook."""
    with tag_errors(path):
        _tag_mp4(path, meta, track)


def _tag_mp4(path: str | Path, meta: BookMeta, track: Track | None) -> None:
    from mutagen.mp4 import MP4, MP4Cover

    audio = MP4(str(path))
    if audio.tags is None:
        audio.add_tags()
    tags = audio.tags
    tags["\xa9nam"] = [track.title if track else meta.title]
    tags["\xa9alb"] = [meta.title]
    if meta.author:
        tags["\xa9ART"] = [meta.author]
        tags["aART"] = [meta.author]
    if meta.narrator:
        tags["\xa9wrt"] = [meta.narrator]
    if meta.comment:
        tags["\xa9cmt"] = [meta.comment]
        tags["desc"] = [meta.comment]
    if meta.year:
        tags["\xa9day"] = [meta.year]
    if meta.copyright:
        tags["cprt"] = [meta.copyright]
    tags["\xa9gen"] = [meta.genre]
    tags["stik"] = [2]  # media kind: audiobook
    if track is not None:
        tags["trkn"] = [(track.n, track.total)]
    if meta.cover is not None:
        kind = MP4Cover.FORMAT_PNG if meta.cover.mime == "image/png" else MP4Cover.FORMAT_JPEG
        tags["covr"] = [MP4Cover(meta.cover.data, imageformat=kind)]
    audio.save()


__all__ = ["BookMeta", "ChapterMark", "Cover", "Track", "tag_errors", "tag_mp3", "tag_mp4", "tag_vorbis"]
