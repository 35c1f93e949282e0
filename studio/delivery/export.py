"""Export: assemble chapters from the audio cache and write one file per chapter.

Why export never synthesizes on its own: it reads verified cache files only, so
what you export is exactly what was rendered. A file found missing or corrupt
(checksum mismatch) is forgotten; with an engine at hand its sentences are
rendered again on the spot, without one the export refuses with a clear message.

Chapter files are written under a hidden temp name and renamed when complete
(:func:`studio.audio.pcm.atomic_path`), so a killed export never leaves a partial
file under a chapter's name; the temp files such a kill leaves behind are removed
by the next export of that chapter. A full disk stops the export with
:class:`~studio.core.errors.DiskFull`; the files finished before it stay.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from studio.audio.assemble import Clip, Pauses, iter_chapter
from studio.audio.pcm import silence, stale_temp_files
from studio.audio.resample import resample
from studio.audio.formats import encoding
from studio.audio.writers import AudioTags, write_audio
from studio.core.errors import ProjectError, StudioError
from studio.engine.base import Engine
from studio.rendering.render import EngineFactory, RenderProgress, render_project
from studio.project.bookdb import same_heading
from studio.project.duration import title_and_body
from studio.project.direction import directions
from studio.project.numbering import chapter_number
from studio.project.pauses import pauses_after
from studio.project.store import Project
from studio.project.records import SentenceRow

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]+')
#: names Windows keeps for its devices, whatever the extension ("CON.m4b" cannot be created there)
_RESERVED = re.compile(r"(CON|PRN|AUX|NUL|COM[0-9\u00b9\u00b2\u00b3]|LPT[0-9\u00b9\u00b2\u00b3])(\..*)?", re.IGNORECASE)


@dataclass(frozen=True)
class ExportedFile:
    """One written chapter file; ``chapter`` is the 0-based chapter index."""

    path: Path
    chapter: int
    title: str
    duration: float
    sample_rate: int


class CorruptAudio(Exception):
    """A cache file failed verification while a chapter was being written."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def default_chapters(project: Project) -> list[int]:
    """Chapters a plain render covers: the included ones (by default all but front matter;
    all, if none is included)."""
    return project.chapter_control.included()


def clean_filename(text: str, fallback: str) -> str:
    """``text`` as a file name every system takes: without the characters Windows, macOS or
    Linux refuse (``:`` ``?`` ``/`` ...), no trailing dot or space, not a Windows device
    name (``CON``, ``NUL``, ``COM1``), length capped."""
    clean = " ".join(_UNSAFE.sub(" ", text).split()).strip(" .")[:80].rstrip(" .") or fallback
    device = _RESERVED.fullmatch(clean)
    return f"{device.group(1)}_{device.group(2) or ''}" if device else clean


def safe_filename(title: str, number: int, width: int = 2) -> str:
    """``"01 - Title"`` (see :func:`clean_filename`)."""
    return f"{number:0{width}d} - {clean_filename(title, f'Chapter {number}')}"


def number_width(highest: int) -> int:
    """Digits of a file number: at least two, enough for ``highest``, so names sort as numbers."""
    return max(2, len(str(highest)))


def export_chapter_files(
    project: Project,
    out_dir: str | Path,
    fmt: str = "wav",
    chapters: Iterable[int] | None = None,
    sample_rate: int | None = None,
    *,
    engine: Engine | None = None,
    engine_for: EngineFactory | None = None,
    progress: Callable[[RenderProgress], None] | None = None,
    bitrate: str = "128k",
    batch_size: int = 1,
) -> list[ExportedFile]:
    """Write ``NN - Title.<fmt>`` for each chapter (0-based indices; None = default set).

    ``NN`` and the track tag ``NN/total`` are the chapter's one number
    (:func:`studio.project.numbering.chapter_number`, what the tree shows), over the
    book's chapter count, whichever chapters are exported: front matter left out
    leaves a gap, it does not renumber the rest.

    ``sample_rate`` None uses the project's output rate, else the voice's own.
    Refuses (ProjectError, before writing anything) when a chapter has sentences
    that are not rendered or failed; with ``engine`` given, pending ones are
    rendered first, ``batch_size`` sentences per engine call (the plan's: a CUDA
    or multi-stream engine re-rendering a damaged chapter gets the batches it was
    built for). Returns what was written, in chapter order.
    """
    if encoding(fmt).whole_book:
        raise StudioError(f"{fmt} holds a whole book; write it with `studio export --format {fmt}`")
    all_chapters = project.chapters()
    wanted = sorted(set(chapters)) if chapters is not None else default_chapters(project)
    for idx in wanted:
        if not 0 <= idx < len(all_chapters):
            raise ProjectError(f"chapter {idx + 1} does not exist (the book has {len(all_chapters)})")
    if engine is not None and any(r.state != "done" for r in project.sentences(wanted)):
        render_project(project, engine, chapters=set(wanted), engine_for=engine_for, progress=progress,
                       batch_size=batch_size)
    require_complete(project, wanted)
    out = Path(out_dir)
    made = [p for p in (out, *out.parents) if not p.exists()]
    out.mkdir(parents=True, exist_ok=True)
    written: list[ExportedFile] = []
    try:
        _write_chapters(project, out, fmt, wanted, sample_rate, engine, engine_for, progress, bitrate, written,
                        batch_size)
    except (StudioError, OSError) as err:
        # nothing new is left behind but complete chapter files, and the message says which
        if not written:
            _remove_folders(made)
            raise
        names = ", ".join(f.path.name for f in written)
        done = f" [{len(written)} chapter file(s) written before it are complete: {names}]"
        if isinstance(err, StudioError):  # the same kind of error (a full disk stays DiskFull), told what is kept
            err.args = (f"{err}{done}",)
            raise
        raise StudioError(f"{err.strerror or err}: {err.filename}{done}") from err
    return written


