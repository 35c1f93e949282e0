"""Speakers attributed: who says each quoted line, with how sure the guess is.

Why rules and not a model: the studio runs offline on a laptop, a producer must be
able to see why a line went to a character ("said Stubb" beside it), and the rules
that carry most lines in fiction are few -- a speech verb with a name or pronoun on
either side of the quote, a pronoun meaning the last person named, two people
taking turns, a name addressed in a line meaning the other person speaks. A line
none of them settles stays with the narrator and is marked unattributed: a wrong
voice is worse than the narrator's.

Pure: paragraphs in, :class:`Line` records out (:mod:`studio.text.dialogue` finds the quotes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from studio.text.dialogue import Span, split_dialogue, stage_label, trim_marks
from studio.text.speech_tags import (
    DETERMINERS,
    GOES_ON,
    HE,
    NAME_PATTERN,
    SHE,
    STOP_WORDS,
    TITLES_PATTERN,
    VERB_PATTERN,
    clean_name,
    descriptor_of,
    gender_of,
    is_name,
    speaker_in,
    speakers_in,
    subjects_of,
)

UNATTRIBUTED = ""

#: each rule (a line's ``how``) -> the kind of evidence it is: an explicit tag in the quote's own
#: paragraph (a speech verb with a name, a descriptor, "I" or a resolved pronoun; a play's
#: speaker label), a speech continued from the paragraph before, a turn inferred from earlier
#: tags, a name addressed in the line, or a guess (an action beat, an entrance, a stranger)
EVIDENCE = {
    "verb+name": "tag", "verb+I": "tag", "verb+pronoun": "tag", "stage": "tag",
    "continued": "continued", "alternation": "turn", "the other": "turn", "vocative": "vocative",
    "introduced": "tag", "beat": "guess", "entrance": "guess", "corrected": "chosen",
}
#: the rules whose lines were right at least 97 % of the time on the benchmark's tuning parts
#: (docs/cast.md; "neighbour:" is a quote whose paragraph's other quote has the tag): a line
#: attributed by one of them is "sure"; every other line is for review. A turn is never sure:
#: turns right after a tagged speech were right no more often (88 %) than the others (89 %).
SURE = frozenset({"verb+name", "neighbour:verb+name", "verb+I", "neighbour:verb+I", "continued",
                  "neighbour:continued", "corrected"})


def evidence_of(how: str, speaker: str) -> str:
    """What a line's speaker rests on, in the producer's words (:data:`EVIDENCE`); "none" when
    no rule named anyone."""
    return EVIDENCE.get(how.removeprefix("neighbour:"), "guess") if speaker else "none"

@dataclass(frozen=True)
class Line:
    """One quoted line: where it is, what it says, who says it and how that was decided.

    ``speaker`` is "" when unattributed (the narrator voice reads it). ``how`` names
    the rule (:data:`EVIDENCE` groups them into what the producer is shown).
    """

    paragraph: int
    start: int
    end: int
    text: str
    speaker: str
    confidence: float
    how: str
    alternatives: tuple[str, ...] = ()  # the next most likely speakers, most likely first (the review list's)

    @property
    def evidence(self) -> str:
        return evidence_of(self.how, self.speaker)

    @property
    def sure(self) -> bool:
        """Whether the line is attributed on evidence that was right at least 97 % of the time
        on the benchmark's tuning parts (:data:`SURE`); a line that is not goes to the review list."""
        return bool(self.speaker) and self.how in SURE


