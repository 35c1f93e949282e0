"""Publish-ready export: mastered files in a delivery format, measured, checked
against the ACX rules, with subtitles and a manifest.

Why a job of its own beside :mod:`studio.delivery.export`: the plain export writes
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

The package (see :mod:`studio.delivery.credits`): opening and closing credits spoken
with the project's voice (own files, or the first and last chapter of a whole-book
file), a retail sample as its own mastered file, a cover checked (and made square
on request), the synthetic narration disclosed in tags, manifest and credits.
Everything is written into a hidden staging folder inside the output folder and
renamed into place at the very end (:mod:`studio.delivery.staging`), so an export that
fails -- full disk, read-only folder, corrupt cache -- leaves nothing new behind.
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from studio.audio.acx import AcxReport, AcxRules, check_file
from studio.audio.assemble import Clip, Span, iter_chapter
from studio.audio.containers import set_opus_gain, write_delivery
from studio.audio.cover import CoverReport, fit_cover
from studio.audio.formats import encoding
from studio.audio.mastering import Master, MasteringConfig, master
from studio.audio.measure import Levels, measure_file
from studio.audio.pcm import atomic_write_bytes, to_int16
from studio.audio.subtitles import Cue, cues_from_spans, to_srt, to_vtt
from studio.audio.tags import BookMeta, ChapterMark, Cover, Track
from studio.audio.writers import AudioInput
from studio.core.errors import ProjectError, StudioError
from studio.core.files import sha256_file
from studio.engine.base import Engine
from studio.delivery.credits import (
    SAMPLE_DEFAULT_S, Credits, cast_voices, credits_clips, default_credits, default_narrator, disclosure, first_prose_chapter,
    licence_warnings,
    sample_rows,
)
from studio.delivery.export import (
    CorruptAudio,
    chapter_clips,
    clean_filename,
    default_chapters,
    number_width,
    remove_stale_temps,
    require_complete,
    safe_filename,
)
from studio.delivery.manifest import MANIFEST_NAME, PublishedFile, write_manifest
from studio.delivery.rights import copyright_for
from studio.delivery.staging import Staging
from studio.project.numbering import chapter_number
from studio.project.store import Project
from studio.project.records import SentenceRow

log = logging.getLogger(__name__)

#: Times the encoded file is re-mastered when its true peak came out over the ceiling.
_PEAK_RETRIES = 2


@dataclass(frozen=True)
class PublishOptions:
    """What to deliver. ``chapters`` are 0-based (None: all but front matter);
    ``cover`` an image file (None: the EPUB's cover, if the source is an EPUB) and
    ``cover_fit`` "pad" or "crop" to make it square; ``narrator`` None: "Synthetic
    voice (<voice name>)"; ``single_file`` makes one MP3 with ID3 chapter frames (M4B
    is always one file). ``credits``: opening and closing credits (``opening`` /
    ``closing`` None: the default wording); ``sample``: a retail sample of
    ``sample_seconds`` from ``sample_chapter`` (None: the first prose chapter). ``producer``
    (the recording's copyright holder) and ``rights`` (the book's, e.g. "public domain"):
    None takes the project's settings, whose empty ``rights`` means what the book says."""

    fmt: str = "m4b"
    chapters: Sequence[int] | None = None
    mastering: MasteringConfig = field(default_factory=MasteringConfig)
    rules: AcxRules = field(default_factory=AcxRules)
    cover: Path | None = None
    cover_fit: str | None = None
    narrator: str | None = None
    year: str | None = None
    subtitles: bool = True
    single_file: bool = False
    credits: bool = True
    opening: str | None = None
    closing: str | None = None
    sample: bool = True
    sample_chapter: int | None = None
    sample_seconds: float = SAMPLE_DEFAULT_S
    producer: str | None = None
    rights: str | None = None


@dataclass(frozen=True)
class PublishProgress:
    """``done`` of ``total`` chapters mastered; ``current`` is being worked on."""

    done: int
    total: int
    current: str = ""


@dataclass(frozen=True)
class PublishResult:
    """``acx_format``: the files are what ACX takes (one MP3 per chapter), so their
    check is an "ACX check"; otherwise the same figures are "levels checked"."""

    files: tuple[PublishedFile, ...]
    manifest: Path
    warnings: tuple[str, ...] = ()
    acx_format: bool = False
    cover: CoverReport | None = None
    meta: BookMeta | None = None

    @property
    def passed(self) -> bool:
        return all(f.acx.passed for f in self.files)

    @property
    def check_name(self) -> str:
        return "ACX check" if self.acx_format else "levels checked"


