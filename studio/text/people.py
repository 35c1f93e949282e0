"""People: the speakers the rules found, made one character per person.

Why a pass of its own after the attribution: a book calls one man "Captain Ahab" in one
chapter and "Ahab" in the next, "the one-armed captain" in a third, and tells its story
as "I"; the attribution names each line as its paragraph does, and only the whole book
says which names are one person. What ties names together here is what a reader goes by:
a title or first name left off ("Mr. Stubb" and "Stubb", "Sherlock Holmes" and "Holmes",
never "Mr. Bennet" and "Mrs. Bennet"), a descriptor set beside a name ("Boomer, the
one-armed captain,"), descriptors that share a telling word ("the one-armed captain", "the
one-armed commander"; "the captain" when one descriptor has that head), and the narrator's
own name where the book gives it ("I called myself Pip"). Things never speak: a speech verb
beside "the lighted tomahawk" or "his tone" names nobody.

Pure: lines and paragraphs in, a :class:`People` map out. The producer's merges, renames
and splits stay on top of it (:mod:`studio.project.cast`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from studio.text.attribution import Aliases, Line
from studio.text.speech_tags import (
    NAME_PATTERN,
    TITLES_PATTERN,
    clean_name,
    descriptor_of,
    gender_of,
    is_name,
)
from studio.text.dialogue import split_dialogue

THE_NARRATOR = "the narrator"

_DET = ("the", "a", "an")
_TITLE_RE = re.compile(rf"^(?P<t>{TITLES_PATTERN})\.?\s+(?P<rest>.+)$")
#: modifiers too common to tell two people apart ("the old man", "the old woman")
_GENERIC = frozenset("old little young poor good other great big small dear two three first second last same "
                     "elder eldest younger youngest new whole tall fat kind pretty beautiful ugly strange "
                     "grand fine long short".split())
#: head nouns of things and sounds: a speech verb beside one names nobody
_THINGS = frozenset(
    "tomahawk pipe door doors window wind bell bells clock gun guns shot shots cannon fire flame air sea water "
    "waves wave storm thunder rain sun moon stars star ax axe knife sword spear harpoon tone tones words word "
    "answer reply question letter note paper book books page cry noise sound sounds echo steeple church "
    "tombstone stone wheels wheel music report smoke ship boat mast sail sails deck table chair candle candles "
    "lamp lamps hat head eyes hand hands face lips mouth heart tongue silence".split())
#: words after a descriptor's head ("the wheels inside the box", "the overseer of the workmen")
_AFTER_HEAD = frozenset("of in inside outside behind beside near over under into upon on at by from with".split())
_APPOSITION = re.compile(rf"(?P<name>{NAME_PATTERN}),\s+(?P<d>(?:the|a|an)\s+(?:[\w'\-]+\s+){{0,3}}?[\w'\-]+)"
                         r"(?=\s*[,;:.!?\u2014)]|\s+(?:who|whom|whose|that)\b)")
_APPOSITION_BEFORE = re.compile(rf"\b(?P<d>(?:the|The)\s+(?:[\w'\-]+\s+){{0,3}}?[\w'\-]+),\s+(?P<name>{NAME_PATTERN})"
                                r"(?=\s*[,;:.!?\u2014])")
_NARRATOR_NAMED = re.compile(
    r"\b(?:[Cc]all me|I called myself|[Mm]y name (?:is|was)|I am called|I was called|they called me)\s+"
    r"(?P<n>[A-Z][\w\-]+(?:\s+[A-Z][\w\-]+)?)")


@dataclass(frozen=True)
class Person:
    """One person as the cast shows it: the name used, the other names and the descriptors."""

    name: str
    names: tuple[str, ...] = ()
    descriptors: tuple[str, ...] = ()


class People:
    """Every speaker's name -> the person's name ("" for a thing: the narrator reads it)."""

    def __init__(self, persons: Iterable[Person] = (), dropped: Iterable[str] = (),
                 forms: dict[str, str] | None = None) -> None:
        """``forms``: other forms of a person's name never listed as names (the narrator's "I",
        "Landlord" addressed for "the landlord")."""
        self.persons = tuple(persons)
        self.of: dict[str, str] = dict(forms or {})
        for p in self.persons:
            for n in (p.name, *p.names, *p.descriptors):
                self.of[n] = p.name
        for n in dropped:
            self.of[n] = ""
        self.folded = {n.casefold(): p for n, p in self.of.items()}  # "the gardener" is "the Gardener"

    def __call__(self, name: str) -> str:
        return self.of.get(name, self.folded.get(name.casefold(), name)) if name else name

    def person(self, name: str) -> Person | None:
        return next((p for p in self.persons if p.name == name), None)

    def apply(self, lines: Iterable[Line]) -> list[Line]:
        """The lines with each speaker named as its person (a thing's lines go to the narrator)."""
        out = []
        for line in lines:
            who = self(line.speaker)
            others = tuple(dict.fromkeys(n for n in map(self, line.alternatives) if n and n != who))
            out.append(replace(line, speaker=who, confidence=line.confidence if who else 0.0,
                               how=line.how if who else "unattributed", alternatives=others))
        return out


def is_descriptor(name: str) -> bool:
    return bool(name) and name.split()[0].lower() in _DET + ("his", "her", "their", "its", "my", "our")


def is_thing(name: str) -> bool:
    """A thing or a sound, not a person: "the lighted tomahawk", "his tone", "CROW'S-NESTS"."""
    words = name.split()
    if not words:
        return False
    if name.isupper() and len(name) > 3 and name != name.lower():  # a heading, not a person
        return True
    if not is_descriptor(name):
        return False
    kept = [w.lower() for w in words[1:]]
    cut = next((i for i, w in enumerate(kept) if i and w in _AFTER_HEAD), len(kept))
    return kept[cut - 1] in _THINGS  # "the wheels inside the box": its head is "wheels"


def narrator_name(paragraphs: Sequence[str], spans: Sequence[Sequence] | None = None) -> str:
    """The first-person narrator's name as the narration gives it ("Call me Ishmael", "I called
    myself Pip"), else "the narrator"."""
    spans = spans if spans is not None else split_dialogue(paragraphs)
    for text, pspans in zip(paragraphs, spans):
        narration = " ".join(text[s.start:s.end] for s in pspans if not s.quoted)
        m = _NARRATOR_NAMED.search(narration)
        if m and is_name(clean_name(m.group("n"))):
            return clean_name(m.group("n"))
    return THE_NARRATOR


def find_people(lines: Sequence[Line], paragraphs: Sequence[str], *, separate: Iterable[str] = (),
                spans: Sequence[Sequence] | None = None) -> People:
    """Group the speakers of ``lines`` (a book's, or a chapter's) into people.

    ``separate``: names the producer split off; each stays a person of its own.
    """
    counts = Counter(line.speaker for line in lines if line.speaker)
    keep_apart = set(separate)
    dropped = [n for n in counts if is_thing(n) or not _speaks(n, lines)]
    names = [n for n in counts if n not in dropped]
    parent = {n: n for n in names}

    def find(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    apart = _answering(lines)
    members: dict[str, set[str]] = {n: {n} for n in names}

    def union(a: str, b: str, sure: bool = False) -> None:
        """One person; a guess (``sure`` False) never joins two who answer each other."""
        if a not in parent or b not in parent or a in keep_apart or b in keep_apart:
            return
        ra, rb = find(a), find(b)
        if ra == rb or not sure and any((x, y) in apart for x in members.get(ra, {ra}) for y in members.get(rb, {rb})):
            return  # two who answer each other are two people ("the Duck" and "the old Duck")
        parent[ra] = rb
        members[rb] = members.get(rb, {rb}) | members.pop(ra, {ra})

    narrator = ""
    if "I" in parent:
        narrator = narrator_name(paragraphs, spans)
        parent[narrator] = parent.get(narrator, narrator)
        counts[narrator] += 0
        union("I", narrator, True)
    _merge_names([n for n in parent if not is_descriptor(n) and n != "I"], union)
    by_form = {_the(d).lower(): d for d in parent if is_descriptor(d)}
    for n in [n for n in parent if " " not in n and n != "I" and not is_descriptor(n)]:
        if f"the {n.lower()}" in by_form:  # "Landlord, ..." addressed, and "said the landlord": one person
            union(n, by_form[f"the {n.lower()}"], True)
    ties = _appositions(paragraphs)
    for d in [n for n in parent if is_descriptor(n)]:
        tied = ties.get(_the(d))
        if tied:
            target = next((n for n in parent if n.lower() == tied.lower()), "")
            if not target:
                parent[tied] = tied
                target = tied
            union(d, target, True)
    _merge_descriptors([n for n in parent if is_descriptor(n)], union, find)
    groups: dict[str, list[str]] = {}
    for n in parent:
        groups.setdefault(find(n), []).append(n)
    persons, forms = [], {}
    for members in groups.values():
        described = {_the(d).lower() for d in members if is_descriptor(d)}
        proper = [n for n in members if not is_descriptor(n) and n != "I" and f"the {n.lower()}" not in described]
        if narrator and narrator in members:
            head = narrator
        else:
            head = max(proper or members, key=lambda n: (counts[n], len(n)))
        persons.append(Person(head, tuple(sorted(n for n in proper if n != head)),
                              tuple(sorted(n for n in members if is_descriptor(n) and n.lower() != head.lower()))))
        forms.update({n: head for n in members if n == "I" or not is_descriptor(n) and n not in proper})
    return People(persons, dropped, forms)


def _answering(lines: Sequence[Line]) -> set[tuple[str, str]]:
    """Pairs of speakers where one answers the other (their lines in paragraphs one after the other)."""
    out: set[tuple[str, str]] = set()
    first: dict[int, str] = {}
    last: dict[int, str] = {}
    for line in lines:
        first.setdefault(line.paragraph, line.speaker)
        last[line.paragraph] = line.speaker
    for p, who in first.items():
        before = last.get(p - 1, "")
        if who and before and who != before:
            out |= {(who, before), (before, who)}
    return out


def _the(descriptor: str) -> str:
    words = descriptor.split()
    return " ".join(["the"] + words[1:]) if words[0].lower() in _DET else descriptor


def _appositions(paragraphs: Sequence[str]) -> dict[str, str]:
    """Descriptors set beside one name in the text ("Boomer, the one-armed captain,"): descriptor -> name."""
    seen: dict[str, set[str]] = {}
    for text in paragraphs:
        for pattern in (_APPOSITION, _APPOSITION_BEFORE):
            for m in pattern.finditer(text):
                name = clean_name(m.group("name"))
                d = descriptor_of(m.group("d"))
                if not d or not is_name(name) or " " in name and name.split()[0].lower() in _DET:
                    continue
                if is_thing(d) or gender_of(d) == "p":
                    continue
                seen.setdefault(_the(d), set()).add(name)
    return {d: next(iter(n)) for d, n in seen.items() if len(n) == 1}


def _merge_names(names: list[str], union) -> None:  # noqa: ANN001 - the union of find_people
    """"Captain Ahab" and "Ahab", "Mr. Stubb" and "Stubb", "Sherlock Holmes" and "Holmes": one
    person, unless the bare name could mean two ("Bennet" beside "Mr." and "Mrs. Bennet")."""
    by_bare: dict[str, list[tuple[str, str]]] = {}
    for n in names:
        m = _TITLE_RE.match(n)
        bare, title = (m.group("rest"), m.group("t")) if m else (n, "")
        by_bare.setdefault(bare.split()[-1], []).append((n, title))
    for key, forms in by_bare.items():
        if len(forms) < 2:
            continue
        genders = {gender_of(t) for _n, t in forms if t} - {""}
        fulls = {n for n, t in forms if len(n.split()) > 1 and not t}
        if len(genders) > 1 or len(fulls) > 1:
            for g in genders:  # "Mr. Bennet" with "Mr Bennet": only the same title's forms
                same = [n for n, t in forms if t and gender_of(t) == g]
                for n in same[1:]:
                    union(n, same[0], True)
            continue
        for n, _t in forms[1:]:
            union(n, forms[0][0], True)
    names = [n for n in names if n[:1].isupper()]  # "one" and "one of them" are no first name and full name
    singles = [n for n in names if " " not in n]
    for s in singles:  # "Mary" and "Mary Hale"
        longer = [n for n in names if " " in n and not _TITLE_RE.match(n) and n.split()[0] == s]
        if len(longer) == 1:
            union(s, longer[0])


def _merge_descriptors(descriptors: list[str], union, find) -> None:  # noqa: ANN001
    """Descriptors of one person: those that share a telling modifier ("the one-armed captain",
    "the one-armed commander"), and those with one head where no two telling modifiers differ
    ("the Prince", "the Happy Prince", "the poor Prince"); a plain person's head ("the old man",
    "the little man") only with the same modifiers."""
    split = {d: _head_and_mods(d) for d in descriptors}
    by_form: dict[str, str] = {}
    for d in descriptors:  # "a man", then "the man"
        union(d, by_form.setdefault(_the(d).lower(), d), True)
    for d, (head, mods) in split.items():
        for other, (ohead, omods) in split.items():
            if other != d and mods & omods and _same_sex(d, other):
                union(d, other)
    by_head: dict[str, list[str]] = {}
    for d, (head, _mods) in split.items():
        by_head.setdefault(head, []).append(d)
    for head, group in by_head.items():
        if len(group) < 2:
            continue
        telling = {frozenset(split[d][1]) for d in group} - {frozenset()}
        if head in _PLAIN_HEADS:
            for d in group:
                for other in group:
                    mine, theirs = set(_plain_mods(d)), set(_plain_mods(other))
                    if other != d and split[d][1] == split[other][1] and (mine == theirs or mine and mine < theirs):
                        union(d, other)  # "the old man" and "the little old man"; never "the man" and "the old man"
        elif len(telling) <= 1:
            for d in group[1:]:
                union(d, group[0])
    words = {d: _content(d) for d in descriptors}
    for d, mine in words.items():  # "the Tree" and "the Fir Tree", "the mother" and "the Mother-Duck"
        if not mine or split[d][0] in _PLAIN_HEADS:
            continue
        wider = [o for o, theirs in words.items() if o != d and mine < theirs and _same_sex(d, o)]
        if wider and all(find(o) == find(wider[0]) for o in wider):
            union(d, wider[0])


#: heads that name no one in particular: descriptors with them are one person only when alike
_PLAIN_HEADS = frozenset("man woman men women boy girl child children lady gentleman fellow person one people "
                         "creature thing voice stranger friend".split())
_FUNCTION = frozenset("the a an of and in with on at his her their its".split())


def _head_and_mods(descriptor: str) -> tuple[str, set[str]]:
    """"the overseer of the workmen" -> ("overseer", set()); "the one-armed captain" -> ("captain", {"one-armed"})."""
    words = [w.lower() for w in descriptor.split()[1:]]
    if "of" in words[1:]:
        words = words[:words.index("of", 1)]
    return words[-1], {w for w in words[:-1] if w not in _GENERIC and w not in _FUNCTION}


def _content(descriptor: str) -> frozenset[str]:
    """The telling words of a descriptor, hyphenated ones split ("the Mother-Duck" -> mother, duck)."""
    words = [w for part in descriptor.lower().split()[1:] for w in part.split("-")]
    if "of" in words[1:]:
        words = words[:words.index("of", 1)]
    return frozenset(w for w in words if w not in _GENERIC and w not in _FUNCTION)


def _plain_mods(descriptor: str) -> list[str]:
    return [w.lower() for w in descriptor.split()[1:-1]]


def _same_sex(a: str, b: str) -> bool:
    """Whether two descriptors can be one person: not a group and one, not a man and a woman."""
    ga, gb = gender_of(a), gender_of(b)
    return (ga == "p") == (gb == "p") and (not ga or not gb or ga == gb)


#: rules that put a speech verb beside the speaker (its name, a pronoun meaning it, a play's speaker label)
_NAMED_BY_VERB = frozenset({"verb+name", "neighbour:verb+name", "stage", "introduced", "verb+pronoun",
                            "neighbour:verb+pronoun"})


def _speaks(name: str, lines: Sequence[Line]) -> bool:
    """Whether the book gives ``name`` a speech verb or addresses it in a line ("Landlord, ..."):
    a descriptor met only in the narration ("the plane", "the bench") that an entrance or a turn
    pointed at is no speaker. A proper name may enter and speak ("Stubb came up the side.")."""
    if name == "I" or name.lower() in _NAMELESS_SPEAKERS or not is_descriptor(name):
        return True
    if any(line.speaker == name and line.how in _NAMED_BY_VERB for line in lines):
        return True
    bare = re.sub(r"^(?:the|a|an)\s+", "", name, flags=re.IGNORECASE)
    called = re.compile(rf"(?:^|[,;!?]\s+|\b(?:dear|my|good|O)\s+){re.escape(bare)}\s*[,!?;.—]", re.IGNORECASE)
    return any(called.search(line.text) for line in lines)


_NAMELESS_SPEAKERS = frozenset({"the stranger", "the other"})


@dataclass(frozen=True)
class Character:
    """A cast entry: a character, how many lines they have and their first one."""

    name: str
    lines: int
    first_line: str
    aliases: tuple[str, ...] = ()


def cast_list(lines: Iterable[Line], aliases: Aliases | None = None) -> list[Character]:
    """Characters by number of lines (most first); aliases counted under one name."""
    alias = aliases or Aliases()
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    seen: dict[str, set[str]] = {}
    for line in lines:
        if not line.speaker:
            continue
        name = alias(line.speaker)
        counts[name] = counts.get(name, 0) + 1
        first.setdefault(name, line.text)
        if line.speaker != name:
            seen.setdefault(name, set()).add(line.speaker)
    return [Character(n, c, first[n], tuple(sorted(seen.get(n, ())))) for n, c in
            sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