@dataclass
class _Memory:
    speakers: list[str] = field(default_factory=list)  # attributed names, most recent last
    gender: dict[str, str] = field(default_factory=dict)
    exchange: list[str] = field(default_factory=list)  # the speakers of the last quote paragraphs
    gap: int = 0  # narration paragraphs since the last quote
    scene: list[str] = field(default_factory=list)  # people made subjects in that narration
    seen: set[str] = field(default_factory=set)  # the words of the chapter's paragraphs so far
    tied: dict[str, str] = field(default_factory=dict)  # a descriptor -> the person of an exchange it means
    asked: bool = False  # the last quote paragraph ended on a question (what follows answers it)

    def said(self, name: str) -> None:
        if name and name != "I":
            self.speakers.append(name)
        if name:
            if not self.exchange or self.exchange[-1] != name:
                self.exchange.append(name)
            del self.exchange[:-2]

    def known(self, name: str) -> str:
        """The name as already met ("Emperor" -> "the Emperor"), or ""."""
        for form in (name, f"the {name}"):
            if form in self.speakers or form in self.exchange:
                return form
        words = name.split()
        if len(words) > 1 and words[0].lower() in DETERMINERS and words[-1][0].isupper():
            for known in reversed(self.speakers):  # "the poor old Minister" is "the old Minister"
                if known.split()[-1] == words[-1] and known.split()[0].lower() in DETERMINERS:
                    return known
        return ""

    def learn(self, name: str, gender: str) -> None:
        if name and gender and not self.gender.get(name):
            self.gender[name] = gender

    def fits(self, name: str, pronoun: str) -> bool:
        """Whether he/she (or another pronoun) can mean ``name``: not a group, not the other sex."""
        want = "m" if pronoun.lower() in HE else "f" if pronoun.lower() in SHE else ""
        g = self.gender.get(name, "") or gender_of(name)
        return g != "p" and (not want or not g or g == want)

    def last(self, pronoun: str, exclude: set[str] = frozenset()) -> str:  # type: ignore[assignment]
        """The last speaker a pronoun can mean: he/she not a group, nor one of ``exclude``."""
        for name in reversed(self.speakers):
            if name not in exclude and self.fits(name, pronoun):
                return name
        return UNATTRIBUTED


def _vocatives(quote: str, mem: _Memory, alias: Aliases) -> set[str]:
    """Names addressed in a line ("Yes, Watson," / "my dear Mr. Bennet"): a known speaker, a
    titled name or one after "dear"."""
    out = set()
    for m in re.finditer(rf"(?:^|[,!?;]\s+|\b(?P<d>dear)\s+)(?P<n>{NAME_PATTERN})(?=\s*[,!?;\u2014]|\.(?!\w))", quote):
        name = alias(clean_name(m.group("n")))
        if not is_name(name):
            continue
        titled = bool(re.match(TITLES_PATTERN, name)) and " " in name
        if mem.known(name) or titled or m.group("d"):
            out.add(mem.known(name) or name)
    return out


class Aliases:
    """Names that mean one character ("Holmes" -> "Sherlock Holmes"), matched without case."""

    def __init__(self, groups: Iterable[Iterable[str]] = ()) -> None:
        self.canonical: dict[str, str] = {}
        for group in groups:
            names = [n.strip() for n in group if n.strip()]
            for n in names:
                self.canonical[n.lower()] = names[0]

    def __call__(self, name: str) -> str:
        return self.canonical.get(name.lower(), name) if name else name


def attribute(paragraphs: Sequence[str], aliases: Aliases | None = None,
              spans: Sequence[Sequence[Span]] | None = None) -> list[Line]:
    """Every quoted line of ``paragraphs`` (a chapter, in order) with its speaker."""
    alias = aliases or Aliases()
    spans = spans if spans is not None else split_dialogue(paragraphs)
    mem = _Memory()
    out: list[Line] = []
    spelled: dict[str, str] = {}  # a name as first written, by its case-folded form
    prev_speaker = UNATTRIBUTED
    intro: tuple[str, float, str] | None = None  # "the little man said—": who speaks the next paragraph
    for p, (text, pspans) in enumerate(zip(paragraphs, spans)):
        quotes = [s for s in pspans if s.quoted]
        introduced, intro = intro, None
        if not quotes:
            intro = _introducing(text, mem, alias)
            reported = [w for _at, w, kind in speakers_in(text) if w == "I" or kind == "name" and mem.known(alias(w))]
            if reported and mem.gap == 0:  # "I protested my innocence": a turn taken in reported speech
                prev_speaker = mem.known(alias(reported[-1])) or reported[-1]
                mem.said(prev_speaker)
            mem.seen.update(w.lower() for w in re.findall(r"[\w'\-]+", text))
            mem.scene = (mem.scene + subjects_of(text))[-8:]
            mem.gap += 1
            if mem.gap > 1:
                mem.exchange.clear()
            continue
        staged = stage_label(paragraphs[p - 1] if p and not pspans[0].start and len(pspans) == 1 else text)
        decided = [(spelled.setdefault(w.casefold(), w) if w else w, c, h)  # "the prince" is "the Prince"
                   for w, c, h in ([(alias(staged[0]), 0.95, "stage")] * len(quotes) if staged else
                                   _decide(text, pspans, mem, alias, prev_speaker))]
        if introduced and pspans[0].quoted and not any(h in _OWN_TAGS or h.startswith("neighbour") for _w, _c, h
                                                       in decided):
            decided = [introduced] * len(quotes)
        recent = list(dict.fromkeys([*reversed(mem.exchange), *reversed(mem.speakers[-6:])]))
        for q, (who, conf, how) in zip(quotes, decided):
            others = tuple(n for n in recent if n and n != who)[:2]  # who else it could be: the last speakers
            out.append(Line(p, q.start, q.end, trim_marks(text[q.start:q.end]), who, conf, how, others))
        who = decided[-1][0]
        for name, _, _ in decided:
            if name:
                mem.learn(name, gender_of(name))
        addressed = {n for q in quotes for n in _vocatives(trim_marks(text[q.start:q.end]), mem, alias)} - {who}
        if who and len(addressed) == 1:  # "My dear Mr. Bennet," said his lady: the other one of the pair
            mem.said(addressed.pop())
        for name in dict.fromkeys(n for n, _, _ in decided):
            mem.said(name)
        mem.gap = 0
        mem.scene = []
        mem.asked = trim_marks(text[quotes[-1].start:quotes[-1].end]).endswith("?")
        mem.seen.update(w.lower() for w in re.findall(r"[\w'\-]+", text))
        prev_speaker = who
        if not pspans[-1].quoted:  # '"...," and the little man said—'
            intro = _introducing(text[pspans[-1].start:pspans[-1].end], mem, alias)
    return _introduced(out)