@dataclass
class _Part:
    """One output piece: a chapter's rows (the first part keeps the title), the
    credits' clips, or the sample's rows."""

    chapter: int
    title: str
    rows: list[SentenceRow]
    number: int = 1  # the part of its chapter (a long chapter is split into several)
    #: the producer's chapter name and the file's number (the chapter's one number; None:
    #: unnumbered); ``title`` stays the imported one, which spots a spoken heading
    name: str = ""
    file_number: int | None = 0
    kind: str = "chapter"
    clips: list[list[Clip]] | None = None


def plan_parts(project: Project, chapters: Sequence[int], max_seconds: float) -> tuple[list[_Part], list[str]]:
    """Chapters -> parts no longer than ``max_seconds`` (rendered lengths plus pauses),
    split only between paragraphs; also the warnings for each split chapter."""
    pauses = project.settings().pauses
    infos = project.chapters()
    names = {c.index: c.name for c in infos}
    parts: list[_Part] = []
    warnings: list[str] = []
    for idx in chapters:
        rows = project.sentences([idx])
        if not rows:
            warnings.append(f"chapter {idx + 1} '{infos[idx].title}' has nothing to say; no file written")
            continue
        title_rows = [r for r in rows if r.is_title]
        current = _Part(idx, infos[idx].title, list(title_rows), 1, names[idx], chapter_number(idx))
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
                current = _Part(idx, infos[idx].title, [], len(chapter_parts) + 1, names[idx], chapter_number(idx))
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
    if part.clips is not None:
        title, paras = None, part.clips
    else:
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
    done = master(audio, rate, cfg, seed=(part.chapter + 1) * 100 + part.number)
    return done, cues_from_spans(done.audio, done.sample_rate, spans, rate, shift_s=done.shift_s)


def book_meta(project: Project, options: PublishOptions) -> BookMeta:
    """Title, author, narrator ("Synthetic voice (<name>)" unless given), year, cover
    (checked, fitted on request) and the disclosure for the files' tags."""
    return _meta_and_cover(project, options)[0]


def _meta_and_cover(project: Project, options: PublishOptions) -> tuple[BookMeta, CoverReport | None]:
    book = project.book()
    cover = Cover.from_file(options.cover) if options.cover else _source_cover(project)
    report = None
    if cover is not None:
        cover, report = fit_cover(cover, options.cover_fit)
    found = re.search(r"\b(1[5-9]|20)\d\d\b", book.metadata.get("date", ""))
    year = options.year or (found.group(0) if found else str(_dt.date.today().year))
    settings = project.settings()
    narrator = (options.narrator or "").strip() or settings.narrator or default_narrator(project)
    producer, rights, recording_year = _copyright_sources(project, options)
    notice = " ".join(copyright_for(project, rights=rights, producer=producer, year=recording_year or None))
    return BookMeta(title=settings.title or book.title, author=settings.author or book.author, narrator=narrator,
                    year=year, cover=cover, disclosure=disclosure(project), cast=cast_voices(project),
                    copyright=notice), report


def _copyright_sources(project: Project, options: PublishOptions) -> tuple[str, str, str]:
    """The recording's holder, the book's rights and the recording's year: the export's options,
    else the project's settings (Book Details, ``studio details``)."""
    settings = project.settings()
    return (options.producer if options.producer is not None else settings.producer,
            options.rights if options.rights is not None else settings.rights, settings.recording_year)


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


def credits_text(project: Project, options: PublishOptions, meta: BookMeta) -> Credits:
    """The credits as they will be spoken: the producer's wording, else the default."""
    producer, rights, recording_year = _copyright_sources(project, options)
    default = default_credits(project, narrator=meta.narrator, author=meta.author, title=meta.title,
                              producer=producer, rights=rights, recording_year=recording_year)
    return Credits(options.opening if options.opening is not None else default.opening,
                   options.closing if options.closing is not None else default.closing)


def _write_subtitles(path: Path, cues: list[Cue]) -> tuple[Path, ...]:
    """``<file>.srt`` and ``<file>.vtt`` beside ``path``: the whole name kept ("2. Building"
    is a title, not a file name and a suffix)."""
    srt, vtt = path.parent / f"{path.stem}.srt", path.parent / f"{path.stem}.vtt"
    atomic_write_bytes(srt, to_srt(cues).encode("utf-8"))
    atomic_write_bytes(vtt, to_vtt(cues).encode("utf-8"))
    return srt, vtt