def _remove_folders(made: list[Path]) -> None:
    """The folders this export made (deepest first), when they are still empty."""
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            break


def _write_chapters(project: Project, out: Path, fmt: str, wanted: list[int], sample_rate: int | None,
                    engine: Engine | None, engine_for: EngineFactory | None,
                    progress: Callable[[RenderProgress], None] | None, bitrate: str,
                    written: list[ExportedFile], batch_size: int) -> None:
    """The chapter files, one after another, appended to ``written`` as each is complete."""
    all_chapters = project.chapters()
    settings = project.settings()
    book = project.book()
    total = chapter_number(len(all_chapters) - 1)  # the book's chapter count: the highest number
    width = number_width(total)
    names = {c.index: c.name for c in all_chapters}
    for idx in wanted:
        title = all_chapters[idx].title
        if all_chapters[idx].sentences == 0:
            log.warning("chapter %d '%s' has nothing to say; no file written", idx + 1, title)
            continue
        number = chapter_number(idx)  # the tree's number, whatever else is exported
        path = out / f"{safe_filename(names[idx], number, width)}{encoding(fmt).suffix}"
        remove_stale_temps(path, fmt)
        tags = AudioTags(title=names[idx], artist=book.author, album=book.title, track=f"{number}/{total}")
        for attempt in range(3):
            rows = project.sentences([idx])
            rate = sample_rate or settings.output_sample_rate or native_rate(project, rows)
            counter = _Counter()
            try:
                blocks = iter_chapter(*chapter_clips(project, rows, title, settings.pauses), settings.pauses, rate)
                write_audio(path, counter.count(blocks), rate, fmt, tags, bitrate=bitrate)
            except CorruptAudio as bad:
                project.invalidate_key(bad.key)
                if engine is None or attempt == 2:
                    raise ProjectError(
                        f"chapter {idx + 1} has missing or corrupt audio in the cache; "
                        "render the project again to repair it"
                    ) from None
                render_project(project, engine, chapters={idx}, engine_for=engine_for, progress=progress,
                               batch_size=batch_size)
                require_complete(project, [idx])
                continue
            written.append(ExportedFile(path, idx, names[idx], counter.samples / rate, rate))
            log.info("wrote %s (%.1f s)", path, counter.samples / rate)
            break


def export_chapters(
    project: Project,
    out_dir: str | Path,
    fmt: str = "wav",
    chapters: Iterable[int] | None = None,
    sample_rate: int | None = None,
    **kwargs: object,
) -> list[Path]:
    """Like :func:`export_chapter_files`, returning just the paths."""
    return [f.path for f in export_chapter_files(project, out_dir, fmt, chapters, sample_rate, **kwargs)]  # type: ignore[arg-type]


def incomplete_chapters(project: Project, chapters: Iterable[int]) -> dict[int, list[SentenceRow]]:
    """Chapter index -> its sentences that are not done (failed or pending)."""
    out: dict[int, list[SentenceRow]] = {}
    for row in project.sentences(chapters):
        if row.state != "done":
            out.setdefault(row.chapter, []).append(row)
    return out