_OWN_TAGS = frozenset({"verb+name", "verb+I", "verb+pronoun", "stage", "the other"})
#: a narration paragraph that hands over to a speech: "... and the little man said—", "he cried:"
_HANDS_OVER = re.compile(rf"\b(?:{VERB_PATTERN}|saying)\b[^.!?\"“”]{{0,40}}[:—–]\s*$|[:—]\s*$")


def _introducing(text: str, mem: _Memory, alias: Aliases) -> tuple[str, float, str] | None:
    """The speaker of the next paragraph's speech, where this narration ends by handing over to it
    ("the little man said—", "the queen, being a prudent woman, said—"): the speech verb's
    own who, else the last person the paragraph made a subject."""
    m = _HANDS_OVER.search(text.rstrip())
    if not m or not re.search(rf"\b(?:{VERB_PATTERN}|saying)\b", text[-80:]):
        return None
    found = _own(text, [Span(0, len(text), False)], 1, mem, alias, set())
    if found and found[0]:
        return found[0], found[1], "introduced"
    subjects = [mem.known(alias(n)) or alias(n) for n in subjects_of(text)]
    subjects = [n for n in subjects if gender_of(n) != "p"]
    return (subjects[-1], 0.7, "introduced") if subjects else None


#: someone who speaks before the chapter names anyone ("he demanded"), until a line of theirs says who
STRANGER = "the stranger"
_INTRODUCED = re.compile(rf"\b(?:I am|I'm|my name is|speaking to|call me)\s+(?P<n>{NAME_PATTERN})")


def _introduced(lines: list[Line]) -> list[Line]:
    """The stranger's lines under the name a line of theirs gives ("Thou art speaking to Captain Peleg")."""
    for line in lines:
        m = _INTRODUCED.search(line.text) if line.speaker == STRANGER else None
        if m and is_name(clean_name(m.group("n"))):
            name = clean_name(m.group("n"))
            return [replace(x, speaker=name if x.speaker == STRANGER else x.speaker,
                            alternatives=tuple(name if n == STRANGER else n for n in x.alternatives)) for x in lines]
    return lines