def _deliver(path: Path, fmt: str, meta: BookMeta, track: Track, marks: Sequence[ChapterMark],
             rules: AcxRules, cfg: MasteringConfig, produce: Callable[[MasteringConfig], AudioInput],
             *, whole_book: bool = False) -> tuple[Levels, AcxReport]:
    """Encode (``produce(cfg)`` gives the audio), measure the encoded file, and encode
    again with more headroom while its true peak is over the ceiling; an Opus file gets
    its last step as the header's output gain, which decoders apply exactly."""
    remove_stale_temps(path, fmt)
    for attempt in range(_PEAK_RETRIES + 1):
        write_delivery(path, produce(cfg), cfg.sample_rate, fmt, meta, track, marks)
        levels = measure_file(path)
        over = levels.true_peak_db - cfg.peak_ceiling_db
        if over > 0 and fmt == "opus":
            set_opus_gain(path, -(over + 0.05))
            log.info("%s: true peak %.2f dB over the ceiling after encoding; output gain %.2f dB",
                     path.name, over, -(over + 0.05))
            levels = measure_file(path)
            break
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
    engine: Engine | None = None,
) -> PublishResult:
    """Write the delivery files, their subtitles and ``manifest.json`` into ``out_dir``.

    ``engine`` speaks credits not yet in the cache (None: the project's engine is
    built for them when needed); the book itself is never synthesized here.
    """
    opts = options or PublishOptions()
    enc = encoding(opts.fmt)
    infos = project.chapters()
    wanted = sorted(set(opts.chapters)) if opts.chapters is not None else default_chapters(project)
    for idx in wanted + ([opts.sample_chapter] if opts.sample and opts.sample_chapter is not None else []):
        if not 0 <= idx < len(infos):
            raise ProjectError(f"chapter {idx + 1} does not exist (the book has {len(infos)})")
    require_complete(project, wanted)
    meta, cover = _meta_and_cover(project, opts)
    whole_book = enc.whole_book or (opts.fmt == "mp3" and opts.single_file)
    parts, warnings = plan_parts(project, wanted, opts.rules.max_minutes * 60 - opts.mastering.head_s
                                 - opts.mastering.tail_s if not whole_book else float("inf"))
    warnings += list(cover.warnings) if cover else ["no cover art: stores require one (give it with --cover)"]
    warnings += licence_warnings(project)
    sample = _sample_part(project, opts, wanted, warnings) if opts.sample else None
    for w in warnings:
        log.warning("%s", w)
    report = progress or (lambda p: None)
    last = chapter_number(len(infos) - 1)  # the book's chapter count: the highest number
    width = number_width(last + 1)  # room for the closing credits' number
    with Staging(out_dir) as stage:  # first: a folder that cannot be written fails before any work
        if opts.credits:
            _add_credits(project, opts, meta, parts, engine, last)
        if whole_book:
            files = [_publish_book(project, stage, opts, meta, parts, report)]
        else:
            files = []
            total = max([last] + [p.file_number or 0 for p in parts])  # N, or N + 1 with closing credits
            for n, part in enumerate(parts):
                report(PublishProgress(n, len(parts), part.name))
                track = Track(_part_title(parts, part), part.file_number or 0, total)
                name = f"{safe_filename(track.title, part.file_number or 0, width)}{enc.suffix}"
                files.append(_publish_part(project, stage, name, opts.fmt, opts, meta, part, track))
        if sample is not None:
            sample_fmt = "mp3" if enc.whole_book else opts.fmt  # stores take an MP3 sample
            name = f"{clean_filename(meta.title, 'Audiobook')} - Retail sample{encoding(sample_fmt).suffix}"
            files.append(_publish_part(project, stage, name, sample_fmt, opts, meta, sample,
                                       Track(f"{meta.title} (retail sample)", 1, 1)))
        report(PublishProgress(len(parts), len(parts), ""))
        acx_format = opts.fmt == "mp3" and not whole_book
        manifest = write_manifest(stage.path(MANIFEST_NAME), fmt=opts.fmt, mastering=opts.mastering, meta=meta,
                                  files=files, warnings=warnings, cover=cover, acx_format=acx_format)
        stage.commit([f.path.name for f in files] + [p.name for f in files for p in f.subtitles] + [MANIFEST_NAME])
    files = [_moved(f, stage) for f in files]
    return PublishResult(tuple(files), stage.final(manifest.name), tuple(warnings), acx_format, cover, meta)


def _add_credits(project: Project, opts: PublishOptions, meta: BookMeta, parts: list[_Part],
                 engine: Engine | None, last: int) -> None:
    """Opening credits before the first part, closing credits after the last: numbered 0
    and one past the book's last chapter (``last``), outside the chapters' own numbers,
    so they sort first and last whichever chapters are exported."""
    text = credits_text(project, opts, meta)
    parts.insert(0, _Part(-1, "Opening credits", [], 1, "Opening credits", 0, "credits",
                          credits_clips(project, text.opening, engine)))
    parts.append(_Part(-1, "Closing credits", [], 2, "Closing credits", last + 1, "credits",
                       credits_clips(project, text.closing, engine)))


def _moved(f: PublishedFile, stage: Staging) -> PublishedFile:
    """The file as it is after the commit: under its final name."""
    return replace(f, path=stage.final(f.path.name), subtitles=tuple(stage.final(p.name) for p in f.subtitles))


