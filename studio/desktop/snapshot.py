"""The book as plain, frozen data for the book view: chapters, paragraphs, sentences.

Why a snapshot: the tree model runs on the GUI thread and must never query the
database (a big book's state query takes longer than a frame). A background task
builds this snapshot from the project and the text layer's pre-flight report
(:func:`studio.text.inspect.inspect_book`, whose flags -- long chapters, split
sentences, passages without a voice -- are the ones the CLI prints), and the
model only reads it. Later changes arrive as small deltas
(:class:`~studio.desktop.messages.StateDelta`) or as one rebuilt chapter.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping

from studio.project.bookdb import heading_paragraph
from studio.project.chapters import ChapterControl
from studio.project.duration import Timing, chapter_seconds, project_timing
from studio.project.front_matter import read_front_matter
from studio.project.direction import Direction, directions
from studio.project.numbering import chapter_label, chapter_number
from studio.project.pauses import pauses_after
from studio.project.store import Project
from studio.project.records import SentenceRow
from studio.desktop.messages import SentenceState
from studio.text.inspect import inspect_book, language_prefix

DEFAULT_LONG_CHAPTER_MINUTES = 60.0


@dataclass(frozen=True)
class SentenceNode:
    id: int
    chapter: int
    paragraph: int | None
    index: int
    text: str
    language: str
    was_split: bool
    state: str
    reason: str | None
    cache_key: str | None
    expected_key: str
    duration: float | None
    synth_count: int
    spoken: str = ""  # what the voice is given: the normaliser's form or the producer's override
    #: the pause the producer set after this sentence (None: the project's pause)
    pause_after: float | None = None
    #: direction for this sentence: a pause before it, a rate (studio.project.direction)
    direction: Direction = Direction()
    #: the characters speaking in it while casting is on (studio.project.cast); "" the narrator
    speaker: str = ""

    @property
    def cached(self) -> bool:
        """Rendered with the current inputs (its audio can be played from the cache)."""
        return self.state == "done" and self.cache_key == self.expected_key


@dataclass(frozen=True)
class ParagraphNode:
    """``index`` None: the chapter's spoken title."""

    chapter: int
    index: int | None
    text: str
    language: str
    confidence: float
    override: str | None
    unvoiced: bool
    sentences: tuple[SentenceNode, ...]

    @property
    def effective_language(self) -> str:
        return self.override or self.language

    @property
    def has_split(self) -> bool:
        return any(s.was_split for s in self.sentences)


