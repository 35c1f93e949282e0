"""The cast of a project: who speaks each quoted line, and with which voice.

Why a facet of its own, stored and not recomputed at each read: attribution
(:mod:`studio.text.attribution`) reads a whole chapter to decide one line (the last
person named, whose turn it is), and the project reads its sentences at every
refresh; so the lines are found once -- when casting is turned on, and at a
re-import -- and kept per sentence as parts (character offsets in the sentence's
printed text, with the character or "" for the narrator).

What a producer decides is kept apart from what the rules found: a character's
voice (another installed voice, a speaker of a multi-speaker voice, or a
performance of the narrator's voice: pitch, pace, expressiveness), names merged
into one character, and corrections of single lines. A correction is stored by
the text of its paragraph and sentence, so it survives a re-import wherever that
text is found again.

Casting is off for a new project: nothing here changes a sentence's audio until
the producer turns it on (:meth:`ProjectCast.set_enabled`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from studio.core.errors import ProjectError
from studio.text.attribution import SURE, Aliases, Line, attribute, evidence_of
from studio.text.people import cast_list, find_people
from studio.text.dialogue import paragraph_spans, split_dialogue

if TYPE_CHECKING:
    from studio.project.db import ProjectDb

#: what a performance may ask of the narrator's voice
PITCH_RANGE = (-6.0, 6.0)  # semitones
PACE_RANGE = (0.7, 1.4)  # relative speed
EXPRESSIVE_RANGE = (0.0, 2.0)  # times the voice's noise scales
NARRATOR = ""


@dataclass(frozen=True)
class Performance:
    """The narrator's voice played as a character: pitch in semitones, pace (1.0 = the
    project's speed), expressiveness (times the voice's noise scales)."""

    pitch: float = 0.0
    pace: float = 1.0
    expressive: float = 1.0

    @property
    def neutral(self) -> bool:
        return self == Performance()

    def words(self) -> str:
        parts = [f"pitch {self.pitch:+g}"] if self.pitch else []
        parts += [f"pace {self.pace:g}"] if self.pace != 1.0 else []
        parts += [f"expressive {self.expressive:g}"] if self.expressive != 1.0 else []
        return ", ".join(parts)


@dataclass(frozen=True)
class Casting:
    """Who voices a character: ``voice_id`` "" is the narrator's voice; ``speaker`` a
    speaker id of a multi-speaker voice (None: its default)."""

    voice_id: str = ""
    speaker: int | None = None
    performance: Performance = Performance()

    @property
    def neutral(self) -> bool:
        return not self.voice_id and self.speaker is None and self.performance.neutral

    def words(self) -> str:
        voice = (self.voice_id or "narrator's voice") + (f":{self.speaker}" if self.speaker is not None else "")
        perf = self.performance.words()
        return f"{voice}, {perf}" if perf else voice


@dataclass(frozen=True)
class Part:
    """Characters ``start:end`` of a sentence's printed text, spoken by ``name`` ("" the
    narrator) with ``casting`` (None: the narrator's voice and settings)."""

    start: int
    end: int
    name: str
    casting: Casting | None = None
    how: str = ""  # the rule that named the speaker of a quoted part ("" narration)

    @property
    def quoted(self) -> bool:
        return bool(self.how)

    @property
    def sure(self) -> bool:
        """A quoted part whose speaker rests on evidence right >= 97 % of the time (or the producer's choice)."""
        return bool(self.name) and self.how in SURE

    @property
    def evidence(self) -> str:
        return evidence_of(self.how, self.name) if self.how else ""


@dataclass(frozen=True)
class CastMember:
    """A character as the cast list shows it."""

    name: str
    lines: int
    first_line: str
    casting: Casting
    aliases: tuple[str, ...] = ()  # names the producer merged into it
    first_sentence: int = 0  # the sentence of the first line (the dock's "Play a line")
    names: tuple[str, ...] = ()  # other names the book calls the person by ("Captain Ahab", "I")
    descriptors: tuple[str, ...] = ()  # "the one-armed captain": what the rules tied to the person

    @property
    def also_called(self) -> tuple[str, ...]:
        """Its other names, the names merged into it and its descriptors (what Split can part)."""
        return tuple(dict.fromkeys((*self.names, *self.aliases, *self.descriptors)))


@dataclass(frozen=True)
class Unattributed:
    sentence_id: int
    text: str


@dataclass(frozen=True)
class QuotedLine:
    """A quoted line as attributed: who the rules chose ("" the narrator), on what evidence, whether
    that is sure, and ``candidates``: the two speakers most likely (the review list's choice)."""

    sentence_id: int
    text: str
    speaker: str
    candidates: tuple[str, ...]
    evidence: str
    how: str
    sure: bool


@dataclass(frozen=True)
class CastState:
    """Everything the cast decides, read once per :meth:`Project.sentences` call."""

    enabled: bool
    parts: Mapping[int, tuple[Part, ...]] = field(default_factory=dict)


def voiced(parts: Iterable[Part]) -> bool:
    """Whether a character in these parts has a voice other than the narrator's plain one."""
    return any(p.casting is not None and not p.casting.neutral for p in parts)


def cast_key_part(parts: Iterable[Part], fingerprints: Mapping[str, str], languages: Sequence[str] = ()) -> str:
    """What a sentence's cast adds to its cache key: "" when no part is voiced other than
    by the narrator (so such sentences keep their keys and audio); else every part's
    span, voice (with its model's fingerprint), speaker and performance.

    ``languages`` are the parts' languages when one is said in another language than the
    sentence (else empty, and the key is as before): such a part is written out in its
    language too, so its audio changes when its voice's language becomes known here.
    """
    parts = tuple(parts)
    if not voiced(parts):
        return ""
    each = [
        [p.start, p.end, p.casting.voice_id if p.casting else "", fingerprints.get(p.casting.voice_id, "")
         if p.casting else "", p.casting.speaker if p.casting else None,
         asdict(p.casting.performance) if p.casting else None]
        for p in parts
    ]
    return json.dumps({"parts": each, "languages": list(languages)} if languages else each, sort_keys=True)


class ProjectCast:
    """The cast facet of a project (tables ``cast_*``, :mod:`studio.project.schema`)."""

    def __init__(self, db: ProjectDb) -> None:
        self.db = db

    # ------------------------------------------------------------ on / off

    def enabled(self) -> bool:
        row = self.db.read().execute("SELECT value FROM settings WHERE key = 'casting'").fetchone()
        return bool(row and json.loads(row[0]))

    def set_enabled(self, on: bool) -> None:
        """Turn casting on (finding the lines the first time) or off (every line the narrator's)."""
        with self.db.write() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES ('casting', ?) ON CONFLICT(key) DO UPDATE"
                         " SET value = excluded.value", (json.dumps(bool(on)),))
        if on and not self.analysed():
            self.analyse()

    def analysed(self) -> bool:
        """Whether the lines were found once (listing the cast finds them; nothing turns on)."""
        return self.db.read().execute("SELECT 1 FROM settings WHERE key = 'cast_analysed'").fetchone() is not None

    # ------------------------------------------------------------ the lines

    def analyse(self) -> int:
        """Find and attribute every quoted line of the book again; returns the sentences with a quote.

        Corrections the producer made are applied where their text is found.
        """
        conn = self.db.read()
        alias = self.aliases()
        rows = conn.execute(
            "SELECT s.id, c.idx, p.id, p.text, s.text, s.original_text, s.trailing FROM sentences s"
            " JOIN chapters c ON c.id = s.chapter_id JOIN paragraphs p ON p.id = s.paragraph_id"
            " ORDER BY s.ord").fetchall()
        chapters: dict[int, dict[int, tuple[str, list[tuple]]]] = {}
        for r in rows:
            chapters.setdefault(r[1], {}).setdefault(r[2], (r[3], []))[1].append(r)
        fixes = dict(((p, s), n) for p, s, n in conn.execute(
            "SELECT paragraph_text, sentence_text, name FROM cast_corrections"))
        found = []
        for paragraphs in chapters.values():
            texts = [t for t, _ in paragraphs.values()]
            spans = split_dialogue(texts)
            found.append((paragraphs, texts, spans, attribute(texts, alias, spans)))
        people = find_people([line for *_x, lines in found for line in lines],
                             [t for _p, texts, _s, _l in found for t in texts], separate=self.separate(),
                             spans=[s for _p, _t, spans, _l in found for s in spans])
        out: dict[int, list[list]] = {}
        for paragraphs, _texts, _spans, lines in found:
            by_par: dict[int, list] = {}
            for line in people.apply(lines):
                by_par.setdefault(line.paragraph, []).append(line)
            for p_i, (ptext, sentences) in enumerate(paragraphs.values()):
                quoted = by_par.get(p_i, [])
                pos = 0
                for sid, _c, _p, _pt, text, original, trailing in sentences:
                    start, pos = pos, pos + len(original) + len(trailing)
                    parts = _sentence_parts(start, len(original), quoted, edited=text if text != original else "")
                    fix = fixes.get((ptext, original))
                    if fix is not None:
                        parts = _corrected(parts, len(text), fix)
                    if any(part[2] or part[4] for part in parts):
                        out[sid] = parts
        with self.db.write() as w:
            w.execute("DELETE FROM cast_lines")
            w.executemany("INSERT INTO cast_lines (sentence_id, parts) VALUES (?, ?)",
                          [(sid, json.dumps(parts)) for sid, parts in out.items()])
            w.execute("INSERT INTO settings (key, value) VALUES ('cast_analysed', 'true') ON CONFLICT(key) DO NOTHING")
            w.execute("INSERT INTO settings (key, value) VALUES ('cast_people', ?) ON CONFLICT(key) DO UPDATE"
                      " SET value = excluded.value",
                      (json.dumps({p.name: [list(p.names), list(p.descriptors)] for p in people.persons}),))
        return len(out)

    def state(self) -> CastState:
        """The parts of every sentence with a character in it (none while casting is off)."""
        if not self.enabled():
            return CastState(False)
        castings = self.castings()
        alias = self.aliases()
        parts: dict[int, tuple[Part, ...]] = {}
        for sid, raw in self.db.read().execute("SELECT sentence_id, parts FROM cast_lines"):
            made = []
            for start, end, name, _conf, how, *_more in json.loads(raw):
                name = alias(name)
                made.append(Part(start, end, name, castings.get(name, Casting()) if name else None, how))
            parts[int(sid)] = tuple(made)
        return CastState(True, parts)

    def members(self) -> list[CastMember]:
        """The cast list: characters by number of lines, with their casting."""
        alias = self.aliases()
        castings = self.castings()
        lines = []
        texts = dict(self.db.read().execute("SELECT id, text FROM sentences"))
        merged: dict[str, set[str]] = {}
        for name, keep in self.db.read().execute(  # the producer's merges and renames
                "SELECT name, alias_of FROM cast_members WHERE alias_of IS NOT NULL"):
            merged.setdefault(alias(keep), set()).add(name)
        first: dict[str, int] = {}
        for sid, raw in self.db.read().execute("SELECT sentence_id, parts FROM cast_lines ORDER BY sentence_id"):
            for start, end, name, conf, how, *_more in json.loads(raw):
                if name:
                    first.setdefault(alias(name), int(sid))
                    lines.append(Line(0, start, end, texts.get(sid, "")[start:end].strip(), name, conf, how))
                    if alias(name) != name:
                        merged.setdefault(alias(name), set()).add(name)
        found: dict[str, tuple[set[str], set[str]]] = {}
        for person, (names, descriptors) in self.people().items():
            entry = found.setdefault(alias(person), (set(), set()))
            entry[0].update(names)
            entry[1].update(descriptors)
        return [CastMember(c.name, c.lines, c.first_line, castings.get(c.name, Casting()),
                           tuple(sorted(merged.get(c.name, ()))), first.get(c.name, 0),
                           tuple(sorted(found.get(c.name, (set(), set()))[0] - {c.name})),
                           tuple(sorted(found.get(c.name, (set(), set()))[1] - {c.name})))
                for c in cast_list(lines, alias)]

    def people(self) -> dict[str, tuple[list[str], list[str]]]:
        """Each person the rules found: its other names and its descriptors (as last analysed)."""
        row = self.db.read().execute("SELECT value FROM settings WHERE key = 'cast_people'").fetchone()
        return {k: (v[0], v[1]) for k, v in json.loads(row[0]).items()} if row else {}

    def separate(self) -> list[str]:
        """Names the producer split off: each is a person of its own whatever the rules tie it to."""
        row = self.db.read().execute("SELECT value FROM settings WHERE key = 'cast_separate'").fetchone()
        return list(json.loads(row[0])) if row else []

    def split(self, name: str) -> None:
        """``name`` (a name or descriptor the rules or a merge tied to a person) is a character of its own."""
        name = name.strip()
        if not name:
            raise ProjectError("split needs a name: --split NAME")
        kept = sorted(set(self.separate()) | {name})
        with self.db.write() as conn:
            conn.execute("DELETE FROM cast_members WHERE name = ? AND alias_of IS NOT NULL", (name,))
            conn.execute("INSERT INTO settings (key, value) VALUES ('cast_separate', ?) ON CONFLICT(key) DO UPDATE"
                         " SET value = excluded.value", (json.dumps(kept),))
        self.analyse()

    def unattributed(self) -> list[Unattributed]:
        texts = dict(self.db.read().execute("SELECT id, text FROM sentences"))
        out = []
        for sid, raw in self.db.read().execute("SELECT sentence_id, parts FROM cast_lines ORDER BY sentence_id"):
            for start, end, name, _conf, how, *_more in json.loads(raw):
                if not name and how == "unattributed":
                    out.append(Unattributed(int(sid), texts.get(sid, "")[start:end].strip()))
        return out

    def lines(self) -> list[QuotedLine]:
        """Every quoted line in reading order, with its evidence and the two speakers most likely."""
        alias = self.aliases()
        out = []
        for sid, raw, text in self.db.read().execute(
                "SELECT l.sentence_id, l.parts, s.text FROM cast_lines l JOIN sentences s ON s.id = l.sentence_id"
                " ORDER BY s.ord"):
            for start, end, name, _conf, how, *more in json.loads(raw):
                if not how:
                    continue  # narration
                part = Part(start, end, alias(name), None, how)
                others = [alias(n) for n in (more[0] if more else [])]
                candidates = tuple(dict.fromkeys(n for n in [part.name, *others] if n))[:2]
                out.append(QuotedLine(int(sid), text[start:end].strip(), part.name, candidates, part.evidence, how,
                                      part.sure))
        return out

    def review(self) -> list[QuotedLine]:
        """The lines that are not sure, in reading order: what the producer checks (the rules'
        choice and the next most likely speaker side by side)."""
        return [line for line in self.lines() if not line.sure]

    # ------------------------------------------------------------ the producer's decisions

    def castings(self) -> dict[str, Casting]:
        out = {}
        for name, voice, speaker, pitch, pace, expressive in self.db.read().execute(
                "SELECT name, voice_id, speaker, pitch, pace, expressive FROM cast_members WHERE alias_of IS NULL"):
            out[name] = Casting(voice or "", speaker, Performance(pitch or 0.0, pace or 1.0,
                                                                  1.0 if expressive is None else expressive))
        return out

    def aliases(self) -> Aliases:
        groups: dict[str, list[str]] = {}
        for alias, name in self.db.read().execute("SELECT name, alias_of FROM cast_members WHERE alias_of IS NOT NULL"):
            groups.setdefault(name, [name]).append(alias)
        return Aliases(groups.values())

    def set_casting(self, name: str, casting: Casting) -> None:
        """Give a character a voice, a speaker and/or a performance (a neutral casting: the narrator's)."""
        perf = casting.performance
        for value, (lo, hi), what in ((perf.pitch, PITCH_RANGE, "pitch"), (perf.pace, PACE_RANGE, "pace"),
                                      (perf.expressive, EXPRESSIVE_RANGE, "expressiveness")):
            if not lo <= value <= hi:
                raise ProjectError(f"a performance's {what} must be between {lo:g} and {hi:g}, got {value:g}")
        name = self.aliases()(name.strip())
        if not name:
            raise ProjectError("a character needs a name")
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO cast_members (name, voice_id, speaker, pitch, pace, expressive) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET voice_id = excluded.voice_id, speaker = excluded.speaker,"
                " pitch = excluded.pitch, pace = excluded.pace, expressive = excluded.expressive",
                (name, casting.voice_id, casting.speaker, perf.pitch, perf.pace, perf.expressive))

    def merge(self, keep: str, other: str) -> None:
        """``other`` is one character with ``keep`` from now on ("Ahab" into "Captain Ahab")."""
        keep, other = keep.strip(), other.strip()
        if not keep or not other or keep == other:
            raise ProjectError("merge two different names: --merge KEEP,OTHER")
        with self.db.write() as conn:
            conn.execute("UPDATE cast_members SET alias_of = ? WHERE alias_of = ?", (keep, other))
            conn.execute("INSERT INTO cast_members (name, alias_of) VALUES (?, ?) ON CONFLICT(name) DO UPDATE"
                         " SET alias_of = excluded.alias_of", (other, keep))

    def rename(self, old: str, new: str) -> None:
        """``old`` is called ``new`` from now on: its voice goes with it, and ``old`` (with the
        names merged into it) stays an alias, so the rules that find "Ahab" on a re-import
        give the line to the renamed character."""
        old, new = self.aliases()(old.strip()), new.strip()
        if not old or not new or old == new:
            raise ProjectError("rename needs two different names: --rename OLD=NEW")
        owner = self.aliases()(new)
        if owner != new and owner != old:
            raise ProjectError(f"{new!r} is already a name of {owner!r}; merge them instead (--merge {owner},{old})")
        if owner == new and any(m.name == new for m in self.members()):
            raise ProjectError(f"{new!r} is already a character; merge them instead (--merge {new},{old})")
        casting = self.castings().get(old, Casting())
        perf = casting.performance
        with self.db.write() as conn:
            conn.execute("DELETE FROM cast_members WHERE name = ?", (new,))  # an alias of old (renaming back)
            conn.execute("INSERT INTO cast_members (name, voice_id, speaker, pitch, pace, expressive)"
                         " VALUES (?, ?, ?, ?, ?, ?)",
                         (new, casting.voice_id, casting.speaker, perf.pitch, perf.pace, perf.expressive))
            conn.execute("UPDATE cast_members SET alias_of = ? WHERE alias_of = ?", (new, old))
            conn.execute("INSERT INTO cast_members (name, alias_of) VALUES (?, ?) ON CONFLICT(name) DO UPDATE"
                         " SET alias_of = excluded.alias_of", (old, new))
            conn.execute("UPDATE cast_corrections SET name = ? WHERE name = ?", (new, old))

    def correct(self, sentence_ids: int | Iterable[int], name: str) -> None:
        """The quoted lines of these sentences (a sentence's whole text if it has none: a letter
        read in a character's voice, a chapter one character tells) are ``name``'s ("" the
        narrator's); kept by text, so a re-import finds them again."""
        ids = [sentence_ids] if isinstance(sentence_ids, int) else list(sentence_ids)
        conn = self.db.read()
        rows = []
        for sid in ids:
            row = conn.execute("SELECT p.text, s.original_text FROM sentences s JOIN paragraphs p"
                               " ON p.id = s.paragraph_id WHERE s.id = ?", (sid,)).fetchone()
            if row is None:
                raise ProjectError(f"there is no sentence {sid} (chapter titles have no speaker)")
            rows.append((row[0], row[1], name.strip()))
        with self.db.write() as w:
            w.executemany("INSERT INTO cast_corrections (paragraph_text, sentence_text, name) VALUES (?, ?, ?)"
                          " ON CONFLICT(paragraph_text, sentence_text) DO UPDATE SET name = excluded.name", rows)
        self.analyse()

    def sentences_of(self, name: str) -> list[int]:
        """The sentences a character speaks in (what a recast of it renders again)."""
        name = self.aliases()(name)
        alias = self.aliases()
        return [int(sid) for sid, raw in self.db.read().execute("SELECT sentence_id, parts FROM cast_lines")
                if any(alias(p[2]) == name for p in json.loads(raw))]


