"""Publish-ready export: mastered files in a delivery format, measured, checked
against the ACX rules, with subtitles and a manifest.

Why a job of its own beside :mod:`studio.jobs.export`: the plain export writes
what was rendered, as it was rendered; publishing adds what stores insist on
(mastering, per-file checks, chapters inside one M4B, tags, cover art) and what
the producer needs to answer their questions (a manifest with checksums and
measurements). Like the plain export it reads only verified audio from the
cache and never synthesizes: an incomplete chapter is refused with the reason.

The work per file: plan the parts (a chapter over the length limit is split at a
paragraph), assemble each part with the clip spans recorded, master it, encode
it, measure the *encoded* file, and if a lossy encoder pushed the true peak over
the ceiling, master again with that much more headroom. Whole-book formats (M4B,
single-file MP3) master each chapter on its own (one chapter's level does not
depend on another's), park the PCM in a temp file, and encode the book in one go
with a chapter marker per chapter.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from studio import __version__
from studio.audio.acx import AcxReport, AcxRules, check_file
from studio.audio.assemble import Span, iter_chapter
from studio.audio.containers import encoding, write_delivery
from studio.audio.mastering import Master, MasteringConfig, master
from studio.audio.measure import Levels, measure_file
from studio.audio.pcm import atomic_write_bytes, to_int16
from studio.audio.subtitles import Cue, cues_from_spans, to_srt, to_vtt
from studio.audio.tags import BookMeta, ChapterMark, Cover, Track
from studio.audio.writers import AudioInput
from studio.core.errors import ProjectError, StudioError
from studio.core.files import sha256_file
from studio.jobs.export import (
    CorruptAudio,
    chapter_clips,
    clean_filename,
    default_chapters,
    remove_stale_temps,
    require_complete,
    safe_filename,
)
from studio.project.store import Project, SentenceRow

log = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
#: Times the encoded file is re-mastered when its true peak came out over the ceiling.
_PEAK_RETRIES = 2


@dataclass(frozen=True)
class PublishOptions:
    """What to deliver. ``chapters`` are 0-based (None: all but front matter);
    ``cover`` an image file (None: the EPUB's cover, if the source is an EPUB);
    ``narrator`` None: the project's voice; ``single_file`` makes one MP3 with
    ID3 chapter frames (M4B is always one file)."""

    fmt: str = "m4b"
    chapters: Sequence[int] | None = None
    mastering: MasteringConfig = field(default_factory=MasteringConfig)
    rules: AcxRules = field(default_factory=AcxRules)
    cover: Path | None = None
    narrator: str | None = None
    year: str | None = None
    subtitles: bool = True
    single_file: bool = False


@dataclass(frozen=True)
class PublishProgress:
    """``done`` of ``total`` chapters mastered; ``current`` is being worked on."""

    done: int
    total: int
    current: str = ""


@dataclass(frozen=True)
class PublishedFile:
    path: Path
    title: str
    chapters: tuple[ChapterMark, ...]
    levels: Levels
    acx: AcxReport
    sha256: str
    subtitles: tuple[Path, ...] = ()

    @property
    def duration(self) -> float:
        return self.levels.duration


@dataclass(frozen=True)
class PublishResult:
    files: tuple[PublishedFile, ...]
    manifest: Path
    warnings: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return all(f.acx.passed for f in self.files)


@dataclass
class _Part:
    """One output piece of a chapter: its rows (the first part keeps the title)."""

    chapter: int
    title: str
    rows: list[SentenceRow]
    number: int = 1
    #: the producer's chapter name and file number (chapter control: numbered over the
    #: included chapters); ``title`` stays the imported one, which spots a spoken heading
    name: str = ""
    ordinal: int = 0


def plan_parts(project: Project, chapters: Sequence[int], max_seconds: float) -> tuple[list[_Part], list[str]]:
    """Chapters -> parts no longer than ``max_seconds`` (rendered lengths plus pauses),
    split only between paragraphs; also the warnings for each split chapter."""
    pauses = project.settings().pauses
    infos = project.chapters()
    numbers = {c.index: c.number for c in infos}
    names = {c.index: c.name for c in infos}
    parts: list[_Part] = []
    warnings: list[str] = []
    for idx in chapters:
        rows = project.sentences([idx])
        if not rows:
            warnings.append(f"chapter {idx + 1} '{infos[idx].title}' has nothing to say; no file written")
            continue
        title_rows = [r for r in rows if r.is_title]
        current = _Part(idx, infos[idx].title, list(title_rows), 1, names[idx], numbers[idx])
        length = sum(r.duration or 0.0 for r in title_rows) + (pauses.title if title_rows else 0.0)
        paragraphs: dict[int, list[SentenceRow]] = {}
        for r in rows:
            if not r.is_title:
                paragraphs.setdefault(int(r.paragraph or 0), []).append(r)
        chapter_parts = [current]
        for para_rows in paragraphs.values():
            spoken = [r for r in para_rows if (r.duration or 0) > 0]
            size = sum(r.duration or 0.0 for r in spoken) + pauses.sentence * max(0, len(spoken) - 1)
            size += pauses.paragraph if spoken else 0.0
            if length + size > max_seconds and any(not r.is_title for r in current.rows):
                current = _Part(idx, infos[idx].title, [], len(chapter_parts) + 1, names[idx], numbers[idx])
                chapter_parts.append(current)
                length = 0.0
            current.rows.extend(para_rows)
            length += size
        if len(chapter_parts) > 1:
            warnings.append(f"chapter {idx + 1} '{infos[idx].title}' is longer than {max_seconds / 60:g} minutes; "
                            f"split into {len(chapter_parts)} files at paragraph breaks")
        parts += chapter_parts
    return parts, warnings


def _assemble(project: Project, part: _Part) -> tuple[np.ndarray, int, list[Span]]:
    """The part's audio at the voice's rate, and where each sentence landed."""
    pauses = replace(project.settings().pauses, chapter_end=0.0)
    title, paragraphs = chapter_clips(project, part.rows, part.title, pauses)
    paras = list(paragraphs)
    first = title or next((c for p in paras for c in p), None)
    rate = first.sample_rate if first is not None else 22050
    spans: list[Span] = []
    blocks = list(iter_chapter(title, paras, pauses, rate, spans))
    return np.concatenate(blocks).astype(np.float32), rate, spans


def _master_part(project: Project, part: _Part, cfg: MasteringConfig) -> tuple[Master, list[Cue]]:
    try:
        audio, rate, spans = _assemble(project, part)
    except CorruptAudio as bad:
        project.invalidate_key(bad.key)
        raise ProjectError(f"chapter {part.chapter + 1} has missing or corrupt audio in the cache; "
                           "render the project again to repair it") from None
    done = master(audio, rate, cfg, seed=part.chapter * 100 + part.number)
    return done, cues_from_spans(done.audio, done.sample_rate, spans, rate, shift_s=done.shift_s)


def book_meta(project: Project, options: PublishOptions) -> BookMeta:
    """Title, author, narrator (the voice), year and cover for the files' tags."""
    book = project.book()
    cover = Cover.from_file(options.cover) if options.cover else _source_cover(project)
    found = re.search(r"\b(1[5-9]|20)\d\d\b", book.metadata.get("date", ""))
    year = options.year or (found.group(0) if found else str(_dt.date.today().year))
    narrator = options.narrator or project.settings().voice_id
    return BookMeta(title=book.title, author=book.author, narrator=narrator, year=year, cover=cover)


def _source_cover(project: Project) -> Cover | None:
    from studio.text.formats.epub import read_cover

    source = Path(project.source()[0] or "")
    if source.suffix.lower() != ".epub":
        return None
    if not source.is_file():
        log.warning("the source EPUB %s is gone; exporting without cover art (pick one with --cover)", source)
        return None
    try:
        found = read_cover(source)
    except StudioError as err:
        log.warning("cannot read the cover of %s: %s", source, err)
        return None
    return Cover(found[0], found[1]) if found else None


def _write_subtitles(base: Path, cues: list[Cue]) -> tuple[Path, ...]:
    srt, vtt = base.with_suffix(".srt"), base.with_suffix(".vtt")
    atomic_write_bytes(srt, to_srt(cues).encode("utf-8"))
    atomic_write_bytes(vtt, to_vtt(cues).encode("utf-8"))
    return srt, vtt


def _deliver(path: Path, fmt: str, meta: BookMeta, track: Track, marks: Sequence[ChapterMark],
             rules: AcxRules, cfg: MasteringConfig, produce: Callable[[MasteringConfig], AudioInput],
             *, whole_book: bool = False) -> tuple[Levels, AcxReport]:
    """Encode (``produce(cfg)`` gives the audio), measure the encoded file, and encode
    again with more headroom while its true peak is over the ceiling."""
    remove_stale_temps(path, fmt)
    for attempt in range(_PEAK_RETRIES + 1):
        write_delivery(path, produce(cfg), cfg.sample_rate, fmt, meta, track, marks)
        levels = measure_file(path)
        over = levels.true_peak_db - cfg.peak_ceiling_db
        if over <= 0 or attempt == _PEAK_RETRIES:
            break
        log.info("%s: the encoder lifted the true peak %.2f dB over the ceiling; mastering again", path.name, over)
        cfg = cfg.quieter(over + 0.2)
    return levels, check_file(path, levels=levels, rules=rules, whole_book=whole_book)


def publish(
    project: Project,
    out_dir: str | Path,
    options: PublishOptions | None = None,
    *,
    progress: Callable[[PublishProgress], None] | None = None,
) -> PublishResult:
    """Write the delivery files, their subtitles and ``manifest.json`` into ``out_dir``."""
    opts = options or PublishOptions()
    enc = encoding(opts.fmt)
    infos = project.chapters()
    wanted = sorted(set(opts.chapters)) if opts.chapters is not None else default_chapters(project)
    for idx in wanted:
        if not 0 <= idx < len(infos):
            raise ProjectError(f"chapter {idx + 1} does not exist (the book has {len(infos)})")
    require_complete(project, wanted)
    meta = book_meta(project, opts)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    whole_book = enc.whole_book or (opts.fmt == "mp3" and opts.single_file)
    parts, warnings = plan_parts(project, wanted, opts.rules.max_minutes * 60 - opts.mastering.head_s
                                 - opts.mastering.tail_s if not whole_book else float("inf"))
    for w in warnings:
        log.warning("%s", w)
    report = progress or (lambda p: None)
    width = max(2, len(str(len(infos))))
    if whole_book:
        files = [_publish_book(project, out, opts, meta, parts, report, width)]
    else:
        files = []
        for n, part in enumerate(parts, 1):
            report(PublishProgress(n - 1, len(parts), part.name))
            track = Track(_part_title(parts, part), n, len(parts))
            files.append(_publish_part(project, out, opts, meta, part, track, width))
    report(PublishProgress(len(parts), len(parts), ""))
    manifest = write_manifest(out, opts, meta, files, warnings)
    return PublishResult(tuple(files), manifest, tuple(warnings))


def _part_title(parts: list[_Part], part: _Part) -> str:
    """The chapter's title, with "(part n)" when the chapter was split."""
    split = any(p.chapter == part.chapter and p.number > 1 for p in parts)
    return f"{part.name} (part {part.number})" if split else part.name


def _publish_part(project: Project, out: Path, opts: PublishOptions, meta: BookMeta, part: _Part, track: Track,
                  width: int) -> PublishedFile:
    """One chapter (or part of one) in a file of its own, with its subtitles."""
    path = out / f"{safe_filename(track.title, part.ordinal, width)}{encoding(opts.fmt).suffix}"
    cues: list[Cue] = []

    def produce(cfg: MasteringConfig) -> np.ndarray:
        mastered, found = _master_part(project, part, cfg)
        cues[:] = found  # the cues of the master that was delivered
        return mastered.audio

    levels, acx = _deliver(path, opts.fmt, meta, track, (), opts.rules, opts.mastering, produce)
    subs = _write_subtitles(path, cues) if opts.subtitles else ()
    log.info("wrote %s (%.1f s, ACX %s)", path, levels.duration, "pass" if acx.passed else "FAIL")
    mark = ChapterMark(track.title, 0.0, levels.duration)
    return PublishedFile(path, track.title, (mark,), levels, acx, sha256_file(path), subs)


def _publish_book(project: Project, out: Path, opts: PublishOptions, meta: BookMeta, parts: list[_Part],
                  report: Callable[[PublishProgress], None], width: int) -> PublishedFile:
    """One file for the whole book: chapters mastered one by one into a temp PCM file."""
    enc = encoding(opts.fmt)
    path = out / f"{clean_filename(meta.title, 'Audiobook')}{enc.suffix}"
    rate = opts.mastering.sample_rate
    with tempfile.TemporaryDirectory(prefix=".studio-publish-", dir=out) as tmp:
        pcm_path = Path(tmp) / "book.pcm"
        marks: list[ChapterMark] = []
        subs: list[Path] = []
        samples = 0
        with open(pcm_path, "wb") as pcm:
            for n, part in enumerate(parts):
                report(PublishProgress(n, len(parts), part.name))
                mastered, cues = _master_part(project, part, opts.mastering)
                pcm.write(to_int16(mastered.audio).tobytes())
                start = samples / rate
                samples += mastered.audio.size
                marks.append(ChapterMark(part.name, start, samples / rate))
                if opts.subtitles:
                    base = out / safe_filename(part.name, part.ordinal, width)
                    subs += _write_subtitles(base, cues)

        def produce(cfg: MasteringConfig) -> Iterator[np.ndarray]:
            # the chapters are mastered already: more headroom is plain attenuation
            gain = 10 ** (-(cfg.peak_margin_db - opts.mastering.peak_margin_db) / 20)
            with open(pcm_path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 21), b""):
                    yield np.frombuffer(chunk, dtype="<i2").astype(np.float32) * (gain / 32768.0)

        track = Track(meta.title, 1, 1)
        levels, acx = _deliver(path, opts.fmt, meta, track, marks, opts.rules, opts.mastering, produce,
                               whole_book=True)
    log.info("wrote %s (%d chapters, %.1f s)", path, len(marks), levels.duration)
    return PublishedFile(path, meta.title, tuple(marks), levels, acx, sha256_file(path), tuple(subs))