def _own(text: str, pspans: Sequence[Span], k: int, mem: _Memory, alias: Aliases,
         addressed: set[str]) -> tuple[str, float, str] | None:
    """The speaker a quote's own narration names: right after it, else right before it."""
    for j, before in ((k + 1, False), (k - 1, True)):
        if not 0 <= j < len(pspans) or pspans[j].quoted:
            continue
        piece = text[pspans[j].start:pspans[j].end]
        found = speaker_in(piece, before_quote=before)
        if before and j > 0 and found and pspans[j - 1].quoted:
            every = speakers_in(piece)
            if len(every) < 2 or not re.search(r"[;.!?]", piece[every[0][0]:every[-1][0]]):
                continue  # '"a," said X, "b"': the verb belongs to the quote before
            # '"a!" cried the King; but ... the people cried, "b"': the later verb is this quote's
        if found is None:
            continue
        who, kind = found
        if kind == "name" and who.lower() in ("the other", "the other one"):
            if len(mem.exchange) == 2:  # "rejoined the other": the other one of the pair
                return mem.exchange[0], 0.8, "the other"
            return "the other", 0.8, "the other"  # of two nobody named yet: a person of its own
        if kind == "name":
            return _tied(_possessive(alias(who), mem), mem), 0.95, "verb+name"
        if who in ("I", "je", "yo"):
            return "I", 0.9, "verb+I"
        if who.lower() == "they":
            continue
        if GOES_ON.search(piece):
            return "", 0.85, "goes on"  # '"a," he said. ... "b," he continued': the same speaker
        earlier = "".join(text[s.start:s.end] for s in pspans[:j + int(before)] if not s.quoted)
        told = {mem.known(alias(w)) or alias(w) for w in  # "he said to Old Pipes", "To the Emperor he said"
                (clean_name(m.group(1)) if m.group(1)[0].isupper() else descriptor_of(m.group(1)) for m in
                 re.finditer(rf"\b[Tt]o\s+((?:the|his|her)\s+[\w\-]+|{NAME_PATTERN})", piece))}
        addressed = addressed | (told - {""})
        local = [mem.known(alias(clean_name(m.group(0)))) for m in re.finditer(NAME_PATTERN, earlier)]
        local = [n for n in local if n and n not in addressed and gender_of(n) != "p"]
        subjects = [alias(n) for n in subjects_of(earlier) or mem.scene]
        subjects = [mem.known(n) or n for n in subjects if mem.fits(mem.known(n) or n, who)]
        subjects = [n for n in subjects if n not in addressed]
        # a new paragraph, a new voice: the other one of a pair the pronoun can mean
        turn = {mem.exchange[-1]} if (len(mem.exchange) == 2 and mem.gap == 0
                                      and mem.fits(mem.exchange[0], who)) else set()
        name = (subjects[-1] if subjects else local[-1] if local
                else (mem.last(who, addressed | turn) or mem.last(who, addressed)))
        if not name and who.lower() in HE | SHE and not mem.speakers:
            name = STRANGER  # "he demanded" before anyone is named: someone the chapter names later
        if name:
            mem.learn(name, "m" if who.lower() in HE else "f" if who.lower() in SHE else "")
            return name, 0.8, "verb+pronoun"
    return None


def _tied(name: str, mem: _Memory) -> str:
    """A descriptor the chapter never used before, said in a two-person exchange, for one of the
    two: the one whose title is its head ("the one-armed captain" after "Captain Boomer"), or the
    one whose turn it is when it says whose kin he is ("her son" to his mother)."""
    if name in mem.tied:
        return mem.tied[name]
    words = name.split()
    if (len(words) < 2 or words[0].lower() not in DETERMINERS or mem.known(name) or len(mem.exchange) != 2
            or mem.gap or words[-1].lower() in mem.seen or gender_of(name) == "p"):
        return name
    head = words[-1].lower()
    titled = [n for n in mem.exchange if head in (w.lower().rstrip(".") for w in n.split()[:-1])]
    turn = mem.exchange[0]
    if len(titled) == 1:
        mem.tied[name] = titled[0]
    elif (words[0].lower() in ("his", "her", "their") and turn != "I"
          and mem.fits(turn, {"m": "he", "f": "she"}.get(gender_of(name), "they"))):
        mem.tied[name] = turn
    return mem.tied.get(name, name)


def _possessive(name: str, mem: _Memory) -> str:
    """"his wife" after "his lady" in a two-person exchange: the same person, named as before."""
    head = name.split()[0]
    if head in ("his", "her", "their"):
        for other in mem.exchange:
            if other != name and other.split()[0] == head:
                return other
    return name