@dataclass(frozen=True)
class ChapterNode:
    index: int
    title: str
    front_matter: bool
    words: int
    estimated_s: float
    too_long: bool
    paragraphs: tuple[ParagraphNode, ...]
    #: the producer's choices: in the book or not, and the name files and tags use
    included: bool = True
    name: str = ""
    reason: str = ""  # why the import left it out ("table of contents"), when it knows
    #: the first paragraph repeats the heading and is spoken as the title (as export does)
    heading_first: bool = False

    @property
    def display_name(self) -> str:
        return self.name or self.title

    @property
    def label(self) -> str:
        """The chapter's one number and name, with front matter/excluded said: the tree, queue and menus show it."""
        return chapter_label(self.index, self.display_name, included=self.included, front_matter=self.front_matter,
                             reason=self.reason)

    @property
    def short_label(self) -> str:
        """Number and name only (a queue job, a menu entry)."""
        return chapter_label(self.index, self.display_name, status=False)

    def __post_init__(self) -> None:
        """What the window asks of a chapter again and again, worked out once per node.

        Why here: a node is made off the GUI thread (a snapshot, a rebuilt chapter) or on it for
        one changed chapter (render states); the tree, its filter, the banner and the progress
        asked every chapter for its sentences (a new tuple each time), shape and counts per
        change, so each change cost the whole book on the GUI thread (docs/speed-notes.md)."""
        sentences = tuple(s for p in self.paragraphs for s in p.sentences)
        counts: dict[str, int] = {}
        for node in sentences:
            counts[node.state] = counts.get(node.state, 0) + 1
        derived = {
            "_sentences": sentences,
            "_shape": tuple(tuple(s.id for s in p.sentences) for p in self.paragraphs),
            "_ids": frozenset(s.id for s in sentences),
            "_counts": tuple(counts.items()),
            "_languages": frozenset(p.effective_language for p in self.paragraphs if p.index is not None),
            "_unvoiced": tuple((p.effective_language, p.index) for p in self.paragraphs
                               if p.unvoiced and p.index is not None),
            "_split": sum(1 for p in self.paragraphs if p.has_split),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    @property
    def sentences(self) -> tuple[SentenceNode, ...]:
        return self._sentences  # type: ignore[attr-defined]

    @property
    def shape(self) -> tuple[tuple[int, ...], ...]:
        """The sentence ids of each paragraph: two nodes of one shape differ in content only."""
        return self._shape  # type: ignore[attr-defined]

    @property
    def ids(self) -> frozenset[int]:
        """Its sentences' ids, to find the chapters a change touches without walking the book."""
        return self._ids  # type: ignore[attr-defined]

    @property
    def state_counts(self) -> dict[str, int]:
        """How many of its sentences are in each render state, as the node was made."""
        return dict(self._counts)  # type: ignore[attr-defined]

    @property
    def languages(self) -> frozenset[str]:
        """The languages its paragraphs are spoken in (the title row not counted)."""
        return self._languages  # type: ignore[attr-defined]

    @property
    def unvoiced(self) -> tuple[tuple[str, int], ...]:
        """``(language, paragraph)`` of each of its passages no voice speaks."""
        return self._unvoiced  # type: ignore[attr-defined]

    @property
    def split_paragraphs(self) -> int:
        """How many of its paragraphs have a sentence the splitter cut."""
        return self._split  # type: ignore[attr-defined]


def paragraph_label(node: ParagraphNode, heading_first: bool) -> str:
    """A paragraph's text as the tree shows it, saying which of a chapter's title row and
    heading paragraph is spoken (export says a title once: the heading, when it repeats it)."""
    if node.index is None:
        return f"Title (not spoken: the first paragraph says it): {node.text}" if heading_first else f"Title: {node.text}"
    return f"Spoken as the title: {node.text}" if heading_first and node.index == 0 else node.text


@dataclass(frozen=True)
class BookSnapshot:
    folder: str
    title: str
    author: str
    language: str
    voice_languages: tuple[str, ...]
    long_chapter_minutes: float
    chapters: tuple[ChapterNode, ...]
    warnings: tuple[str, ...] = ()
    #: the warnings that do not depend on the long-chapter threshold (split
    #: sentences, passages without a voice): kept apart so a new threshold can
    #: rebuild the banner without reading the project again
    notes: tuple[str, ...] = ()
    #: speaking rate and pauses the chapters' ``estimated_s`` come from
    timing: Timing | None = None
    #: the book-level choice to read epigraphs, extracts... (studio.project.front_matter)
    read_front: bool = False
    #: how a passage in a language no voice speaks is read (UnvoicedPolicy's value): the banner says it
    unvoiced_policy: str = "native"

    def sentence_count(self) -> int:
        return sum(len(c.sentences) for c in self.chapters)


def voice_languages(project: Project) -> set[str]:
    """Language families the project can speak: every language its default voice and its
    mapped voices speak (a multilingual voice, a Kokoro pack, speaks several)."""
    from studio.engine.voice.catalog import list_voices

    by_id = {v.id: v for v in list_voices()}
    settings = project.settings()
    out: set[str] = set()
    for vid in [settings.voice_id, *settings.language_voices.values()]:
        voice = by_id.get(vid)
        if voice is not None:
            out.update(voice.abilities.languages or (language_prefix(voice.language),))
    return out


def build_snapshot(
    project: Project,
    *,
    long_chapter_minutes: float = DEFAULT_LONG_CHAPTER_MINUTES,
) -> BookSnapshot:
    """Read the project once and assemble the tree's data (runs off the GUI thread)."""
    book = project.book()
    langs = voice_languages(project)
    report = inspect_book(book, long_chapter_minutes=long_chapter_minutes, voice_languages=langs)
    rows = project.sentences()
    timing = timing_of(project, rows)
    by_chapter: dict[int, list[SentenceRow]] = {}
    for r in rows:
        by_chapter.setdefault(r.chapter, []).append(r)
    controls = project.chapter_control.all()
    after, directed = pauses_after(project.db), directions(project.db)
    chapters = tuple(
        _chapter(ci, chapter, report.chapters[ci], by_chapter.get(ci, []), controls[ci], timing, after, directed)
        for ci, chapter in enumerate(book.chapters)
    )
    notes = tuple(report.warnings()[len(report.long_chapters):])
    snapshot = BookSnapshot(
        folder=str(project.folder), title=book.title, author=book.author, language=book.language,
        voice_languages=tuple(sorted(langs)), long_chapter_minutes=long_chapter_minutes,
        chapters=chapters, notes=notes, timing=timing, read_front=read_front_matter(project.db),
        unvoiced_policy=project.settings().unvoiced,
    )
    return with_long_chapters(snapshot, long_chapter_minutes)


def timing_of(project: Project, rows: Iterable[SentenceRow]) -> Timing:
    """The project's speaking rate (calibrated from ``rows`` rendered so far) and pauses."""
    settings = project.settings()
    return project_timing(settings.voice_id, settings.synthesis.length_scale, settings.pauses, rows)


def build_chapter(project: Project, snapshot: BookSnapshot, chapter_idx: int) -> ChapterNode:
    """One chapter rebuilt after a language override or an edit (states included)."""
    book = project.book()
    langs = voice_languages(project)
    chapter = book.chapters[chapter_idx]  # its report only: the book's was a pass over every paragraph per edit
    report = inspect_book(replace(book, chapters=(chapter,)), long_chapter_minutes=snapshot.long_chapter_minutes,
                          voice_languages=langs).chapters[0]
    rows = project.sentences([chapter_idx])
    control = project.chapter_control.all()[chapter_idx]
    timing = snapshot.timing or timing_of(project, rows)
    after, directed = pauses_after(project.db, (r.id for r in rows)), directions(project.db)
    node = _chapter(chapter_idx, chapter, report, rows, control, timing, after, directed)
    return replace(node, too_long=node.estimated_s > snapshot.long_chapter_minutes * 60.0)


def _chapter(ci: int, chapter, report, rows: list[SentenceRow], control: ChapterControl,
             timing: Timing, after: Mapping[int, float], directed: Mapping[int, Direction]) -> ChapterNode:
    unvoiced = {p.paragraph_index for p in report.unvoiced}
    by_para: dict[int | None, list[SentenceNode]] = {}
    for r in rows:
        by_para.setdefault(r.paragraph, []).append(_sentence(r, after.get(r.id), directed.get(r.id, Direction())))
    paragraphs: list[ParagraphNode] = []
    if None in by_para:  # a separately spoken title
        first = chapter.paragraphs[0] if chapter.paragraphs else None
        lang = by_para[None][0].language
        paragraphs.append(ParagraphNode(ci, None, chapter.title, lang, first.confidence if first else 1.0,
                                        None, False, tuple(by_para[None])))
    for pi, para in enumerate(chapter.paragraphs):
        paragraphs.append(ParagraphNode(
            ci, pi, para.text, para.language, float(para.confidence), para.language_override,
            pi in unvoiced, tuple(by_para.get(pi, ())),
        ))
    heading = heading_paragraph(chapter)
    return ChapterNode(
        ci, chapter.title, chapter.front_matter, report.word_count, chapter_seconds(rows, heading, timing, after, _before(directed)), False,
        tuple(paragraphs), control.included, control.name if control.name != chapter.title else "", control.reason,
        heading,
    )


def estimate(chapter: ChapterNode, timing: Timing | None, sentences: Iterable[SentenceNode] | None = None) -> float:
    """How long the chapter's file will play, from its current ``sentences`` (default:
    the node's own): the one estimate the tree, the inspector and the banner show."""
    if timing is None:
        return chapter.estimated_s
    nodes = tuple(chapter.sentences if sentences is None else sentences)
    return chapter_seconds(nodes, chapter.heading_first, timing, own_pauses(nodes),
                           _before({n.id: n.direction for n in nodes}))


def own_pauses(nodes: Iterable[SentenceNode]) -> dict[int, float]:
    """The pauses the producer set after these sentences (id -> seconds)."""
    return {n.id: n.pause_after for n in nodes if n.pause_after is not None}


def _before(directed: Mapping[int, Direction]) -> dict[int, float]:
    return {i: d.pause_before for i, d in directed.items() if d.pause_before}


def _sentence(r: SentenceRow, pause_after: float | None = None, direction: Direction = Direction()) -> SentenceNode:
    return SentenceNode(
        id=r.id, chapter=r.chapter, paragraph=r.paragraph, index=r.index, text=r.text, language=r.language,
        was_split=r.was_split, state=r.state, reason=r.reason, cache_key=r.cache_key, expected_key=r.expected_key,
        duration=r.duration, synth_count=r.synth_count, pause_after=pause_after, direction=direction,
        spoken=r.spoken, speaker=", ".join(dict.fromkeys(p.name for p in r.cast if p.name)),
    )


def long_chapter_line(chapter: ChapterNode) -> str:
    """The banner's line for a long chapter, worded as the text layer's report words it."""
    return f"Chapter {chapter_number(chapter.index)} '{chapter.title}' runs about {chapter.estimated_s / 60:.0f} minutes"


def with_long_chapters(snapshot: BookSnapshot, minutes: float) -> BookSnapshot:
    """The same snapshot with the long-chapter flags and banner lines recomputed for
    ``minutes`` (no I/O; states are kept as they are in ``snapshot``)."""
    # only a chapter whose flag changes is made again (a new node works out its sentences again)
    chapters = tuple(c if c.too_long == (c.estimated_s > minutes * 60.0) else replace(c, too_long=not c.too_long)
                     for c in snapshot.chapters)
    warnings = tuple(long_chapter_line(c) for c in chapters if c.too_long) + snapshot.notes
    return replace(snapshot, chapters=chapters, long_chapter_minutes=minutes, warnings=warnings)


def apply_states(snapshot: BookSnapshot, changes: Iterable[SentenceState]) -> BookSnapshot:
    """``snapshot`` with render-state changes folded in.

    Why: the session's snapshot is what the tree is rebuilt from (a new long-chapter
    threshold, settings saved); if it kept the states it was opened with, a rebuild
    would show rendered sentences as pending again. Only the paragraphs that
    changed are copied, so a delta costs what it touches, not the book.
    """
    by_id = {c.sentence_id: c for c in changes}
    if not by_id:
        return snapshot
    chapters = list(snapshot.chapters)
    for ci, chapter in enumerate(chapters):
        if chapter.ids.isdisjoint(by_id):
            continue
        paragraphs = []
        for para in chapter.paragraphs:
            if any(s.id in by_id for s in para.sentences):
                para = replace(para, sentences=tuple(_changed(s, by_id.get(s.id)) for s in para.sentences))
            paragraphs.append(para)
        nodes = tuple(s for p in paragraphs for s in p.sentences)
        chapters[ci] = replace(chapter, paragraphs=tuple(paragraphs), estimated_s=estimate(chapter, snapshot.timing, nodes))
    return with_long_chapters(replace(snapshot, chapters=tuple(chapters)), snapshot.long_chapter_minutes)


def _changed(node: SentenceNode, change: SentenceState | None) -> SentenceNode:
    if change is None:
        return node
    if change.state == "rendering":  # in flight: the audio fields are not known yet
        return replace(node, state=change.state, reason=change.reason)
    return with_state(node, change)


def with_state(node: SentenceNode, change: SentenceState) -> SentenceNode:
    """A sentence after a finished change. A ``done`` state is the store's effective
    state (its key is the one expected now), so the expected key follows it: keys
    read before the first render lack the voice's fingerprint."""
    expected = change.cache_key if change.state == "done" and change.cache_key else node.expected_key
    return replace(node, state=change.state, reason=change.reason, cache_key=change.cache_key,
                   duration=change.duration, synth_count=change.synth_count, expected_key=expected)


def estimate_change(before: BookSnapshot | None, after: BookSnapshot) -> str:
    """Why the chapters' lengths changed, when the pace they are estimated at did ("" when it did
    not): "Lengths now at the pace calibrated on 14 rendered sentences: the book 19 % longer"."""
    if before is None or before.timing is None or after.timing is None or before.folder != after.folder:
        return ""
    was, now = before.timing.rate, after.timing.rate
    if was.basis == now.basis or before.timing.length_scale != after.timing.length_scale:
        return ""  # a new speed of the voice is the producer's own change, and said where it is made
    old = sum(c.estimated_s for c in before.chapters)
    new = sum(c.estimated_s for c in after.chapters)
    if old <= 0 or abs(new - old) / old < 0.02:
        return ""
    change = (new - old) / old
    return (f"Chapter lengths are now estimated at {now.basis} (was {was.basis}): the book "
            f"{abs(change):.0%} {'longer' if change > 0 else 'shorter'}")