def write_manifest(out: Path, opts: PublishOptions, meta: BookMeta, files: Sequence[PublishedFile],
                   warnings: Sequence[str]) -> Path:
    """``manifest.json``: the book, the mastering targets, and per file its duration,
    chapters (title, start), checksum, loudness figures and ACX verdict."""
    doc = {
        "generator": f"studio {__version__}",
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "book": {"title": meta.title, "author": meta.author, "narrator": meta.narrator, "year": meta.year,
                 "genre": meta.genre, "cover": meta.cover.mime if meta.cover else None},
        "format": opts.fmt,
        "mastering": {k: getattr(opts.mastering, k) for k in (
            "target_rms_db", "peak_ceiling_db", "head_s", "tail_s", "room_tone_db", "sample_rate")},
        "passed": all(f.acx.passed for f in files),
        "warnings": list(warnings),
        "files": [{
            "file": f.path.name,
            "duration": round(f.duration, 3),
            "sha256": f.sha256,
            "chapters": [{"title": m.title, "start": round(m.start, 3), "end": round(m.end, 3)} for m in f.chapters],
            "subtitles": [p.name for p in f.subtitles],
            "levels": f.levels.to_dict(),
            "acx": f.acx.to_dict(),
        } for f in files],
    }
    path = out / MANIFEST_NAME
    atomic_write_bytes(path, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return path


__all__ = ["MANIFEST_NAME", "PublishOptions", "PublishProgress", "PublishResult", "PublishedFile", "book_meta",
           "plan_parts", "publish", "write_manifest"]