def _sample_part(project: Project, opts: PublishOptions, wanted: list[int], warnings: list[str]) -> _Part | None:
    """The retail sample's rows; a book with no prose to sample gets a warning, unless the
    producer named the chapter (then it is an error: they asked for it)."""
    chapter = opts.sample_chapter if opts.sample_chapter is not None else first_prose_chapter(project, wanted)
    require_complete(project, [chapter])
    try:
        rows, length = sample_rows(project, chapter, opts.sample_seconds)
    except ProjectError as err:
        if opts.sample_chapter is not None:
            raise
        warnings.append(f"no retail sample: {err}")
        return None
    if length < 60:
        warnings.append(f"the retail sample from chapter {chapter + 1} is {length:.0f} s long; stores want 1-5 "
                        "minutes (the chapter is shorter: pick another with --sample-chapter)")
    name = project.chapters()[chapter].name
    return _Part(chapter, "", rows, 1, f"Retail sample ({name})", None, "sample")


def _part_title(parts: list[_Part], part: _Part) -> str:
    """The chapter's title, with "(part n)" when the chapter was split."""
    split = part.kind == "chapter" and any(p.chapter == part.chapter and p.number > 1 for p in parts)
    return f"{part.name} (part {part.number})" if split else part.name


def _chapter_numbers(parts: Sequence[_Part]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(chapter_number(p.chapter) for p in parts if p.kind != "credits"))


def _publish_part(project: Project, stage: Staging, name: str, fmt: str, opts: PublishOptions, meta: BookMeta,
                  part: _Part, track: Track) -> PublishedFile:
    """One chapter (or part of one, the credits, the sample) in a file of its own, with its subtitles."""
    path = stage.path(name)
    cues: list[Cue] = []

    def produce(cfg: MasteringConfig) -> np.ndarray:
        mastered, found = _master_part(project, part, cfg)
        cues[:] = found  # the cues of the master that was delivered
        return mastered.audio

    levels, acx = _deliver(path, fmt, meta, track, (), opts.rules, opts.mastering, produce)
    subs = _write_subtitles(path, cues) if opts.subtitles else ()
    log.info("wrote %s (%.1f s, %s)", name, levels.duration, "pass" if acx.passed else "FAIL")
    mark = ChapterMark(track.title, 0.0, levels.duration)
    return PublishedFile(path, track.title, (mark,), levels, acx, sha256_file(path), subs, part.kind,
                         _chapter_numbers([part]), part.file_number)


def _publish_book(project: Project, stage: Staging, opts: PublishOptions, meta: BookMeta, parts: list[_Part],
                  report: Callable[[PublishProgress], None]) -> PublishedFile:
    """One file for the whole book: chapters mastered one by one into a temp PCM file;
    one SRT/VTT for the whole book, timed from the book's start."""
    enc = encoding(opts.fmt)
    path = stage.path(f"{clean_filename(meta.title, 'Audiobook')}{enc.suffix}")
    rate = opts.mastering.sample_rate
    with tempfile.TemporaryDirectory(prefix=".studio-publish-", dir=stage.dir) as tmp:
        pcm_path = Path(tmp) / "book.pcm"
        marks: list[ChapterMark] = []
        book_cues: list[Cue] = []
        samples = 0
        with open(pcm_path, "wb") as pcm:
            for n, part in enumerate(parts):
                report(PublishProgress(n, len(parts), part.name))
                mastered, cues = _master_part(project, part, opts.mastering)
                pcm.write(to_int16(mastered.audio).tobytes())
                start = samples / rate
                samples += mastered.audio.size
                marks.append(ChapterMark(_part_title(parts, part), start, samples / rate))
                book_cues += [replace(c, start=round(c.start + start, 3), end=round(c.end + start, 3)) for c in cues]

        def produce(cfg: MasteringConfig) -> Iterator[np.ndarray]:
            # the chapters are mastered already: more headroom is plain attenuation
            gain = 10 ** (-(cfg.peak_margin_db - opts.mastering.peak_margin_db) / 20)
            with open(pcm_path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 21), b""):
                    yield np.frombuffer(chunk, dtype="<i2").astype(np.float32) * (gain / 32768.0)

        track = Track(meta.title, 1, 1)
        levels, acx = _deliver(path, opts.fmt, meta, track, marks, opts.rules, opts.mastering, produce,
                               whole_book=True)
    subs = _write_subtitles(path, book_cues) if opts.subtitles else ()
    log.info("wrote %s (%d chapters, %.1f s)", path.name, len(marks), levels.duration)
    return PublishedFile(path, meta.title, tuple(marks), levels, acx, sha256_file(path), subs, "book",
                         _chapter_numbers(parts))


__all__ = ["PublishOptions", "PublishProgress", "PublishResult", "PublishedFile", "book_meta", "credits_text",
           "plan_parts", "publish"]