def _decide(text: str, pspans: Sequence[Span], mem: _Memory, alias: Aliases,
            prev_speaker: str) -> list[tuple[str, float, str]]:
    """Each quote's speaker in one paragraph: its own verb, else its neighbour's in the
    paragraph, else the paragraph's (continued speech, an action beat, turns, a name addressed)."""
    idx = [k for k, s in enumerate(pspans) if s.quoted]
    said = " ".join(trim_marks(text[pspans[k].start:pspans[k].end]) for k in idx)
    addressed = _vocatives(said, mem, alias)
    own = [_own(text, pspans, k, mem, alias, addressed) for k in idx]
    if pspans[idx[0]].continued and prev_speaker and not mem.asked and not (own[0] and own[0][0] not in
                                                                             ("", prev_speaker)):
        return [(prev_speaker, 0.9, "continued")] * len(idx)  # a speech over paragraphs, not an answer
    for i in range(1, len(own)):
        if own[i] and own[i][2] == "goes on":
            own[i] = (own[i - 1][0], own[i][1], "continued") if own[i - 1] and own[i - 1][0] else None
    own[0] = None if own[0] and own[0][2] == "goes on" else own[0]
    if any(own):
        out = []
        for i, o in enumerate(own):
            if o is None:
                near = next((own[j] for j in range(i - 1, -1, -1) if own[j]), None) or \
                    next(own[j] for j in range(i + 1, len(own)) if own[j])
                o = (near[0], min(near[1], 0.85), "neighbour:" + near[2])
            out.append(o)
        return out
    return [_paragraph_speaker(text, pspans, idx, mem, alias, prev_speaker)] * len(idx)


def _paragraph_speaker(text: str, pspans: Sequence[Span], idx: list[int], mem: _Memory, alias: Aliases,
                       prev_speaker: str) -> tuple[str, float, str]:
    if idx[0] > 0:
        m = re.match(rf"\s*(?P<n>{NAME_PATTERN})\s+[a-z]", text[pspans[0].start:pspans[0].end])
        if m:
            name = mem.known(alias(clean_name(m.group("n"))))
            if name:
                return name, 0.7, "beat"
    said = " ".join(text[pspans[k].start:pspans[k].end] for k in idx)
    narration = "".join(text[s.start:s.end] for s in pspans if not s.quoted)
    addressed = _vocatives(trim_marks(said), mem, alias)
    if not re.search(rf"\b{VERB_PATTERN}\b", narration):
        # an entrance: the person the narration just before the speech made the subject of a verb
        before = text[pspans[0].start:pspans[0].end] if idx[0] > 0 else ""
        entered = [mem.known(alias(n)) or alias(n) for n in (subjects_of(before) if before.strip() else
                                                             mem.scene if mem.gap else [])]
        entered = [n for n in entered if n not in addressed and gender_of(n) != "p"]
        if entered and (idx[0] > 0 or mem.known(entered[-1]) or not entered[-1].split()[0].lower() in DETERMINERS):
            return entered[-1], 0.6, "entrance"
    if re.search(rf"\b{VERB_PATTERN}\b", narration) or len(narration.strip()) > len(said):
        return UNATTRIBUTED, 0.0, "unattributed"  # someone the rules cannot name speaks, or a scene moves on
    if len(mem.exchange) == 2 and mem.gap <= 1:
        other = mem.exchange[0] if mem.exchange[1] == prev_speaker else mem.exchange[1]
        if other in addressed:
            other = mem.exchange[1] if other == mem.exchange[0] else mem.exchange[0]
        return other, 0.6, "alternation"
    if addressed and mem.exchange:
        others = [n for n in reversed(mem.exchange) if n not in addressed]
        if others:
            return others[0], 0.55, "vocative"
    return UNATTRIBUTED, 0.0, "unattributed"


def nearest_name(paragraphs: Sequence[str], spans: Sequence[Sequence[Span]] | None = None) -> list[str]:
    """The baseline: each line goes to the capitalised name nearest to it in the narration
    of its paragraph (else of the paragraph before); "" when there is none."""
    spans = spans if spans is not None else split_dialogue(paragraphs)
    out: list[str] = []
    for p, (text, pspans) in enumerate(zip(paragraphs, spans)):
        for q in (s for s in pspans if s.quoted):
            best, dist = UNATTRIBUTED, None
            for s in (x for x in pspans if not x.quoted):
                for m in re.finditer(NAME_PATTERN, text[s.start:s.end]):
                    name = clean_name(m.group(0))
                    if not name or name.split()[0] in STOP_WORDS:
                        continue
                    at = s.start + m.start()
                    d = min(abs(at - q.end), abs(at - q.start))
                    if dist is None or d < dist:
                        best, dist = name, d
            if not best and p > 0:
                names = [clean_name(m.group(0)) for m in re.finditer(NAME_PATTERN, paragraphs[p - 1])]
                names = [n for n in names if n and n.split()[0] not in STOP_WORDS]
                best = names[-1] if names else UNATTRIBUTED
            out.append(best)
    return out