def _sentence_parts(start: int, length: int, quoted: list, *, edited: str = "") -> list[list]:
    """A sentence's parts (offsets in the sentence) from its paragraph's quoted lines; ``edited``:
    its edited text ("": as imported)."""
    end = start + length
    parts: list[list] = []
    pos = start
    for line in quoted:
        a, b = max(line.start, start), min(line.end, end)
        if a >= b:
            continue
        if a > pos:
            parts.append([pos - start, a - start, NARRATOR, 1.0, ""])
        parts.append([a - start, b - start, line.speaker, line.confidence, line.how, list(line.alternatives)])
        pos = b
    if not parts:
        return []
    if pos < end:
        parts.append([pos - start, end - start, NARRATOR, 1.0, ""])
    parts = [p for p in parts if p[1] > p[0]]
    if edited:  # the printed offsets no longer hold: the edited text's own quotes go to its main speaker
        main = max(parts, key=lambda p: (p[1] - p[0]) * bool(p[2]))
        spans, _open = paragraph_spans(edited)
        if not any(s.quoted for s in spans):
            return [[0, len(edited), *main[2:]]]
        return _merge_same([[s.start, s.end, *main[2:]] if s.quoted else
                            [s.start, s.end, NARRATOR, 1.0, ""] for s in spans])
    return _merge_same(parts)


def _merge_same(parts: list[list]) -> list[list]:
    out: list[list] = []
    for p in parts:
        if out and out[-1][2] == p[2] and out[-1][1] == p[0]:
            last = out[-1]
            how = last[4] if last[4] and (last[4] not in SURE or not p[4]) else p[4] or last[4]  # the weaker rule
            others = list(dict.fromkeys([*(last[5:6] or [[]])[0], *(p[5:6] or [[]])[0]]))
            out[-1] = [last[0], p[1], p[2], min(last[3], p[3]), how] + ([others] if others else [])
        else:
            out.append(list(p))
    return out


def _corrected(parts: list[list], length: int, name: str) -> list[list]:
    if not parts:
        return [[0, length, name, 1.0, "corrected"]]
    return _merge_same([[a, b, name if how else who, 1.0 if how else c, "corrected" if how else how]
                        for a, b, who, c, how, *_more in parts])