def require_complete(project: Project, chapters: list[int]) -> None:
    missing = incomplete_chapters(project, chapters)
    if not missing:
        return
    parts = []
    for idx, rows in sorted(missing.items()):
        failed = [r for r in rows if r.state == "failed"]
        if failed:
            parts.append(f"chapter {idx + 1}: {len(failed)} failed (sentence {failed[0].id}: {failed[0].reason})")
        else:
            parts.append(f"chapter {idx + 1}: {len(rows)} not rendered")
    raise ProjectError("cannot export incomplete chapters; " + "; ".join(parts))


def remove_stale_temps(path: Path, fmt: str) -> None:
    """Temp files of an earlier, killed export of this very chapter file.

    (Another process exporting the same chapter into the same folder at this very
    moment would lose its temp file and fail; exporting one chapter twice at once
    into one folder is a conflict anyway.)
    """
    for stale in stale_temp_files(path, suffix=f".{fmt}"):
        try:
            stale.unlink()
            log.info("removed %s, left by an interrupted export", stale.name)
        except OSError as err:
            log.warning("cannot remove stale temp file %s: %s", stale, err)


def native_rate(project: Project, rows: list[SentenceRow]) -> int:
    """The rate most of the chapter was rendered at (the default voice's, normally)."""
    rates: dict[int, int] = {}
    for row in rows:
        entry = project.cache_entry(row.cache_key) if row.cache_key else None
        if entry is not None and entry.duration > 0:
            rates[entry.sample_rate] = rates.get(entry.sample_rate, 0) + 1
    return max(rates, key=rates.__getitem__) if rates else 22050


def _paragraph_text(rows: list[SentenceRow], paragraph: int) -> str:
    return "".join(r.text + r.trailing for r in rows if r.paragraph == paragraph)


def spoken_heading(rows: list[SentenceRow], chapter_title: str) -> bool:
    """Whether the chapter's first paragraph repeats its title (with or without a number
    or "Chapter N"): that paragraph is then spoken as the title and a title row is not."""
    return same_heading(_paragraph_text(rows, 0), chapter_title)


def _join(clips: list[Clip], gap: float) -> Clip:
    """Several clips as one (a heading of more than one sentence), ``gap`` s apart."""
    rate = clips[0].sample_rate
    parts: list[np.ndarray] = []
    for i, clip in enumerate(clips):
        audio = clip.audio if clip.sample_rate == rate else resample(clip.audio, clip.sample_rate, rate)
        parts += [audio] if i == 0 else [silence(gap, rate), audio]
    return Clip(np.concatenate(parts).astype(np.float32), rate, " ".join(c.text for c in clips))


def chapter_clips(
    project: Project, rows: list[SentenceRow], chapter_title: str, pauses: Pauses
) -> tuple[Clip | None, Iterator[list[Clip]]]:
    """The chapter's title clip and a lazy iterator of paragraphs' clips (verified reads).

    The title is the title row, or -- when the chapter's first paragraph repeats the
    heading (:func:`spoken_heading`) -- that paragraph, so the heading is said once and
    followed by the title pause.
    """

    own = pauses_after(project.db, (r.id for r in rows))  # pauses the producer set after single sentences
    before = {i: d.pause_before for i, d in directions(project.db).items() if d.pause_before}

    def load(row: SentenceRow) -> Clip:
        entry = project.cache_entry(row.cache_key) if row.cache_key else None
        if entry is None:
            raise CorruptAudio(row.expected_key)
        audio = project.cache.load(entry)
        if audio is None:
            raise CorruptAudio(entry.key)
        return Clip(audio, entry.sample_rate, row.text, own.get(row.id), before.get(row.id, 0.0))

    title_rows, body = title_and_body(rows, spoken_heading(rows, chapter_title))
    title = _join([load(r) for r in title_rows], pauses.sentence) if title_rows else None

    def paragraphs() -> Iterator[list[Clip]]:
        current: list[Clip] = []
        para = None
        for row in body:
            if current and row.paragraph != para:
                yield current
                current = []
            para = row.paragraph
            clip = load(row)
            if clip.audio.size:  # unspeakable rows ("* * *") add no pause of their own
                current.append(clip)
        if current:
            yield current

    return title, paragraphs()


class _Counter:
    """Counts samples flowing to a writer (the file's exact duration, for free)."""

    def __init__(self) -> None:
        self.samples = 0

    def count(self, blocks: Iterable[np.ndarray]) -> Iterator[np.ndarray]:
        for block in blocks:
            self.samples += int(block.size)
            yield block


__all__ = [
    "CorruptAudio", "ExportedFile", "chapter_clips", "clean_filename", "default_chapters", "export_chapter_files", "export_chapters",
    "native_rate", "number_width", "remove_stale_temps", "require_complete", "safe_filename", "spoken_heading",
]
