"""Dialogue and speakers: quote detection and speaker attribution on hand-labelled fiction.

Run ``python bench/cast.py``: the default is the blind part (labelled before the rules
it measures were last changed, and never read to change one); ``--part blind1`` the
first blind part (blind for the round before, since read), ``--part tune`` the part the
rules were tuned on, ``--part held-out`` the first held-out part, ``--part old`` every
part but the blind ones, ``--part tune3`` the third round's tuning part, ``--part
heldout3`` its part never tuned on, ``--part tuning`` every part but that one (what the
sure rules were measured on), ``--part all`` everything; ``--evidence`` adds how often each
rule was right. The labels are in
``bench/cast_data/labels.txt``; the books are the typed public-domain excerpts beside
it and the shared children's-literature EPUB (skipped, and said so, when absent).

Prints per book and in total: labelled lines, lines found by the quote detector,
speaker right (studio), speaker right (the "nearest name" baseline), speaker right on
lines whose paragraph has a speech verb with a name or pronoun, the precision of the
attributed lines, lines of a named person left to the narrator, the studio's characters
per labelled person (one person called by two names is two), lines given to a thing
the labels list ("thing:"), the share of lines the studio marks sure and how many of
those are right, and the seconds the quote finding and attribution took.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from studio.text.attribution import SURE, Aliases, Line, attribute, nearest_name  # noqa: E402
from studio.text.dialogue import split_dialogue  # noqa: E402
from studio.text.people import THE_NARRATOR, find_people  # noqa: E402

DATA = Path(__file__).resolve().parent / "cast_data"
#: the shared EPUBs: in shared/ beside the checkout (or beside the folder of a worktree)
SHARED_EPUBS = next((p / "shared" / "fixtures" / "epub" for p in Path(__file__).resolve().parents[1:4]
                     if (p / "shared" / "fixtures" / "epub").is_dir()),
                    Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "epub")
_VERBS = (r"(?:said|says|asked|cried|replied|answered|exclaimed|remarked|returned|continued|added|muttered|"
          r"murmured|shouted|interrupted|roared|demanded|retorted|thought|twittered|whispered|dit|répondit|demanda|"
          r"répliqua|s'écria|ajouta)")
_WHO = r"(?:he|she|I|they|il|elle|(?:the|a|his|her|its|one of the|each of the)\s+\w+|[A-Z][\w.]+)"
#: a line "with a speech verb and a name or pronoun": its paragraph has a verb with a who beside it
_VERB_NEAR = re.compile(rf"\b{_VERBS}(?:\s+\w+ly)?\s+{_WHO}\b|\b{_WHO}\s+(?:\w+ly\s+)?{_VERBS}\b|"
                        rf"\b(?:dit|demanda|ajouta)-(?:t-)?(?:il|elle)\b")


@dataclass
class Book:
    source: str
    part: str
    aliases: list[list[str]] = field(default_factory=list)
    things: set[str] = field(default_factory=set)
    labels: dict[int, list[str]] = field(default_factory=dict)


def read_labels(path: Path = DATA / "labels.txt") -> list[Book]:
    books: list[Book] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"\[book (\S+) part=(\S+)\]", line)
        if m:
            books.append(Book(m.group(1), m.group(2)))
        elif line.startswith("alias:"):
            books[-1].aliases.append([n.strip() for n in line[6:].split("=")])
        elif line.startswith("thing:"):
            books[-1].things.update(n.strip().lower() for n in line[6:].split("="))
        else:
            p, names = line.split(":", 1)
            books[-1].labels[int(p)] = [n.strip() for n in names.split("|")]
    return books


def paragraphs_of(source: str) -> list[str] | None:
    if source.startswith("epub:"):
        name, chapter = source[5:].split("#")
        path = SHARED_EPUBS / f"{name}.epub"
        if not path.is_file():
            return None
        return [p.text for p in _epub(path).chapters[int(chapter)].paragraphs]
    body = "\n".join(ln for ln in (DATA / source).read_text(encoding="utf-8").splitlines() if not ln.startswith("#"))
    return [p.strip() for p in body.split("\n\n") if p.strip()]


@functools.lru_cache(maxsize=4)
def _epub(path: Path):  # noqa: ANN202 - a studio Book
    from studio.text.importer import load_manuscript

    return load_manuscript(path)


def _norm(name: str, aliases: Aliases) -> str:
    name = "I" if name == THE_NARRATOR else name  # the first-person narrator, by the name the studio gives
    name = re.sub(r"^(the|a|an)\s+", "", aliases(name).strip(), flags=re.I).lower()
    return name


#: per rule (a line's ``how``): [lines, right], over the books scored in this run
EVIDENCE_TALLY: dict[str, list[int]] = {}


@dataclass
class Score:
    lines: int = 0
    found: int = 0
    extra: int = 0
    right: int = 0
    baseline: int = 0
    verb_lines: int = 0
    verb_right: int = 0
    attributed: int = 0
    attributed_right: int = 0
    narrator: int = 0  # lines of a named person left to the narrator
    persons: int = 0  # labelled people with a line the studio attributed
    characters: int = 0  # the studio's characters on those people's lines, added up
    things: int = 0  # lines given to a thing of the narration
    sure: int = 0  # lines the studio marks sure
    sure_right: int = 0
    seconds: float = 0.0

    def add(self, other: "Score") -> None:
        for k in vars(self):
            setattr(self, k, getattr(self, k) + getattr(other, k))


def score_book(book: Book) -> Score | None:
    paragraphs = paragraphs_of(book.source)
    if paragraphs is None:
        return None
    aliases = Aliases(book.aliases)
    t0 = time.perf_counter()
    spans = split_dialogue(paragraphs)
    lines = find_people(lines := attribute(paragraphs, spans=spans), paragraphs, spans=spans).apply(lines)
    seconds = time.perf_counter() - t0
    base = nearest_name(paragraphs, spans=spans)
    by_par: dict[int, list[tuple[str, str, Line]]] = {}
    for line, b in zip(lines, base):
        by_par.setdefault(line.paragraph, []).append((line.speaker, b, line))
    s = Score(seconds=seconds)
    characters: dict[str, set[str]] = {}
    s.things = sum(1 for line in lines if line.speaker and _norm(line.speaker, Aliases()) in book.things)
    for p, labels in book.labels.items():
        got = by_par.get(p, [])
        counted = [(i, lab) for i, lab in enumerate(labels) if lab != "-"]
        s.lines += len(counted)
        s.extra += max(0, len(got) - len(labels))
        verb = bool(_VERB_NEAR.search(paragraphs[p]))
        for i, lab in counted:
            if i >= len(got):
                continue
            s.found += 1
            want = "" if lab == "?" else _norm(lab, aliases)
            said, near, line = got[i]
            ok = (_norm(said, aliases) if said else "") == want
            s.sure += line.sure
            s.sure_right += line.sure and ok
            EVIDENCE_TALLY.setdefault(line.how, [0, 0])[0] += 1
            EVIDENCE_TALLY[line.how][1] += ok
            s.right += ok
            s.baseline += ((_norm(near, aliases) if near else "") == want)
            if said:
                s.attributed += 1
                s.attributed_right += ok
                if want:
                    characters.setdefault(want, set()).add(said)
            elif want:
                s.narrator += 1
            if verb and lab != "?":
                s.verb_lines += 1
                s.verb_right += ok
    s.persons, s.characters = len(characters), sum(len(v) for v in characters.values())
    return s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--evidence", action="store_true", help="also print how often each rule was right")
    ap.add_argument("--part", choices=("blind", "blind1", "held-out", "tune", "tune3", "heldout3", "old", "tuning", "all"), default="blind")
    args = ap.parse_args()
    total = Score()
    t0 = time.perf_counter()
    print(f"{'book':44} {'part':8} {'lines':>5} {'found':>6} {'extra':>5} {'studio':>7} {'nearest':>7} "
          f"{'verb+who':>9} {'of':>4} {'precision':>9} {'narrator':>8} {'ch/person':>9} {'things':>6} {'sure':>6} "
          f"{'sure ok':>7} {'s':>6}")
    for book in read_labels():
        if args.part not in ("all", book.part) and not (args.part == "old" and book.part not in ("blind", "heldout3")) \
                and not (args.part == "tuning" and book.part != "heldout3"):
            continue
        s = score_book(book)
        if s is None:
            print(f"{book.source:44} {book.part:8} skipped: the shared EPUB is not here")
            continue
        total.add(s)
        _row(book.source, book.part, s)
    _row("TOTAL", args.part, total)
    print(f"({time.perf_counter() - t0:.2f} s)")
    if args.evidence:
        print(f"\n{'rule (how)':24} {'lines':>5} {'right':>7}  sure?")
        for how, (n, ok) in sorted(EVIDENCE_TALLY.items(), key=lambda kv: -kv[1][0]):
            print(f"{how:24} {n:5d} {_pct(ok, n):>7}  {'sure' if how in SURE else ''}")
    return 0


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "-"


def _row(name: str, part: str, s: Score) -> None:
    print(f"{name:44} {part:8} {s.lines:5d} {_pct(s.found, s.lines):>6} {s.extra:5d} {_pct(s.right, s.lines):>7} "
          f"{_pct(s.baseline, s.lines):>7} {_pct(s.verb_right, s.verb_lines):>9} {s.verb_lines:4d} "
          f"{_pct(s.attributed_right, s.attributed):>9} {s.narrator:8d} "
          f"{(s.characters / s.persons if s.persons else 0):9.2f} {s.things:6d} {_pct(s.sure, s.lines):>6} "
          f"{_pct(s.sure_right, s.sure):>7} {s.seconds:6.3f}")


if __name__ == "__main__":
    raise SystemExit(main())
